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
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/topology"
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
	// ips holds, by Service and node, the IPs of the Pods runPods ran, in
	// the order it ran them.
	ips map[string]map[string][]string
}

func newRuleSite(t *testing.T, nodes map[string]map[string]string) ruleSite {
	t.Helper()
	s := ruleSite{site: site{framework.Site{NS: testNamespace(t)}}, ips: map[string]map[string][]string{}}
	s.nodes = s.CreateNodes(t, kubeClient, nodes)
	// Registered after CreateNodes, so that it runs first: a Node's Pods go
	// before it.
	t.Cleanup(func() { deleteNamespaceAndPods(t, s.NS) })
	return s
}

// label sets a label of one of the site's nodes, its value prefixed as
// newRuleSite prefixes them.
func (s ruleSite) label(t *testing.T, name, key, value string) {
	t.Helper()
	s.nodes[name][key] = s.Unit(value)
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, s.nodes[name][key])
	if _, err := kubeClient.CoreV1().Nodes().Patch(context.Background(), s.Node(name), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createService creates a Service of port 80 in the site's namespace,
// labelled and selecting app=<name>, the Pods runPods runs for it, on their
// port.
func (s ruleSite) createService(t *testing.T, name string, mutate func(*corev1.Service)) {
	t.Helper()
	if err := s.tryCreateService(name, mutate); err != nil {
		t.Fatal(err)
	}
}

// tryCreateService is createService for a test that expects kube-apiserver
// may refuse the Service.
func (s ruleSite) tryCreateService(name string, mutate func(*corev1.Service)) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}, Annotations: map[string]string{}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(echoPort)}}},
	}
	mutate(svc)
	_, err := kubeClient.CoreV1().Services(s.NS).Create(context.Background(), svc, metav1.CreateOptions{})
	return err
}

// podOn is one Pod of a Service the test runs, on a node of the site.
type podOn struct {
	node  string
	ready bool
}

// podName names the Service's i-th Pod on node: <service>-<node>, then
// <service>-<node>-2 and on.
func podName(service, node string, i int) string {
	if i == 0 {
		return service + "-" + node
	}
	return fmt.Sprintf("%s-%s-%d", service, node, i+1)
}

// runPods runs one Pod per entry for a Service (label app=<service>, which
// the Service must select), named by podName and bound to its node, waits
// until kwok has run them, makes those not ready so (the condition kubelet
// would write after a failed readiness probe), and waits until the
// EndpointSlice controller has written every one, ready or not. podIPs
// reads their IPs.
func (s ruleSite) runPods(t *testing.T, service string, pods ...podOn) {
	t.Helper()
	ctx := context.Background()
	if s.ips[service] == nil {
		s.ips[service] = map[string][]string{}
	}
	names := make([]string, len(pods))
	earlier := map[string]int{}
	for i, p := range pods {
		names[i] = podName(service, p.node, len(s.ips[service][p.node])+earlier[p.node])
		earlier[p.node]++
		if _, err := kubeClient.CoreV1().Pods(s.NS).Create(ctx, podOnNode(names[i], service, s.Node(p.node)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ips := make([]string, len(pods))
	localcluster.Eventually(t, time.Minute, "the Pods of "+service+" running", func(ctx context.Context) error {
		for i, name := range names {
			got, err := kubeClient.CoreV1().Pods(s.NS).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got.Status.Phase != corev1.PodRunning || got.Status.PodIP == "" {
				return fmt.Errorf("Pod %s: %s, IP %q", got.Name, got.Status.Phase, got.Status.PodIP)
			}
			ips[i] = got.Status.PodIP
		}
		return nil
	})
	want := map[string]bool{}
	for i, p := range pods {
		s.ips[service][p.node] = append(s.ips[service][p.node], ips[i])
		if !p.ready {
			s.patchReady(t, names[i], false)
		}
		want[ips[i]] = p.ready
	}
	s.awaitWritten(t, service, want)
}

// podIPs lists, sorted, the IPs of the Service's Pods runPods ran on the
// nodes given.
func (s ruleSite) podIPs(t *testing.T, service string, nodes ...string) []string {
	t.Helper()
	ips := []string{}
	for _, node := range nodes {
		if len(s.ips[service][node]) == 0 {
			t.Fatalf("no Pod of %s runs on %s", service, node)
		}
		ips = append(ips, s.ips[service][node]...)
	}
	slices.Sort(ips)
	return ips
}

// onlyPod names the Service's one Pod on node, and its IP.
func (s ruleSite) onlyPod(t *testing.T, service, node string) (name, ip string) {
	t.Helper()
	if ips := s.ips[service][node]; len(ips) != 1 {
		t.Fatalf("%d Pods of %s run on %s, want one", len(ips), service, node)
	}
	return podName(service, node, 0), s.ips[service][node][0]
}

// setReady sets the Ready condition of the Service's one Pod on node, as
// kubelet does when the Pod's readiness probe changes, and waits until the
// EndpointSlice controller has written it.
func (s ruleSite) setReady(t *testing.T, service, node string, ready bool) {
	t.Helper()
	name, ip := s.onlyPod(t, service, node)
	s.patchReady(t, name, ready)
	s.awaitWritten(t, service, map[string]bool{ip: ready})
}

func (s ruleSite) patchReady(t *testing.T, pod string, ready bool) {
	t.Helper()
	if err := localcluster.SetPodReady(context.Background(), kubeClient, s.NS, pod, ready); err != nil {
		t.Fatal(err)
	}
}

// deletePod deletes the Service's one Pod on node at once, as after its
// kubelet confirmed it stopped, and waits until the EndpointSlice
// controller has taken it out.
func (s ruleSite) deletePod(t *testing.T, service, node string) {
	t.Helper()
	name, ip := s.onlyPod(t, service, node)
	if err := kubeClient.CoreV1().Pods(s.NS).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	delete(s.ips[service], node)
	localcluster.Eventually(t, time.Minute, "the EndpointSlice controller taking "+name+" out", func(ctx context.Context) error {
		written, err := s.writtenReadiness(ctx, service)
		if _, ok := written[ip]; err == nil && ok {
			err = fmt.Errorf("%s is still an endpoint", ip)
		}
		return err
	})
}

// awaitWritten waits until the EndpointSlice controller has written the
// Service's endpoints of the addresses given, ready as given.
func (s ruleSite) awaitWritten(t *testing.T, service string, want map[string]bool) {
	t.Helper()
	localcluster.Eventually(t, time.Minute, "the EndpointSlice controller writing the Pods of "+service, func(ctx context.Context) error {
		written, err := s.writtenReadiness(ctx, service)
		if err != nil {
			return err
		}
		for ip, ready := range want {
			if got, ok := written[ip]; !ok || got != ready {
				return fmt.Errorf("the Pod of %s: written %t, ready %t; want ready %t", ip, ok, got, ready)
			}
		}
		return nil
	})
}

// writtenReadiness maps the addresses of the Service's EndpointSlices to
// their readiness.
func (s ruleSite) writtenReadiness(ctx context.Context, service string) (map[string]bool, error) {
	list, err := kubeClient.DiscoveryV1().EndpointSlices(s.NS).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return nil, err
	}
	ready := map[string]bool{}
	for _, slice := range list.Items {
		for _, ep := range slice.Endpoints {
			for _, addr := range ep.Addresses {
				ready[addr] = ptr.Deref(ep.Conditions.Ready, true)
			}
		}
	}
	return ready, nil
}

// controllerSlice is the name of the one EndpointSlice the EndpointSlice
// controller writes for a Service of at most 100 Pods.
func (s ruleSite) controllerSlice(t *testing.T, service string) string {
	t.Helper()
	list, err := kubeClient.DiscoveryV1().EndpointSlices(s.NS).List(context.Background(), metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + service + "," + discoveryv1.LabelManagedBy + "=" + endpointSliceController})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("the EndpointSlice controller wrote %d slices of %s, want one", len(list.Items), service)
	}
	return list.Items[0].Name
}

// endpointSliceController is the managed-by label value of the slices the
// EndpointSlice controller writes.
const endpointSliceController = "endpointslice-controller.k8s.io"

// view is the name of a node's view of the one EndpointSlice the
// EndpointSlice controller writes for a Service.
func (s ruleSite) view(t *testing.T, node, service string) string {
	t.Helper()
	return topology.Name(s.Node(node), s.controllerSlice(t, service))
}

// expectNep waits until the node's views of the Service hold exactly the
// addresses given, ready or not, and `kubectl get nep` names the rule in
// their TOPOLOGY; with no addresses, until the node has no view of it.
func (s ruleSite) expectNep(t *testing.T, node, service, rule string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	localcluster.Eventually(t, 10*time.Second, fmt.Sprintf("%s's view of %s of %v, TOPOLOGY saying %q", node, service, want, rule), func(ctx context.Context) error {
		// A deadline of its own, so that the last attempt reports what it
		// found rather than the poll's deadline.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		got, err := framework.ServiceAddresses(ctx, gridview, s.NS, s.Node(node), service)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("the views hold %v", got)
		}
		out, err := kubectl(t, "get", "nep", "-n", s.NS, "--field-selector", "nodeName="+s.Node(node))
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
