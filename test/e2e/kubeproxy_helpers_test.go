/*
Copyright 2026 The gridview Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gridview/gridview/test/e2e/nftrules"
	"github.com/gridview/gridview/test/localcluster"
)

// kubeProxyTimeout bounds how long kube-proxy may take from start (or from
// a change) until its ruleset shows it; it usually takes a second or two.
const kubeProxyTimeout = 20 * time.Second

// nodeNetns gives node a network namespace of its own for the rest of the
// test. Missing nft or root fails the test with what to do: a skip would
// let the proof pass without proving anything.
func nodeNetns(t *testing.T, node string) *localcluster.NodeNetns {
	t.Helper()
	if err := localcluster.NodePreflight(binDir); err != nil {
		t.Fatalf("cannot run kube-proxy: %v", err)
	}
	n, err := cluster.NewNodeNetns(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Delete(); err != nil {
			t.Errorf("cleaning up node %s: %v", node, err)
		}
	})
	return n
}

// nodeProxierKubeconfig writes a kubeconfig that reaches kube-apiserver as
// a ServiceAccount of ns bound to system:node-proxier, the ClusterRole a
// real kube-proxy runs with, so a missing permission shows up here too.
func nodeProxierKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	return serviceAccountKubeconfig(t, ns, "kube-proxy", "system:node-proxier")
}

// serviceAccountKubeconfig writes a kubeconfig that reaches kube-apiserver
// as a ServiceAccount name of ns bound to clusterRole.
func serviceAccountKubeconfig(t *testing.T, ns, name, clusterRole string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := kubeClient.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Named after the test's namespace: bindings are cluster-wide.
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := kubeClient.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kubeClient.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
	ttl := int64(time.Hour.Seconds())
	token, err := kubeClient.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := cluster.WriteTokenKubeconfig(path, "system:serviceaccount:"+ns+":"+name, token.Status.Token); err != nil {
		t.Fatal(err)
	}
	return path
}

// startKubeProxy gives node an address and runs kube-proxy for it in its
// namespace with kubeconfig.
func startKubeProxy(t *testing.T, n *localcluster.NodeNetns, kubeconfig string) *localcluster.Process {
	t.Helper()
	if err := cluster.SetNodeInternalIP(context.Background(), n.NodeName, n.IP); err != nil {
		t.Fatal(err)
	}
	proc, err := n.StartKubeProxy(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return proc
}

// expectProgrammed waits until kube-proxy proc in n sends port of Service
// ns/name's ClusterIP to exactly the endpoint addresses want (sorted), and
// fails with the last ruleset otherwise.
func expectProgrammed(t *testing.T, n *localcluster.NodeNetns, proc *localcluster.Process, ns, name string, port int32, want []string) {
	t.Helper()
	expectProgrammedWithin(t, kubeProxyTimeout, n, proc, ns, name, port, want)
}

// expectProgrammedWithin is expectProgrammed with a timeout of its own.
func expectProgrammedWithin(t *testing.T, timeout time.Duration, n *localcluster.NodeNetns, proc *localcluster.Process, ns, name string, port int32, want []string) {
	t.Helper()
	svc, err := kubeClient.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clusterIP, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		t.Fatalf("Service %s/%s has no ClusterIP: %v", ns, name, err)
	}
	var ruleset string // the last one read, for the failure message
	what := fmt.Sprintf("kube-proxy of %s routing %s/%s (%s:%d) to %v", n.NodeName, ns, name, clusterIP, port, want)
	defer func() {
		if t.Failed() {
			t.Logf("last ruleset of %s (kube-proxy log: %s):\n%s", n.NodeName, proc.LogFile, ruleset)
		}
	}()
	localcluster.Eventually(t, timeout, what, func(ctx context.Context) error {
		// A kube-proxy that died would otherwise cost the whole timeout.
		if err := proc.Exited(); err != nil {
			return err
		}
		// nft gets a deadline of its own: cut short by the poll's, the last
		// attempt would report "context deadline exceeded" instead of what
		// kube-proxy programmed.
		nftCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		current, err := n.NftRuleset(nftCtx)
		if err != nil {
			return err
		}
		ruleset = current
		got, err := nftrules.EndpointIPs(ruleset, clusterIP, port, string(corev1.ProtocolTCP))
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("it routes to %v", got)
		}
		return nil
	})
}

// expectStillProgrammed checks, for the whole of d, that kube-proxy keeps
// routing Service ns/name to want.
func expectStillProgrammed(t *testing.T, d time.Duration, n *localcluster.NodeNetns, proc *localcluster.Process, ns, name string, port int32, want []string) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		expectProgrammedWithin(t, time.Second, n, proc, ns, name, port, want)
	}
}

// kubeProxy is a real kube-proxy running in a node's network namespace.
type kubeProxy struct {
	n    *localcluster.NodeNetns
	proc *localcluster.Process
}

// expect waits until kube-proxy sends the Service's port 80 to exactly the
// addresses given.
func (k kubeProxy) expect(t *testing.T, ns, service string, want ...string) {
	t.Helper()
	expectProgrammed(t, k.n, k.proc, ns, service, 80, slices.Sorted(slices.Values(want)))
}

// awaitSynced waits until kube-proxy has programmed its first ruleset: it
// starts its sync loop only after registering for its Node's topology
// labels.
func (k kubeProxy) awaitSynced(t *testing.T) {
	t.Helper()
	localcluster.Eventually(t, kubeProxyTimeout, "kube-proxy of "+k.n.NodeName+" programming its first ruleset", func(ctx context.Context) error {
		if err := k.proc.Exited(); err != nil {
			return err
		}
		nftCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		ruleset, err := k.n.NftRuleset(nftCtx)
		if err != nil {
			return err
		}
		if !strings.Contains(ruleset, "table ip kube-proxy {") {
			return errors.New("no kube-proxy table yet")
		}
		return nil
	})
}

// startWrappedKubeProxy runs gridview-wrapper and a kube-proxy reading
// through it in n. The Node's address is the caller's to set.
func startWrappedKubeProxy(t *testing.T, n *localcluster.NodeNetns) kubeProxy {
	t.Helper()
	w := startWrapper(t, n)
	proc, err := n.StartKubeProxy(w.kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return kubeProxy{n: n, proc: proc}
}

// proxyPair is two real kube-proxies of one node, each in a network
// namespace of its own: direct reads kube-apiserver as without gridview and
// applies the slices' hints; wrapped reads the node's views through
// gridview-wrapper.
type proxyPair struct {
	direct, wrapped kubeProxy
}

func startProxyPair(t *testing.T, ns, node string) proxyPair {
	t.Helper()
	direct := nodeNetns(t, node)
	// kube-proxy exits when its Node's addresses change, so both read one:
	// the first namespace's, which ClusterIP rules do not depend on.
	p := proxyPair{direct: kubeProxy{n: direct, proc: startKubeProxy(t, direct, nodeProxierKubeconfig(t, ns))}}
	p.wrapped = startWrappedKubeProxy(t, nodeNetns(t, node))
	return p
}

// awaitSynced waits until both kube-proxies have programmed a ruleset.
func (p proxyPair) awaitSynced(t *testing.T) {
	t.Helper()
	p.direct.awaitSynced(t)
	p.wrapped.awaitSynced(t)
}

// expect waits until both kube-proxies send the Service to exactly want.
func (p proxyPair) expect(t *testing.T, ns, service string, want ...string) {
	t.Helper()
	p.direct.expect(t, ns, service, want...)
	p.wrapped.expect(t, ns, service, want...)
}
