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

package wrapper

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/testutil"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	gridviewfake "github.com/gridview/gridview/generated/clientset/versioned/fake"
	"github.com/gridview/gridview/pkg/topology"
)

func testView(node, service, slice string) *topologyv1alpha1.NodeEndpoints {
	return &topologyv1alpha1.NodeEndpoints{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: topology.Name(node, slice)},
		NodeName:    node,
		ServiceName: service,
		Slice: topologyv1alpha1.NodeEndpointSlice{
			Name: slice, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
		},
	}
}

// fakeClients reads client-go's fake clientsets, which ignore field
// selectors and cannot stream lists.
func fakeClients(kube *kubefake.Clientset, gridview *gridviewfake.Clientset) *upstreamClients {
	return &upstreamClients{
		views:        fakeCollection(&topologyv1alpha1.NodeEndpoints{}, gridview, gridview.TopologyV1alpha1().NodeEndpoints("")),
		services:     fakeCollection(&corev1.Service{}, kube, kube.CoreV1().Services("")),
		nodes:        fakeCollection(&corev1.Node{}, kube, kube.CoreV1().Nodes()),
		serviceCIDRs: fakeCollection(&networkingv1.ServiceCIDR{}, kube, kube.NetworkingV1().ServiceCIDRs()),
		apiEndpoints: fakeCollection(&corev1.Endpoints{}, kube, kube.CoreV1().Endpoints("default")),
		apiSlices:    fakeCollection(&discoveryv1.EndpointSlice{}, kube, kube.DiscoveryV1().EndpointSlices("default")),
		version:      func(context.Context) error { return nil },
	}
}

// lister is what a typed client gives a collection.
type lister[L runtime.Object] interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}

func fakeCollection[L runtime.Object](expected runtime.Object, clientset any, typed lister[L]) collection {
	return collection{
		name: fmt.Sprintf("%T", expected), expected: expected, client: clientset,
		list:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return typed.List(ctx, o) },
		watch: typed.Watch,
	}
}

// servedSlices is the names of the EndpointSlices the state serves, which
// the cache saves.
func servedSlices(state *State) []string {
	var names []string
	_, objects := state.Snapshot()
	for _, obj := range objects {
		if slice, ok := obj.(*discoveryv1.EndpointSlice); ok {
			names = append(names, slice.Name)
		}
	}
	return names
}

// The wrapper asks for its node's views only; another node's, from a server
// that sends it anyway (the fake ignores the field selector), is neither
// served nor cached, and counted. Nor does it take this node's view of the
// same slice with it when it goes.
func TestUpstreamRejectsOtherNodesViews(t *testing.T) {
	RegisterMetrics()
	rejected := func() float64 {
		t.Helper()
		value, err := testutil.GetCounterMetricValue(rejectedViews.WithLabelValues("foreign_node"))
		if err != nil {
			t.Fatal(err)
		}
		return value
	}
	before := rejected()
	gridview := gridviewfake.NewSimpleClientset(testView("edge-1", "echo", "echo-a"), testView("edge-2", "web", "web-a"))
	state := NewState(1, nil)
	u := newUpstream(fakeClients(kubefake.NewClientset(), gridview), "edge-1", state, nil)
	ctx := t.Context()
	go u.sync(ctx)
	waitUntil := func(what string, done func() bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) { return done(), nil })
		if err != nil {
			t.Fatalf("%s: served slices %v, %v views rejected", what, servedSlices(state), rejected()-before)
		}
	}
	waitUntil("synced, edge-2's view rejected", func() bool { return state.Synced() && rejected()-before == 1 })
	if got := servedSlices(state); !slices.Equal(got, []string{"echo-a"}) {
		t.Errorf("served slices %v, want this node's only", got)
	}

	// NodeEndpoints are read-only: the views change in the fake's tracker.
	views := gridview.Tracker()
	resource := topologyv1alpha1.SchemeGroupVersion.WithResource("nodeendpoints")
	if err := views.Create(resource, testView("edge-2", "echo", "echo-a"), "demo"); err != nil {
		t.Fatal(err)
	}
	waitUntil("edge-2's view of echo rejected", func() bool { return rejected()-before == 2 })
	if err := views.Delete(resource, "demo", topology.Name("edge-2", "echo-a")); err != nil {
		t.Fatal(err)
	}
	// Handled in order: once this one is rejected, the deletion has been seen.
	if err := views.Create(resource, testView("edge-3", "db", "db-a"), "demo"); err != nil {
		t.Fatal(err)
	}
	waitUntil("edge-3's view rejected", func() bool { return rejected()-before == 3 })
	if got := servedSlices(state); !slices.Equal(got, []string{"echo-a"}) {
		t.Errorf("after another node's view of echo came and went: served slices %v, want echo-a", got)
	}
	if _, err := state.Get(endpoints, keyOf(testService("echo", "", nil))); err != nil {
		t.Errorf("the Endpoints of echo: %v", err)
	}

	// This node's view turning into another's is no longer served.
	moved := testView("edge-1", "echo", "echo-a")
	moved.NodeName = "edge-2"
	if err := views.Update(resource, moved, "demo"); err != nil {
		t.Fatal(err)
	}
	waitUntil("the moved view rejected and no longer served", func() bool { return rejected()-before == 4 && len(servedSlices(state)) == 0 })
}

// The wrapper reads its upstream in protobuf, NodeEndpoints included, and
// so does the generated gridview clientset asked for it: its scheme's codecs
// hold the protobuf serializer.
func TestUpstreamIsReadInProtobuf(t *testing.T) {
	objects := map[string][]runtime.Object{
		"nodeendpoints": {testView("edge-1", "echo", "echo-a")},
		"services":      {testService("echo", "10.96.0.10", nil)},
	}
	fake := newFakeUpstream(func(path string) []runtime.Object { return objects[path[strings.LastIndexByte(path, '/')+1:]] })
	server := httptest.NewServer(fake)
	defer server.Close()
	// Before the server closes, which waits for the watches to end.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	state := NewState(1, nil)
	u, err := NewUpstream(&rest.Config{Host: server.URL}, "edge-1", state, nil)
	if err != nil {
		t.Fatal(err)
	}
	go u.sync(ctx)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return state.Synced(), nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := servedSlices(state); !slices.Equal(got, []string{"echo-a"}) {
		t.Errorf("served slices %v", got)
	}
	for _, resource := range []string{"nodeendpoints", "services", "nodes", "servicecidrs", "endpoints", "endpointslices"} {
		if got, _ := fake.mediaTypes.Load(resource); got != runtime.ContentTypeProtobuf {
			t.Errorf("%s read as %v, want protobuf", resource, got)
		}
	}

	fake.mediaTypes.Clear()
	client, err := versioned.NewForConfig(&rest.Config{Host: server.URL, ContentConfig: rest.ContentConfig{
		AcceptContentTypes: upstreamContentTypes, ContentType: runtime.ContentTypeProtobuf,
	}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := client.TopologyV1alpha1().NodeEndpoints("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.mediaTypes.Load("nodeendpoints"); got != runtime.ContentTypeProtobuf || len(list.Items) != 1 || list.Items[0].Slice.Name != "echo-a" {
		t.Errorf("the gridview clientset read %v in %v", list, got)
	}
}

// A view not named <node>..<slice> is neither served nor cached, and
// counted: views are kept by name and served by slice, so a second name for
// a slice made the deletion of one take the other's slice, and deleting both
// dereferenced nil.
func TestUpstreamRejectsMisnamedViews(t *testing.T) {
	RegisterMetrics()
	named := func(name string, view *topologyv1alpha1.NodeEndpoints) *topologyv1alpha1.NodeEndpoints {
		view.Name = name
		return view
	}
	for _, tc := range []struct {
		name string
		// views are put in order, then deleted in reverse order.
		views []*topologyv1alpha1.NodeEndpoints
		// served is what is served once all are put.
		served   []string
		rejected float64
	}{
		{name: "named as the slice", views: []*topologyv1alpha1.NodeEndpoints{testView("edge-1", "echo", "echo-a")}, served: []string{"echo-a"}},
		{
			name:     "a second name for a slice served",
			views:    []*topologyv1alpha1.NodeEndpoints{testView("edge-1", "echo", "echo-a"), named("other-name", testView("edge-1", "echo", "echo-a"))},
			served:   []string{"echo-a"},
			rejected: 1,
		},
		{
			name:     "the name of another slice",
			views:    []*topologyv1alpha1.NodeEndpoints{named("edge-1..echo-b", testView("edge-1", "echo", "echo-a"))},
			rejected: 1,
		},
		{
			name:     "another node's name",
			views:    []*topologyv1alpha1.NodeEndpoints{named("edge-2..echo-a", testView("edge-1", "echo", "echo-a"))},
			rejected: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counter := rejectedViews.WithLabelValues("misnamed")
			before, err := testutil.GetCounterMetricValue(counter)
			if err != nil {
				t.Fatal(err)
			}
			// No Service: the views' slices and Endpoints are served all the
			// same, and the last view's deletion drops the record.
			u := newIndex("edge-1")
			for _, view := range tc.views {
				putView(t, u, view)
			}
			if got := servedSlices(u.state); !slices.Equal(got, tc.served) {
				t.Errorf("served slices %v, want %v", got, tc.served)
			}
			for i := len(tc.views) - 1; i >= 0; i-- {
				record, err := recordView(tc.views[i])
				if err != nil {
					t.Fatal(err)
				}
				u.deleteView(record)
			}
			if got := servedSlices(u.state); len(got) != 0 {
				t.Errorf("with every view deleted, slices %v are served", got)
			}
			if after, _ := testutil.GetCounterMetricValue(counter); after-before != tc.rejected {
				t.Errorf("counted %v misnamed views, want %v", after-before, tc.rejected)
			}
		})
	}
}
