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
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// sliceViews returns a node's views of a Service's slices, addresses by
// slice name, checking that each is named <node>..<slice> and routes to an
// endpoint at least: a slice the node routes to none of has no view.
func (s site) sliceViews(ctx context.Context, node, service string) (map[string][]string, error) {
	views, err := framework.ServiceViews(ctx, gridview, s.NS, s.Node(node), service)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for i := range views {
		view := &views[i]
		if want := topology.Name(s.Node(node), view.Slice.Name); view.Name != want || view.NodeName != s.Node(node) || view.ServiceName != service {
			return nil, fmt.Errorf("view %s of node %s, Service %s: want %s of %s, Service %s", view.Name, view.NodeName, view.ServiceName, want, s.Node(node), service)
		}
		if len(view.Slice.Endpoints) == 0 {
			return nil, fmt.Errorf("view %s routes to no endpoint: it should not exist", view.Name)
		}
		out[view.Slice.Name] = addresses(view)
	}
	return out, nil
}

func (s site) expectSliceViews(t *testing.T, node, service string, want map[string][]string) {
	t.Helper()
	localcluster.Eventually(t, 10*time.Second, fmt.Sprintf("%s's views of %s", node, service), func(ctx context.Context) error {
		got, err := s.sliceViews(ctx, node, service)
		if err != nil {
			return err
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			return fmt.Errorf("%v, want %v", got, want)
		}
		return nil
	})
}

// expectViewEvent reads w's next event that is not a bookmark and checks it is
// of type want, for the view name, with the addresses given (none for a
// DELETED).
func expectViewEvent(t *testing.T, w watch.Interface, want watch.EventType, name string, addrs ...string) {
	t.Helper()
	e := nextEvent(t, w)
	view, ok := e.Object.(*topologyv1alpha1.NodeEndpoints)
	if !ok || e.Type != want || view.Name != name || (want != watch.Deleted && !slices.Equal(addresses(view), addrs)) {
		t.Fatalf("event %s %v, want %s of %s with %v", e.Type, e.Object, want, name, addrs)
	}
}

// One NodeEndpoints per node and source EndpointSlice: a node has a view of
// each slice it routes to an endpoint of, and a change of one slice reaches
// it as one event of that slice's view, never of the Service's others.
// The slices are written by hand: the test is about which endpoints share a
// slice, which the EndpointSlice controller decides on its own, and about
// one event per write, where a Pod's start is several.
func TestNodeEndpointsPerSlice(t *testing.T) {
	s := newRuleSite(t, framework.SiteNodes())
	ctx := context.Background()
	layout := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "layout", Annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + framework.UnitKey + `"]`}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := kubeClient.CoreV1().Services(s.NS).Create(ctx, layout, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// layout-y has no endpoint in unit a after the second write, layout-z
	// none until the fourth.
	s.writeNamedSlice(t, "layout", "layout-x", map[string]string{"10.1.0.1": "a1", "10.1.0.2": "a2", "10.1.0.3": "b1"})
	s.writeNamedSlice(t, "layout", "layout-y", map[string]string{"10.1.1.2": "a2", "10.1.1.3": "b1"})
	s.writeNamedSlice(t, "layout", "layout-z", map[string]string{"10.1.2.3": "b1"})
	s.expectSliceViews(t, "a1", "layout", map[string][]string{"layout-x": {"10.1.0.1", "10.1.0.2"}, "layout-y": {"10.1.1.2"}})
	s.expectSliceViews(t, "b1", "layout", map[string][]string{"layout-x": {"10.1.0.3"}, "layout-y": {"10.1.1.3"}, "layout-z": {"10.1.2.3"}})
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	if _, err := views.Get(ctx, topology.Name(s.Node("a1"), "layout-z"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a1's view of layout-z, which it routes to no endpoint of: %v, want 404", err)
	}
	// A Service without slices has no view at all (checked at the end,
	// once the feed has applied later changes).
	empty := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "empty"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := kubeClient.CoreV1().Services(s.NS).Create(ctx, empty, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	list, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1")})
	if err != nil {
		t.Fatal(err)
	}
	w, err := views.Watch(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1"), ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	layoutX, layoutY, layoutZ := topology.Name(s.Node("a1"), "layout-x"), topology.Name(s.Node("a1"), "layout-y"), topology.Name(s.Node("a1"), "layout-z")
	// Each step's event is the next one: an event for another slice in
	// between would fail the step after.
	s.writeNamedSlice(t, "layout", "layout-x", map[string]string{"10.1.0.1": "a1", "10.1.0.2": "a2", "10.1.0.3": "b1", "10.1.0.4": "a2"})
	expectViewEvent(t, w, watch.Modified, layoutX, "10.1.0.1", "10.1.0.2", "10.1.0.4")
	s.writeNamedSlice(t, "layout", "layout-y", map[string]string{"10.1.1.2": "b1", "10.1.1.3": "b1"})
	expectViewEvent(t, w, watch.Deleted, layoutY)
	s.writeNamedSlice(t, "layout", "layout-z", map[string]string{"10.1.2.1": "a1", "10.1.2.3": "b1"})
	expectViewEvent(t, w, watch.Added, layoutZ, "10.1.2.1")
	if err := kubeClient.DiscoveryV1().EndpointSlices(s.NS).Delete(ctx, "layout-z", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectViewEvent(t, w, watch.Deleted, layoutZ)
	s.expectSliceViews(t, "a1", "layout", map[string][]string{"layout-x": {"10.1.0.1", "10.1.0.2", "10.1.0.4"}})
	s.expectSliceViews(t, "b1", "layout", map[string][]string{"layout-x": {"10.1.0.3"}, "layout-y": {"10.1.1.2", "10.1.1.3"}})
	if list, err := views.List(ctx, metav1.ListOptions{FieldSelector: "serviceName=empty"}); err != nil || len(list.Items) != 0 {
		t.Errorf("views of a Service without slices: %v, %v; want none", list, err)
	}
}

// NodeEndpoints carry their Service's labels, whatever their slice's: label
// selectors select by Service, alone or with the field selectors. grid-y is
// written by hand, with labels other than its Service's: the EndpointSlice
// controller copies the Service's labels to the slices it writes.
func TestNodeEndpointsLabelSelectors(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	s.writeNamedSlice(t, "grid", "grid-y", map[string]string{"10.1.1.3": "b1"})
	patch := []byte(`{"metadata":{"labels":{"tier":"edge"}}}`)
	if _, err := kubeClient.CoreV1().Services(s.NS).Patch(ctx, "grid", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	view := func(node, service string) string { return s.view(t, node, service) }
	for _, tc := range []struct {
		name string
		opts metav1.ListOptions
		want []string
	}{
		// grid-y's only endpoint is in unit b: a1 and a2 have no view of it.
		{name: "the Service's new label", opts: metav1.ListOptions{LabelSelector: "tier=edge"},
			want: []string{view("a1", "grid"), view("a2", "grid"), view("b1", "grid"), topology.Name(s.Node("b1"), "grid-y")}},
		{name: "a label and a node", opts: metav1.ListOptions{LabelSelector: "app=grid,tier=edge", FieldSelector: "nodeName=" + s.Node("b1")},
			want: []string{view("b1", "grid"), topology.Name(s.Node("b1"), "grid-y")}},
		{name: "a set-based selector and a node", opts: metav1.ListOptions{LabelSelector: "app notin (grid)", FieldSelector: "nodeName=" + s.Node("a1")},
			want: []string{view("a1", "ordered"), view("a1", "plain")}},
		{name: "a label and a Service", opts: metav1.ListOptions{LabelSelector: "app=plain", FieldSelector: "serviceName=plain"},
			want: []string{view("a1", "plain"), view("a2", "plain"), view("b1", "plain")}},
		{name: "a slice's label is not a view's", opts: metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=grid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			localcluster.Eventually(t, 10*time.Second, "the views selected", func(ctx context.Context) error {
				list, err := views.List(ctx, tc.opts)
				if err != nil {
					return err
				}
				var got []string
				for _, view := range list.Items {
					got = append(got, view.Name)
					if view.Labels["app"] != view.ServiceName {
						return fmt.Errorf("%s has labels %v, not those of its Service %s", view.Name, view.Labels, view.ServiceName)
					}
				}
				slices.Sort(got)
				if want := slices.Sorted(slices.Values(tc.want)); !slices.Equal(got, want) {
					return fmt.Errorf("%v, want %v", got, want)
				}
				return nil
			})
		})
	}
}

// One endpoint's readiness flipped in a Service of ten slices, which prunes
// nothing, reaches a node's watcher as one event: that slice's view, about a
// tenth of the Service, as kube-proxy gets it from EndpointSlices. Written by
// hand: the EndpointSlice controller would need 901 Pods for ten slices.
func TestNodeEndpointsOneEndpointFlipSendsOneSlice(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "wide"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := kubeClient.CoreV1().Services(s.NS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const slicesOfWide, perSlice = 10, 50
	nodes := []string{"a1", "a2", "b1"}
	sliceOf := func(i int, notReady int) *discoveryv1.EndpointSlice {
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: fmt.Sprintf("wide-%d", i), Labels: map[string]string{discoveryv1.LabelServiceName: "wide"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
		}
		for e := range perSlice {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
				Addresses: []string{fmt.Sprintf("10.7.%d.%d", i, e+1)}, NodeName: ptr.To(s.Node(nodes[e%len(nodes)])),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(e != notReady)},
			})
		}
		return slice
	}
	endpointSlices := kubeClient.DiscoveryV1().EndpointSlices(s.NS)
	for i := range slicesOfWide {
		if _, err := endpointSlices.Create(ctx, sliceOf(i, -1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	selector := "nodeName=" + s.Node("b1") + ",serviceName=wide"
	var list *topologyv1alpha1.NodeEndpointsList
	localcluster.Eventually(t, 10*time.Second, "b1's views of every slice of wide", func(ctx context.Context) error {
		var err error
		if list, err = views.List(ctx, metav1.ListOptions{FieldSelector: selector}); err == nil && len(list.Items) != slicesOfWide {
			err = fmt.Errorf("%d views", len(list.Items))
		}
		return err
	})
	whole := 0
	for i := range list.Items {
		whole += encodedSize(t, &list.Items[i])
	}
	w, err := views.Watch(ctx, metav1.ListOptions{FieldSelector: selector, ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	current, err := endpointSlices.Get(ctx, "wide-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	flipped := sliceOf(3, 7)
	flipped.ResourceVersion = current.ResourceVersion
	if _, err := endpointSlices.Update(ctx, flipped, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, w)
	view, ok := e.Object.(*topologyv1alpha1.NodeEndpoints)
	if !ok || e.Type != watch.Modified || view.Name != topology.Name(s.Node("b1"), "wide-3") || len(view.Slice.Endpoints) != perSlice ||
		ptr.Deref(view.Slice.Endpoints[7].Conditions.Ready, true) {
		t.Fatalf("event %s %v, want MODIFIED of b1's view of wide-3 with endpoint 7 not ready", e.Type, e.Object)
	}
	sent := encodedSize(t, view)
	t.Logf("one endpoint flipped: one event of %d bytes; b1's views of the whole Service: %d bytes", sent, whole)
	if sent > whole/5 {
		t.Errorf("the event holds %d bytes of b1's %d of the Service: more than its one slice", sent, whole)
	}
	quiet := time.After(time.Second)
	for {
		select {
		case e := <-w.ResultChan():
			if e.Type != watch.Bookmark {
				t.Fatalf("a second event for one endpoint's flip: %s %v", e.Type, e.Object)
			}
		case <-quiet:
			return
		}
	}
}

// encodedSize is how many bytes of JSON an object is.
func encodedSize(t *testing.T, view *topologyv1alpha1.NodeEndpoints) int {
	t.Helper()
	data, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}
