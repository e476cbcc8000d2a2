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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/watchstream"
)

func TestCacheRoundTripAndCorruption(t *testing.T) {
	RegisterMetrics()
	dir := t.TempDir()
	if _, _, ok := LoadCache(dir, "edge-1"); ok {
		t.Fatal("an empty directory loaded a state")
	}
	objects := []runtime.Object{testService("echo", "10.96.0.10", map[string]string{"app": "echo"}),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}}}
	if err := SaveCache(dir, "edge-1", 42, objects); err != nil {
		t.Fatal(err)
	}
	rv, loaded, ok := LoadCache(dir, "edge-1")
	if !ok || rv != 42 || len(loaded) != 2 || !sameObject(loaded[0], objects[0]) || !sameObject(loaded[1], objects[1]) {
		t.Fatalf("loaded %d %v %v", rv, loaded, ok)
	}

	path := filepath.Join(dir, cacheFile)
	data, _ := os.ReadFile(path)
	checksummed := func(payload string) []byte {
		sum := sha256.Sum256([]byte(payload))
		return []byte(hex.EncodeToString(sum[:]) + "\n" + payload)
	}
	otherDir := t.TempDir()
	if err := SaveCache(otherDir, "edge-2", 42, objects); err != nil {
		t.Fatal(err)
	}
	otherNode, _ := os.ReadFile(filepath.Join(otherDir, cacheFile))
	for _, tc := range []struct {
		name   string
		data   []byte
		reason string
	}{
		{name: "torn", data: data[:len(data)/2], reason: "unreadable"},
		{name: "altered", data: append(append([]byte{}, data[:len(data)-3]...), 'X', '}', '}'), reason: "unreadable"},
		{name: "no checksum", data: []byte(`{"resourceVersion":1}`), reason: "unreadable"},
		{name: "empty", data: nil, reason: "unreadable"},
		{name: "wrong payload", data: []byte("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"), reason: "unreadable"},
		{name: "saved for another node", data: otherNode, reason: "foreign_node"},
		{name: "saved for no node", data: checksummed(`{"resourceVersion":42,"format":2}` + "\n"), reason: "foreign_node"},
		{name: "a record that does not decode", data: checksummed(`{"node":"edge-1","resourceVersion":42,"format":2}` + "\n\x00\x01\x03abc\x00"), reason: "unreadable"},
		{name: "a part that is not a slice", data: checksummed(`{"node":"edge-1","resourceVersion":42,"format":2}` + "\n\x00\x01\x00\x00\x01\x01\x00\x01"), reason: "unreadable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			before, err := testutil.GetCounterMetricValue(cacheRejected.WithLabelValues(tc.reason))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, ok := LoadCache(dir, "edge-1"); ok {
				t.Error("a cache that cannot be trusted was loaded")
			}
			if after, _ := testutil.GetCounterMetricValue(cacheRejected.WithLabelValues(tc.reason)); after != before+1 {
				t.Errorf("cache_rejected_total{reason=%q} went from %v to %v, want one more", tc.reason, before, after)
			}
		})
	}
}

func TestStatePublishesOnlyChangedContent(t *testing.T) {
	state := NewState(10, nil)
	if state.Synced() {
		t.Error("an empty state is synced")
	}
	state.Set(testService("echo", "10.96.0.10", nil))
	again := testService("echo", "10.96.0.10", nil)
	again.ResourceVersion = "8" // a re-list upstream: new resourceVersion, same content
	state.Set(again)
	if rv, _ := state.Snapshot(); rv != 11 {
		t.Errorf("resourceVersion %d after one change and one re-read, want 11", rv)
	}
	state.Replace(services, []runtime.Object{testService("other", "10.96.0.11", nil)})
	rv, objects := state.Snapshot()
	if rv != 13 || len(objects) != 1 || objects[0].(*corev1.Service).Name != "other" {
		t.Errorf("after Replace: %d %v, want echo gone and other added", rv, objects)
	}
}

// newIndex is an Upstream without informers: its handlers' code only.
func newIndex(node string) *Upstream {
	return &Upstream{
		nodeName: node, state: NewState(1, nil), views: map[types.NamespacedName]*viewRecord{},
		services: map[types.NamespacedName]*serviceViews{}, local: localEndpoints{warned: map[string]bool{}},
		viewsListed: true, servicesListed: true,
	}
}

// putView and putService apply an object as received from upstream.
func putView(t *testing.T, u *Upstream, view *topologyv1alpha1.NodeEndpoints) {
	t.Helper()
	record, err := recordView(view)
	if err != nil {
		t.Fatal(err)
	}
	u.setView(record)
}

func putService(t *testing.T, u *Upstream, svc *corev1.Service) {
	t.Helper()
	record, err := recordService(svc)
	if err != nil {
		t.Fatal(err)
	}
	u.setService(record)
}

// sameObject says whether two objects have the same content but for their
// resourceVersions.
func sameObject(a, b runtime.Object) bool {
	x, errX := asStored(a)
	y, errY := asStored(b)
	return errX == nil && errY == nil && x.sameContent(y)
}

func asStored(obj runtime.Object) (*stored, error) {
	if one, ok := obj.(*stored); ok {
		return one, nil
	}
	return store(obj)
}

func TestRenderKeepsSliceIdentityAndConditions(t *testing.T) {
	view := &topologyv1alpha1.NodeEndpoints{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "edge-1..echo-x", Labels: map[string]string{"app": "echo"}},
		NodeName:    "edge-1",
		ServiceName: "echo",
		Slice: topologyv1alpha1.NodeEndpointSlice{
			Name: "echo-x", Labels: map[string]string{discoveryv1.LabelServiceName: "echo", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.0.0.1"}, NodeName: ptr.To("edge-1"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
				{Addresses: []string{"10.0.0.2"}, NodeName: ptr.To("edge-2"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
			},
		},
	}
	empty := &topologyv1alpha1.NodeEndpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "edge-1..echo-y"}, NodeName: "edge-1", ServiceName: "echo",
		Slice: topologyv1alpha1.NodeEndpointSlice{Name: "echo-y", AddressType: discoveryv1.AddressTypeIPv6},
	}
	u := newIndex("edge-1")
	putService(t, u, testService("echo", "10.96.0.10", map[string]string{"app": "echo"}))
	putView(t, u, view)
	putView(t, u, empty)
	if got := servedSlices(u.state); !slices.Equal(got, []string{"echo-x", "echo-y"}) {
		t.Fatalf("served slices %v, want both source slices", got)
	}
	obj, _ := u.state.Get(endpointSlices, types.NamespacedName{Namespace: "demo", Name: "echo-x"})
	first := obj.(*discoveryv1.EndpointSlice)
	if first.Name != "echo-x" || first.Namespace != "demo" || first.Labels[discoveryv1.LabelManagedBy] == "" || len(first.Endpoints) != 2 {
		t.Errorf("slice %+v", first)
	}
	want := []corev1.EndpointSubset{{
		Addresses:         []corev1.EndpointAddress{{IP: "10.0.0.1", NodeName: ptr.To("edge-1")}},
		NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.0.0.2", NodeName: ptr.To("edge-2")}},
		Ports:             []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}},
	}}
	obj, err := u.state.Get(endpoints, types.NamespacedName{Namespace: "demo", Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*corev1.Endpoints); got.Name != "echo" || got.Labels["app"] != "echo" || !apiequality.Semantic.DeepEqual(got.Subsets, want) {
		t.Errorf("endpoints %+v\nwant subsets %+v", got, want)
	}
}

// A Service this node routes to no endpoint of has no NodeEndpoints: it has
// no EndpointSlice, as an empty view rendered none with endpoints, and an
// Endpoints object with no subset, as an empty view rendered; an
// ExternalName Service, which has no view, has neither.
func TestServiceWithoutViews(t *testing.T) {
	echo := types.NamespacedName{Namespace: "demo", Name: "echo"}
	external := testService("external", "", nil)
	external.Spec.Type = corev1.ServiceTypeExternalName
	for _, tc := range []struct {
		name          string
		change        func(t *testing.T, u *Upstream)
		wantSlices    []string
		wantEndpoints []string
	}{
		{name: "no view", change: func(*testing.T, *Upstream) {}, wantEndpoints: []string{"echo"}},
		{name: "views come", change: func(t *testing.T, u *Upstream) {
			putView(t, u, testView("edge-1", "echo", "echo-a"))
			putView(t, u, testView("edge-1", "echo", "echo-b"))
		}, wantSlices: []string{"echo-a", "echo-b"}, wantEndpoints: []string{"echo"}},
		{name: "views go", change: func(t *testing.T, u *Upstream) {
			putView(t, u, testView("edge-1", "echo", "echo-a"))
			u.deleteView(&viewRecord{name: keyOf(testView("edge-1", "echo", "echo-a"))})
		}, wantEndpoints: []string{"echo"}},
		{name: "the Service goes", change: func(_ *testing.T, u *Upstream) { u.deleteService(&serviceRecord{key: echo}) }},
		{name: "a view before its Service", change: func(t *testing.T, u *Upstream) {
			u.deleteService(&serviceRecord{key: echo})
			putView(t, u, testView("edge-1", "echo", "echo-a"))
		}, wantSlices: []string{"echo-a"}, wantEndpoints: []string{"echo"}},
		{name: "ExternalName", change: func(t *testing.T, u *Upstream) { putService(t, u, external) }, wantEndpoints: []string{"echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newIndex("edge-1")
			putService(t, u, testService("echo", "10.96.0.10", nil))
			tc.change(t, u)
			var gotEndpoints []string
			_, objects := u.state.Snapshot()
			for _, obj := range objects {
				if ep, ok := obj.(*corev1.Endpoints); ok {
					gotEndpoints = append(gotEndpoints, ep.Name)
					if len(ep.Subsets) != 0 && len(servedSlices(u.state)) == 0 {
						t.Errorf("Endpoints %s has subsets with no slice served", ep.Name)
					}
				}
			}
			if got := servedSlices(u.state); !slices.Equal(got, tc.wantSlices) || !slices.Equal(gotEndpoints, tc.wantEndpoints) {
				t.Errorf("served slices %v and Endpoints %v, want %v and %v", got, gotEndpoints, tc.wantSlices, tc.wantEndpoints)
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	for _, tc := range []struct {
		path      string
		kind      *kind
		namespace string
		name      string
	}{
		{path: "/api/v1/services", kind: services},
		{path: "/api/v1/namespaces/demo/endpoints/echo", kind: endpoints, namespace: "demo", name: "echo"},
		{path: "/apis/discovery.k8s.io/v1/endpointslices", kind: endpointSlices},
		{path: "/api/v1/nodes/edge-1", kind: nodes, name: "edge-1"},
		{path: "/apis/networking.k8s.io/v1/servicecidrs", kind: serviceCIDRs},
		{path: "/api/v1/namespaces/demo/nodes"},
		{path: "/api/v1/secrets"},
		{path: "/apis/discovery.k8s.io/v1beta1/endpointslices"},
		{path: "/api/v1/services/a/b"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r, ok := parseRoute(tc.path)
			if ok != (tc.kind != nil) || ok && (r.kind != tc.kind || r.namespace != tc.namespace || r.name != tc.name) {
				t.Errorf("parseRoute = %+v, %v", r, ok)
			}
		})
	}
}

// A view's change publishes its slice and its Service's Endpoints, no
// other slice; the same content received again publishes nothing.
func TestAViewChangePublishesItsSliceOnly(t *testing.T) {
	u := newIndex("edge-1")
	putService(t, u, testService("echo", "10.96.0.10", nil))
	putView(t, u, testView("edge-1", "echo", "echo-a"))
	putView(t, u, testView("edge-1", "echo", "echo-b"))
	before := u.state.RV()
	putView(t, u, testView("edge-1", "echo", "echo-b"))
	if got := u.state.RV(); got != before {
		t.Errorf("the same view again moved the resourceVersion from %d to %d", before, got)
	}
	changed := testView("edge-1", "echo", "echo-b")
	changed.Slice.Endpoints[0].Addresses = []string{"10.0.0.9"}
	putView(t, u, changed)
	if got := u.state.RV(); got != before+2 {
		t.Errorf("one view's change moved the resourceVersion from %d to %d, want the slice and the Endpoints", before, got)
	}
	a, _ := u.state.Get(endpointSlices, types.NamespacedName{Namespace: "demo", Name: "echo-a"})
	if rv := a.(*discoveryv1.EndpointSlice).ResourceVersion; rv == fmt.Sprint(before+1) || rv == fmt.Sprint(before+2) {
		t.Errorf("echo-a was published again, at %s", rv)
	}
}

// A Service's record refers to the encoding the state serves, whether the
// Service is new, re-read the same (a relist, a start from the cache) or
// changed: it never keeps a second encoding.
func TestServiceRecordKeepsTheServedEncoding(t *testing.T) {
	svc := testService("echo", "10.96.0.10", map[string]string{"app": "echo"})
	relisted := svc.DeepCopy()
	relisted.ResourceVersion = "99"
	managed := svc.DeepCopy()
	managed.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	changed := svc.DeepCopy()
	changed.Spec.ClusterIP = "10.96.0.11"
	u := newIndex("edge-1")
	key := types.NamespacedName{Namespace: "demo", Name: "echo"}
	for _, tc := range []struct {
		name string
		svc  *corev1.Service
	}{
		{name: "new", svc: svc},
		{name: "re-read the same", svc: relisted},
		{name: "changed in managedFields only", svc: managed},
		{name: "changed", svc: changed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			putService(t, u, tc.svc)
			if held, served := u.services[key].service.service, u.state.objects[services][key]; held != served {
				t.Errorf("the record holds an encoding of %d bytes besides the %d the state serves", len(held.data), len(served.data))
			}
		})
	}
}

// largeSlice is an EndpointSlice of n endpoints, about 70 bytes an
// endpoint encoded, at its change-th version.
func largeSlice(n, change int) *discoveryv1.EndpointSlice {
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "daemon-a",
			Labels: map[string]string{discoveryv1.LabelServiceName: "daemon", "change": strconv.Itoa(change)}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for i := range n {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			NodeName:   ptr.To(fmt.Sprintf("edge-%05d", i)),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "demo", Name: fmt.Sprintf("daemon-%05d", i)},
		})
	}
	return slice
}

// The history keeps at most historySize changes and historyBytes of their
// objects: changes of large slices are dropped by their size, and a watch
// from before what it keeps gets 410, while one from its latest change
// resumes.
func TestHistoryIsBoundedByCountAndBytes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		endpoints int
		changes   int
		// bytes says the bound in bytes is reached, not the count.
		bytes bool
	}{
		{name: "small slices, by count", endpoints: 1, changes: historySize + 200},
		{name: "1000-endpoint slices, by bytes", endpoints: 1000, changes: 200, bytes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := NewState(1, nil)
			for i := range tc.changes {
				state.Set(largeSlice(tc.endpoints, i))
			}
			entries, weight := state.stream.Held()
			if entries >= tc.changes || weight > historyBytes || tc.bytes != (entries < historySize) {
				t.Errorf("after %d changes the history holds %d of %d bytes, want at most %d of %d bytes, bounded by bytes: %v",
					tc.changes, entries, weight, historySize, historyBytes, tc.bytes)
			}
			from := func(rv uint64) error {
				w, err := state.Watch(t.Context(), &filter{kind: endpointSlices}, watchstream.WatchOptions{ResourceVersion: strconv.FormatUint(rv, 10)})
				if err == nil {
					w.Stop()
				}
				return err
			}
			if err := from(1); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
				t.Errorf("a watch from before the history: %v, want 410", err)
			}
			if err := from(state.RV() - 1); err != nil {
				t.Errorf("a watch from the change before the latest: %v", err)
			}
		})
	}
}
