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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// zoneKey is the node label of native topology, which kube-proxy reads too.
const zoneKey = corev1.LabelTopologyZone

// ruleSite is a site whose nodes the test lays out itself: by short name,
// their labels. Label values are prefixed with the namespace, as site's
// units are, so that no other test's nodes share them.
type ruleSite struct {
	site
	nodes map[string]map[string]string
}

func newRuleSite(t *testing.T, nodes map[string]map[string]string) ruleSite {
	t.Helper()
	s := ruleSite{site: site{ns: testNamespace(t)}, nodes: map[string]map[string]string{}}
	for name, labels := range nodes {
		s.nodes[name] = map[string]string{}
		for key, value := range labels {
			s.nodes[name][key] = s.unit(value)
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.node(name), Labels: s.nodes[name]}}
		if _, err := kubeClient.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			deleteNamespaceAndWait(t, s.ns, 90*time.Second)
			_ = kubeClient.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
		})
	}
	return s
}

// label sets a label of one of the site's nodes, its value prefixed as
// newRuleSite prefixes them.
func (s ruleSite) label(t *testing.T, name, key, value string) {
	t.Helper()
	s.nodes[name][key] = s.unit(value)
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, s.nodes[name][key])
	if _, err := kubeClient.CoreV1().Nodes().Patch(context.Background(), s.node(name), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createService creates a Service of port 80 in the site's namespace.
func (s ruleSite) createService(t *testing.T, name string, mutate func(*corev1.Service)) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}, Annotations: map[string]string{}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	mutate(svc)
	if _, err := kubeClient.CoreV1().Services(s.ns).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// endpoint is one endpoint of a slice the test writes, on a node of the site.
type endpoint struct {
	addr, node string
	ready      bool
}

// applySlice writes the one EndpointSlice of a Service, each endpoint in
// the zone of its node, with the hints the EndpointSlice controller writes
// for trafficDistribution (k8s.io/endpointslice/trafficdist,
// preferCloseHeuristic): a ready endpoint is hinted for its own zone, and
// with PreferSameNode for its own node too; a not-ready one gets none. An
// empty distribution writes no hints.
func (s ruleSite) applySlice(t *testing.T, service, distribution string, endpoints ...endpoint) {
	t.Helper()
	slice := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Name: framework.SliceName(service), Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
	}
	for _, ep := range endpoints {
		e := discoveryv1.Endpoint{
			Addresses: []string{ep.addr}, NodeName: ptr.To(s.node(ep.node)),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ep.ready)},
		}
		if zone, ok := s.nodes[ep.node][zoneKey]; ok {
			e.Zone = ptr.To(zone)
		}
		if ep.ready && distribution != "" && e.Zone != nil {
			e.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: *e.Zone}}}
			if distribution == corev1.ServiceTrafficDistributionPreferSameNode {
				e.Hints.ForNodes = []discoveryv1.ForNode{{Name: *e.NodeName}}
			}
		}
		slice.Endpoints = append(slice.Endpoints, e)
	}
	data, err := json.Marshal(slice)
	if err != nil {
		t.Fatal(err)
	}
	// Server-side apply: one call creates or replaces it, endpoints being an
	// atomic list.
	if _, err := kubeClient.DiscoveryV1().EndpointSlices(s.ns).Patch(context.Background(), slice.Name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "e2e", Force: ptr.To(true)}); err != nil {
		t.Fatalf("applying the EndpointSlice of %s/%s: %v", s.ns, service, err)
	}
}

// podOn is one Pod of a Service the test runs, on a node of the site.
type podOn struct {
	node  string
	ready bool
}

// runPods runs one Pod per entry for a Service (label app=<service>, which
// the Service must select), named <service>-<node> and bound to its node,
// waits until kwok has run them, makes those not ready so (the condition
// kubelet would write after a failed readiness probe), and waits until the
// EndpointSlice controller has written every one, ready or not. It returns
// their IPs by node.
func (s ruleSite) runPods(t *testing.T, service string, pods ...podOn) map[string]string {
	t.Helper()
	ctx := context.Background()
	for _, p := range pods {
		if _, err := kubeClient.CoreV1().Pods(s.ns).Create(ctx, podOnNode(service+"-"+p.node, service, s.node(p.node)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ips := map[string]string{}
	eventually(t, time.Minute, "the Pods of "+service+" running", func(ctx context.Context) error {
		for _, p := range pods {
			got, err := kubeClient.CoreV1().Pods(s.ns).Get(ctx, service+"-"+p.node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got.Status.Phase != corev1.PodRunning || got.Status.PodIP == "" {
				return fmt.Errorf("Pod %s: %s, IP %q", got.Name, got.Status.Phase, got.Status.PodIP)
			}
			ips[p.node] = got.Status.PodIP
		}
		return nil
	})
	for _, p := range pods {
		if !p.ready {
			s.setReady(t, service, p.node, false)
		}
	}
	eventually(t, time.Minute, "the EndpointSlice controller writing the Pods of "+service, func(ctx context.Context) error {
		list, err := kubeClient.DiscoveryV1().EndpointSlices(s.ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
		if err != nil {
			return err
		}
		ready := map[string]bool{}
		for _, slice := range list.Items {
			for _, ep := range slice.Endpoints {
				for _, addr := range ep.Addresses {
					ready[addr] = ptr.Deref(ep.Conditions.Ready, true)
				}
			}
		}
		for _, p := range pods {
			if got, ok := ready[ips[p.node]]; !ok || got != p.ready {
				return fmt.Errorf("the Pod on %s (%s): written %t, ready %t; want ready %t", p.node, ips[p.node], ok, got, p.ready)
			}
		}
		return nil
	})
	return ips
}

// setReady sets the Ready condition of the Service's Pod on node, as kubelet
// does when the Pod's readiness probe changes.
func (s ruleSite) setReady(t *testing.T, service, node string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q}]}}`, corev1.PodReady, status)
	if _, err := kubeClient.CoreV1().Pods(s.ns).Patch(context.Background(), service+"-"+node, types.StrategicMergePatchType, []byte(patch),
		metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

// expectNep waits until the node's views of the Service hold exactly the
// addresses given, ready or not, and `kubectl get nep` names the rule in
// their TOPOLOGY; with no addresses, until the node has no view of it.
func (s ruleSite) expectNep(t *testing.T, node, service, rule string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	eventually(t, 10*time.Second, fmt.Sprintf("%s's view of %s of %v, TOPOLOGY saying %q", node, service, want, rule), func(ctx context.Context) error {
		// A deadline of its own, so that the last attempt reports what it
		// found rather than the poll's deadline.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		got, err := framework.ServiceAddresses(ctx, gridview, s.ns, s.node(node), service)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("the views hold %v", got)
		}
		out, err := kubectl(t, "get", "nep", "-n", s.ns, "--field-selector", "nodeName="+s.node(node))
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		// Columns NAME, NODE, SERVICE: a view of any slice of the Service.
		var row string
		for _, line := range strings.Split(out, "\n") {
			if fields := strings.Fields(line); len(fields) > 2 && fields[2] == service {
				row = line
			}
		}
		switch {
		case len(want) == 0 && row != "":
			return fmt.Errorf("kubectl shows the view: %s", row)
		case len(want) > 0 && !strings.Contains(row, rule):
			return fmt.Errorf("kubectl's row does not say %q: %q in\n%s", rule, row, out)
		}
		return nil
	})
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
	eventually(t, kubeProxyTimeout, "kube-proxy of "+k.n.NodeName+" programming its first ruleset", func(ctx context.Context) error {
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
