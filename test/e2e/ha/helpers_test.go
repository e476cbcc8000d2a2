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

package ha

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

const unitKey = "superedge.io/nodeunit"

// testNamespace creates a namespace for one test and deletes it afterwards.
func testNamespace(t *testing.T) string {
	t.Helper()
	return framework.Namespace(t, kubeClient, "ha-")
}

// eventually waits for check to succeed; see localcluster.Eventually.
func eventually(t *testing.T, timeout time.Duration, what string, check func(context.Context) error) {
	t.Helper()
	localcluster.Eventually(t, timeout, what, check)
}

// site is a small edge cluster of the test's own: nodes <ns>-a1, <ns>-a2 in
// unit a and <ns>-b1 in unit b, and the Service "grid" (any-match on the
// unit) with an endpoint on every node.
type site struct {
	ns string
}

func (s site) node(name string) string { return s.ns + "-" + name }
func (s site) unit(name string) string { return s.ns + "-" + name }

func newSite(t *testing.T) site {
	t.Helper()
	ctx := context.Background()
	s := site{ns: testNamespace(t)}
	for name, unit := range map[string]string{"a1": "a", "a2": "a", "b1": "b"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.node(name), Labels: map[string]string{unitKey: s.unit(unit)}}}
		if _, err := kubeClient.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kubeClient.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
		})
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "grid", Annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + unitKey + `"]`}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := kubeClient.CoreV1().Services(s.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.writeSlice(t, map[string]string{"10.1.0.1": "a1", "10.1.0.2": "a2", "10.1.0.3": "b1"})
	return s
}

// relabel moves a node of the site to another unit.
func (s site) relabel(ctx context.Context, client kubernetes.Interface, node, unit string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, unitKey, s.unit(unit))
	_, err := client.CoreV1().Nodes().Patch(ctx, s.node(node), types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// writeSlice creates or replaces the one EndpointSlice of "grid", with ready
// endpoints by address on the site's nodes.
func (s site) writeSlice(t *testing.T, endpoints map[string]string) {
	t.Helper()
	onNodes := map[string]string{}
	for address, node := range endpoints {
		onNodes[address] = s.node(node)
	}
	framework.WriteEndpointSlice(t, kubeClient, s.ns, "grid", onNodes)
}

// addresses returns a view's endpoint addresses, sorted.
func addresses(view *topologyv1alpha1.NodeEndpoints) []string { return framework.Addresses(view) }

// gridView is the name of a node's view of the one EndpointSlice of "grid".
func (s site) gridView(node string) string {
	return topology.Name(s.node(node), framework.SliceName("grid"))
}

// content is what a view says, without its resourceVersion, which differs
// per replica by design.
func content(view *topologyv1alpha1.NodeEndpoints) string {
	return fmt.Sprintf("%s %s %v %v", view.Name, view.Topology.MatchedKey, view.Labels, addresses(view))
}

// viewsIn lists every view of ns through client, by name, as content.
func viewsIn(ctx context.Context, client versioned.Interface, ns string) (map[string]string, error) {
	list, err := client.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range list.Items {
		out[list.Items[i].Name] = content(&list.Items[i])
	}
	return out, nil
}

// gridAddresses is the addresses a node routes to of "grid" through client:
// those of its views of grid's slices, none when it routes to none.
func (s site) gridAddresses(ctx context.Context, client versioned.Interface, node string) ([]string, error) {
	return framework.ServiceAddresses(ctx, client, s.ns, s.node(node), "grid")
}

// directClient talks to one replica, bypassing the aggregator. The replica
// forwards reads of NodeEndpoints to the leader.
func directClient(t *testing.T, r *localcluster.GridviewReplica) versioned.Interface {
	t.Helper()
	client, err := versioned.NewForConfig(r.Config())
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// ownViewsClient reads one replica's own views: a replica serves a read
// another one forwarded to it itself, and a caller may mark its reads so.
func ownViewsClient(t *testing.T, r *localcluster.GridviewReplica) versioned.Interface {
	t.Helper()
	config := r.Config()
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			req = req.Clone(req.Context())
			req.Header.Set("X-Gridview-Forwarded-By", "e2e-ha")
			return rt.RoundTrip(req)
		})
	})
	client, err := versioned.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// metric reads one sample of a replica's /metrics, named with its labels as
// /metrics prints them.
func metric(ctx context.Context, r *localcluster.GridviewReplica, name string) (float64, error) {
	body, err := metricsText(ctx, r)
	if err != nil {
		return 0, err
	}
	value, err := localcluster.MetricSample(body, name)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", r.Name, err)
	}
	return value, nil
}

// metricsText reads a replica's /metrics, unthrottled: tests poll it.
func metricsText(ctx context.Context, r *localcluster.GridviewReplica) (string, error) {
	cfg := r.Config()
	cfg.QPS, cfg.Burst = -1, 0
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	body, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("GET /metrics of %s: %w", r.Name, err)
	}
	return string(body), nil
}

// informerAndList summarizes an informer's views and a list's by name, each
// as its content. Not by resourceVersion: a view shared by many nodes
// carries in a list an upper bound of the one its watch event carried
// (docs/architecture.md), so that would compare numbering, not views.
func informerAndList(store cache.Store, list *topologyv1alpha1.NodeEndpointsList) (got, want map[string]string) {
	want = map[string]string{}
	for i := range list.Items {
		want[list.Items[i].Name] = content(&list.Items[i])
	}
	got = map[string]string{}
	for _, obj := range store.List() {
		view := obj.(*topologyv1alpha1.NodeEndpoints)
		got[view.Name] = content(view)
	}
	return got, want
}

// caughtUp waits until follower serves the views of the site that leader
// serves: it replicates the leader's inputs, and one that had not caught up
// would rightly answer a resourceVersion it has not reached with a relist.
func (s site) caughtUp(t *testing.T, leader, follower *localcluster.GridviewReplica) {
	t.Helper()
	eventually(t, 20*time.Second, follower.Name+" serving the views "+leader.Name+" serves", func(ctx context.Context) error {
		a, errA := viewsIn(ctx, ownViewsClient(t, leader), s.ns)
		b, errB := viewsIn(ctx, ownViewsClient(t, follower), s.ns)
		if err := errors.Join(errA, errB); err != nil {
			return err
		}
		if !maps.Equal(a, b) {
			return fmt.Errorf("%s %v\n%s %v", leader.Name, a, follower.Name, b)
		}
		return nil
	})
}
