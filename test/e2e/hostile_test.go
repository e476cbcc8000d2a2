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
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// Item 4 of the trust issue: hostile and bad input, one row each. Nothing a
// client or a cluster object holds may crash gridview, slow it to a crawl,
// or be silently accepted.

// kubeAnnotationsLimit is the most kube-apiserver accepts of an object's
// annotations, keys and values together.
const kubeAnnotationsLimit = 256 * 1024

// keysValue returns a topologyKeys value of n valid keys followed by last,
// and how long it is.
func keysValue(n int, last string) string {
	keys := make([]string, 0, n+1)
	for i := range n {
		keys = append(keys, fmt.Sprintf("example.com/k-%d", i))
	}
	data, _ := json.Marshal(append(keys, last))
	return string(data)
}

// orderedKeys returns a topology.gridview.io/keys value of n valid keys
// followed by last.
func orderedKeys(n int, last ...string) string {
	keys := make([]string, 0, n+len(last))
	for i := range n {
		keys = append(keys, fmt.Sprintf("example.com/k-%d", i))
	}
	return strings.Join(append(keys, last...), ",")
}

// largestKeysValue is the longest topologyKeys value of valid keys, ending
// with last, that kube-apiserver accepts.
func largestKeysValue(last string) string {
	n := 1
	for len(keysValue(n*2, last))+len(topology.AnnotationTopologyKeys) <= kubeAnnotationsLimit {
		n *= 2
	}
	for step := n / 2; step > 0; step /= 2 {
		if len(keysValue(n+step, last))+len(topology.AnnotationTopologyKeys) <= kubeAnnotationsLimit {
			n += step
		}
	}
	return keysValue(n, last)
}

// hostileService creates a Service of the site with annotations and runs a
// Pod of it on each node.
func (s ruleSite) hostileService(t *testing.T, name string, annotations map[string]string) error {
	t.Helper()
	if err := s.tryCreateService(name, func(svc *corev1.Service) { maps.Copy(svc.Annotations, annotations) }); err != nil {
		return err
	}
	s.runPods(t, name, podOn{"a1", true}, podOn{"a2", true}, podOn{"b1", true})
	return nil
}

func TestHostileTopologyAnnotations(t *testing.T) {
	s := newSite(t)
	hugeKey := `["` + strings.Repeat("x", kubeAnnotationsLimit-len(topology.AnnotationTopologyKeys)-4) + `"]`
	badKeys := make([]string, 0, 10000)
	for i := range cap(badKeys) {
		badKeys = append(badKeys, fmt.Sprintf("bad key %d", i))
	}
	tests := []struct {
		name        string
		annotations map[string]string
		// refused: kube-apiserver refuses the Service (422).
		refused bool
		// pruned: b1 sees only its unit's endpoint; otherwise the Service is
		// malformed, unpruned, and a Warning says why.
		pruned bool
	}{
		{name: "malformed JSON", annotations: map[string]string{topology.AnnotationTopologyKeys: `[not json`}},
		{name: "a JSON object", annotations: map[string]string{topology.AnnotationTopologyKeys: `{"` + framework.UnitKey + `":1}`}},
		{name: "JSON numbers", annotations: map[string]string{topology.AnnotationTopologyKeys: `[1,2]`}},
		{name: "JSON null", annotations: map[string]string{topology.AnnotationTopologyKeys: `null`}},
		{name: "deeply nested JSON", annotations: map[string]string{topology.AnnotationTopologyKeys: strings.Repeat("[", 100000)}},
		{name: "label keys with invalid characters", annotations: map[string]string{topology.AnnotationTopologyKeys: `["bad key!","` + framework.UnitKey + `"]`}},
		{name: "ordered label keys with invalid characters", annotations: map[string]string{topology.AnnotationGridviewKeys: framework.UnitKey + ",zone;rm -rf,*"}},
		{name: "a 1 MiB annotation", annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + strings.Repeat("x", 1<<20) + `"]`}, refused: true},
		{name: "the largest annotation accepted, one huge key", annotations: map[string]string{topology.AnnotationTopologyKeys: hugeKey}},
		{name: "the largest annotation accepted, thousands of valid keys", annotations: map[string]string{topology.AnnotationTopologyKeys: largestKeysValue(framework.UnitKey)}, pruned: true},
		{name: "thousands of invalid keys", annotations: map[string]string{topology.AnnotationTopologyKeys: func() string { data, _ := json.Marshal(badKeys); return string(data) }()}},
		{name: "thousands of ordered keys", annotations: map[string]string{topology.AnnotationGridviewKeys: orderedKeys(5000, framework.UnitKey, topology.KeyAny)}, pruned: true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("hostile-%d", i)
			start := time.Now()
			err := s.hostileService(t, name, tc.annotations)
			if tc.refused {
				if !apierrors.IsInvalid(err) && !apierrors.IsRequestEntityTooLargeError(err) {
					t.Fatalf("kube-apiserver accepted the Service (%v); the row's premise is wrong", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := s.podIPs(t, name, "a1", "a2", "b1")
			if tc.pruned {
				want = s.podIPs(t, name, "b1")
			}
			s.expectViews(t, "b1", map[string][]string{name: want})
			t.Logf("view within %s", time.Since(start))
			if tc.pruned {
				return
			}
			localcluster.Eventually(t, 10*time.Second, "a short MalformedTopology Warning on "+name, func(ctx context.Context) error {
				events, err := kubeClient.CoreV1().Events(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=MalformedTopology"})
				if err != nil {
					return err
				}
				if len(events.Items) == 0 {
					return fmt.Errorf("no event")
				}
				if e := events.Items[0]; e.Type != corev1.EventTypeWarning || len(e.Message) > 2048 {
					return fmt.Errorf("a %s event of %d bytes: %.300s", e.Type, len(e.Message), e.Message)
				}
				return nil
			})
		})
	}

	// gridview still follows changes promptly.
	start := time.Now()
	s.label(t, "b1", framework.UnitKey, "a")
	s.expectViews(t, "b1", map[string][]string{"grid": s.podIPs(t, "grid", "a1", "a2", "b1")})
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("a relabel took %s to reach the views after the hostile Services", elapsed)
	}
}

// An EndpointSlice of 1,000 endpoints, the most one may hold, is pruned, and
// a change of it reaches the views promptly. Written by hand: the
// EndpointSlice controller puts at most 100 endpoints in a slice.
func TestHostileEndpointSliceOfAThousandEndpoints(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + framework.UnitKey + `"]`}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := kubeClient.CoreV1().Services(s.NS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "big-x", Labels: map[string]string{discoveryv1.LabelServiceName: "big"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
	}
	nodes := []string{"a1", "a2", "b1"}
	for i := range 1000 {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{fmt.Sprintf("10.8.%d.%d", i/250, i%250+1)}, NodeName: ptr.To(s.Node(nodes[i%3])),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}
	start := time.Now()
	slices := kubeClient.DiscoveryV1().EndpointSlices(s.NS)
	created, err := slices.Create(ctx, slice, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectCount := func(node string, want int) {
		t.Helper()
		localcluster.Eventually(t, 10*time.Second, fmt.Sprintf("%s seeing %d endpoints of big", node, want), func(ctx context.Context) error {
			views, err := s.viewsOf(ctx, node)
			if err != nil {
				return err
			}
			if got := len(views["big"]); got != want {
				return fmt.Errorf("%d endpoints", got)
			}
			return nil
		})
	}
	// Endpoints i%3 == 0 and 1 are in unit a: 334 + 333.
	expectCount("a1", 667)
	expectCount("b1", 333)
	t.Logf("1,000 endpoints in the views within %s", time.Since(start))

	start = time.Now()
	created.Endpoints = created.Endpoints[:999]
	if _, err := slices.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Endpoint 999 was on a1.
	expectCount("a2", 666)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("a change of the slice took %s to reach the views", elapsed)
	}
}

// nextEvent returns the next event of w that is not a bookmark.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if e.Type != watch.Bookmark {
				return e
			}
		case <-timeout:
			t.Fatal("no event within 10s")
		}
	}
}

// expectDeleted reads events of w until every name in want was DELETED; only
// those may come.
func expectDeleted(t *testing.T, w watch.Interface, want ...string) {
	t.Helper()
	pending := map[string]bool{}
	for _, name := range want {
		pending[name] = true
	}
	for len(pending) > 0 {
		e := nextEvent(t, w)
		view, ok := e.Object.(*topologyv1alpha1.NodeEndpoints)
		if !ok || e.Type != watch.Deleted || !pending[view.Name] {
			t.Fatalf("event %s %v, want DELETED of one of %v", e.Type, e.Object, pending)
		}
		delete(pending, view.Name)
	}
}

// Deleting a watched Service or Node sends its views' watchers DELETED.
func TestHostileDeletionsWhileWatched(t *testing.T) {
	s := newSite(t)
	s.expectViews(t, "b1", map[string][]string{
		"grid": s.podIPs(t, "grid", "b1"), "plain": s.podIPs(t, "plain", "a1", "b1"), "ordered": s.podIPs(t, "ordered", "a1"),
	})
	// Named while the slices are there: deleting grid deletes its slice.
	gridViews := []string{s.view(t, "a1", "grid"), s.view(t, "a2", "grid"), s.view(t, "b1", "grid")}
	b1Views := []string{s.view(t, "b1", "plain"), s.view(t, "b1", "ordered")}
	ctx := context.Background()
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	watchFrom := func(fieldSelector string) watch.Interface {
		t.Helper()
		list, err := views.List(ctx, metav1.ListOptions{FieldSelector: fieldSelector})
		if err != nil {
			t.Fatal(err)
		}
		w, err := views.Watch(ctx, metav1.ListOptions{FieldSelector: fieldSelector, ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	b1 := watchFrom("nodeName=" + s.Node("b1"))
	grid := watchFrom("serviceName=grid")
	all := watchFrom("")

	if err := kubeClient.CoreV1().Services(s.NS).Delete(ctx, "grid", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectDeleted(t, b1, gridViews[2])
	expectDeleted(t, grid, gridViews...)
	expectDeleted(t, all, gridViews...)

	if err := kubeClient.CoreV1().Nodes().Delete(ctx, s.Node("b1"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectDeleted(t, b1, b1Views...)
	expectDeleted(t, all, b1Views...)
	for _, name := range append(gridViews, b1Views...) {
		if _, err := views.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get %s after its deletion: %v, want 404", name, err)
		}
	}
	// The grid watcher saw nothing of the node's deletion: its views were gone.
	select {
	case e := <-grid.ResultChan():
		if e.Type != watch.Bookmark {
			t.Errorf("the grid watcher got %s %v", e.Type, e.Object)
		}
	case <-time.After(time.Second):
	}
}

// Node names and slice names may hold dots: <node>..<slice> splits at its
// only "..", which no DNS subdomain holds, for gets, selectors, watches and
// the node authorizer.
func TestHostileNamesWithDots(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	dotted := s.NS + ".edge.dotted.1"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: dotted, Labels: map[string]string{framework.UnitKey: s.Unit("b")}}}
	if _, err := kubeClient.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kubeClient.CoreV1().Nodes().Delete(context.Background(), dotted, metav1.DeleteOptions{}) })
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + framework.UnitKey + `"]`}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := kubeClient.CoreV1().Services(s.NS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A slice name with dots, which the EndpointSlice controller never
	// generates: written by hand.
	const slice = "web.v1-abc"
	framework.WriteNamedEndpointSlice(t, kubeClient, s.NS, "web", slice, map[string]string{"10.4.0.1": dotted, "10.4.0.2": s.Node("a1")})
	name := topology.Name(dotted, slice)
	if node, sliceName, err := topology.ParseName(name); err != nil || node != dotted || sliceName != slice {
		t.Fatalf("%s parses as %q, %q, %v", name, node, sliceName, err)
	}
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	localcluster.Eventually(t, 10*time.Second, "the view "+name, func(ctx context.Context) error {
		view, err := views.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if view.NodeName != dotted || view.ServiceName != "web" || view.Slice.Name != slice || !slicesEqual(addresses(view), []string{"10.4.0.1"}) {
			return fmt.Errorf("%s: node %q, service %q, slice %q, %v", name, view.NodeName, view.ServiceName, view.Slice.Name, addresses(view))
		}
		return nil
	})
	for _, selector := range []string{"metadata.name=" + name, "nodeName=" + dotted + ",serviceName=web", "metadata.name=" + name + ",nodeName=" + dotted} {
		list, err := views.List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != name {
			t.Errorf("list %s: %v, %v", selector, list, err)
		}
	}
	// kubectl finds it by name too.
	if out := mustKubectl(t, "get", "nep", "-n", s.NS, name, "-o", "name"); out != "nodeendpoints.topology.gridview.io/"+name+"\n" {
		t.Errorf("kubectl get nep %s: %q", name, out)
	}
	w, err := views.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, SendInitialEvents: ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if e := nextEvent(t, w); e.Type != watch.Added || e.Object.(*topologyv1alpha1.NodeEndpoints).Name != name {
		t.Errorf("watch of %s: %s %v", name, e.Type, e.Object)
	}

	// The dotted node reads its own views, and no one else's.
	applyWrapperRBAC(t)
	own := nodeClient(t, dotted).TopologyV1alpha1().NodeEndpoints(s.NS)
	if _, err := own.Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Errorf("%s getting its own view: %v", dotted, err)
	}
	// grid, plain, ordered and web.
	if list, err := own.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + dotted}); err != nil || len(list.Items) != 4 {
		t.Errorf("%s listing its own views: %v, %v", dotted, list, err)
	}
	// A prefix of its name is another node's name: edge.dotted is not
	// edge.dotted.1, though edge.dotted..1.web.v1-abc would have split
	// there at a dot.
	for _, other := range []string{topology.Name(s.Node("a1"), slice), topology.Name(strings.TrimSuffix(dotted, ".1"), "1."+slice)} {
		if _, err := own.Get(ctx, other, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("%s getting %s: %v, want 403", dotted, other, err)
		}
	}

	for _, bad := range []string{dotted, dotted + "..", ".." + slice, dotted + "." + slice, dotted + "..Web.v1-abc", dotted + "..." + slice,
		topology.Name(dotted, "web"), topology.Name(dotted, slice+"..x")} {
		if _, err := views.Get(ctx, bad, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get %q: %v, want 404", bad, err)
		}
	}
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

// withRV returns a continue token with its resourceVersion replaced by
// what move makes of it. The number is read as a json.Number: a
// resourceVersion may exceed what a float64 holds exactly.
func withRV(t *testing.T, token string, move func(rv uint64) uint64) string {
	t.Helper()
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatalf("the continue token %q: %v", token, err)
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var fields map[string]any
	if err := decoder.Decode(&fields); err != nil {
		t.Fatalf("the continue token %s: %v", data, err)
	}
	number, ok := fields["rv"].(json.Number)
	if !ok {
		t.Fatalf("the continue token %s has no rv", data)
	}
	rv, err := strconv.ParseUint(number.String(), 10, 64)
	if err != nil {
		t.Fatalf("the continue token %s: rv: %v", data, err)
	}
	fields["rv"] = move(rv)
	data, _ = json.Marshal(fields)
	return base64.RawURLEncoding.EncodeToString(data)
}

// Bad query parameters through the aggregator: a 400 naming what is wrong,
// or a 410 for a continue token of another state; never a 500, a hang or a
// silent accept.
func TestHostileQueryParameters(t *testing.T) {
	s := newSite(t)
	s.expectViews(t, "b1", map[string][]string{"grid": s.podIPs(t, "grid", "b1")})
	ctx := context.Background()
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	whole, err := views.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := views.List(ctx, metav1.ListOptions{Limit: 2})
	if err != nil || first.Continue == "" {
		t.Fatalf("a first page: %v, %v", first, err)
	}
	flipped := []byte(first.Continue)
	flipped[len(flipped)/3] ^= 0x04

	tests := []struct {
		name     string
		resource string
		params   map[string]string
		want     func(error) bool
		naming   string
	}{
		{name: "watch timeoutSeconds=-1", params: map[string]string{"watch": "true", "timeoutSeconds": "-1"}, want: apierrors.IsBadRequest, naming: "timeoutSeconds"},
		{name: "watch timeoutSeconds=abc", params: map[string]string{"watch": "true", "timeoutSeconds": "abc"}, want: apierrors.IsBadRequest, naming: "timeoutSeconds"},
		{name: "list timeoutSeconds=abc", params: map[string]string{"timeoutSeconds": "abc"}, want: apierrors.IsBadRequest, naming: "timeoutSeconds"},
		{name: "an unknown field selector", params: map[string]string{"fieldSelector": "spec.nodeName=x"}, want: apierrors.IsBadRequest, naming: "spec.nodeName"},
		{name: "an unknown field selector on a watch", params: map[string]string{"watch": "true", "fieldSelector": "nodeName=x,status.bogus=y"}, want: apierrors.IsBadRequest, naming: "status.bogus"},
		{name: "a field selector that does not parse", params: map[string]string{"fieldSelector": "nodeName"}, want: apierrors.IsBadRequest, naming: "fieldSelector"},
		{name: "a label selector that does not parse", params: map[string]string{"labelSelector": "!!"}, want: apierrors.IsBadRequest, naming: "labelSelector"},
		{name: "limit=-5", params: map[string]string{"limit": "-5"}, want: apierrors.IsBadRequest, naming: "limit"},
		{name: "limit=abc", params: map[string]string{"limit": "abc"}, want: apierrors.IsBadRequest, naming: "limit"},
		{name: "servicegrids limit=-5", resource: "servicegrids", params: map[string]string{"limit": "-5"}, want: apierrors.IsBadRequest, naming: "limit"},
		{name: "servicegrids: an unknown field selector", resource: "servicegrids", params: map[string]string{"fieldSelector": "spec.bogus=x"}, want: apierrors.IsBadRequest, naming: "spec.bogus"},
		{name: "watch resourceVersion=abc", params: map[string]string{"watch": "true", "resourceVersion": "abc"}, want: apierrors.IsBadRequest, naming: "resourceVersion"},
		{name: "a continue token that is not one", params: map[string]string{"limit": "2", "continue": "bm90IGEgdG9rZW4"}, want: apierrors.IsBadRequest, naming: "continue"},
		{name: "a huge continue token", params: map[string]string{"limit": "2", "continue": strings.Repeat("A", 32*1024)}, want: apierrors.IsBadRequest, naming: "continue"},
		{name: "a truncated continue token", params: map[string]string{"limit": "2", "continue": first.Continue[:len(first.Continue)/2]}, want: apierrors.IsBadRequest, naming: "continue"},
		{name: "a continue token with a flipped bit", params: map[string]string{"limit": "2", "continue": string(flipped)},
			want: func(err error) bool {
				return err == nil || apierrors.IsBadRequest(err) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
			}},
		// Of a revision gridview's etcd never reached: no replica issued it,
		// and waiting would wait for ever.
		{name: "a continue token from a future resourceVersion", params: map[string]string{"limit": "2", "continue": withRV(t, first.Continue, func(rv uint64) uint64 { return rv + 1<<40 })},
			want: func(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }, naming: "continue"},
		{name: "a continue token from before the history", params: map[string]string{"limit": "2", "continue": withRV(t, first.Continue, func(uint64) uint64 { return 1 })},
			want: func(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }, naming: "continue"},
		{name: "a continue token with a resourceVersion", params: map[string]string{"limit": "2", "continue": first.Continue, "resourceVersion": first.ResourceVersion},
			want: apierrors.IsBadRequest, naming: "resourceVersion"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			resource := tc.resource
			if resource == "" {
				resource = "nodeendpoints"
			}
			// The answer itself, not client-go's retries of it.
			req := gridview.TopologyV1alpha1().RESTClient().Get().Namespace(s.NS).Resource(resource).MaxRetries(0)
			for k, v := range tc.params {
				req.Param(k, v)
			}
			err := req.Do(ctx).Error()
			if !tc.want(err) {
				t.Fatalf("%v: %v", tc.params, err)
			}
			if err != nil && !strings.Contains(err.Error(), tc.naming) {
				t.Errorf("%v: %v, want an error naming %s", tc.params, err, tc.naming)
			}
		})
	}

	// The later pages of a list whose views moved on read on at its first
	// page's resourceVersion, as kube-apiserver's read an etcd revision.
	s.label(t, "b1", framework.UnitKey, "a")
	localcluster.Eventually(t, 10*time.Second, "the views moving on", func(ctx context.Context) error {
		now, err := views.List(ctx, metav1.ListOptions{})
		if err == nil && maps.Equal(addressesByName(now.Items), addressesByName(whole.Items)) {
			err = errors.New("the views are as they were")
		}
		return err
	})
	paged := first.Items
	for token := first.Continue; token != ""; {
		page, err := views.List(ctx, metav1.ListOptions{Limit: 2, Continue: token})
		if err != nil {
			t.Fatalf("a later page after a change: %v", err)
		}
		if page.ResourceVersion != first.ResourceVersion {
			t.Errorf("a later page at resourceVersion %s, the first at %s", page.ResourceVersion, first.ResourceVersion)
		}
		paged, token = append(paged, page.Items...), page.Continue
	}
	if got, want := addressesByName(paged), addressesByName(whole.Items); !maps.Equal(got, want) {
		t.Errorf("pages read across a change: %v\nthe views before it: %v", got, want)
	}
}

// addressesByName is what each view routes to, by its name.
func addressesByName(views []topologyv1alpha1.NodeEndpoints) map[string]string {
	out := map[string]string{}
	for i := range views {
		out[views[i].Name] = fmt.Sprint(addresses(&views[i]))
	}
	return out
}

// The wrapper answers kube-proxy's parameters as kube-apiserver does: a bad
// one is a 400 naming it.
func TestHostileWrapperParameters(t *testing.T) {
	s := newSite(t)
	n := nodeNetns(t, s.Node("a1"))
	w := startWrapper(t, n)
	ctx := context.Background()
	for _, tc := range []struct {
		name, query, naming string
	}{
		{name: "watch timeoutSeconds=-1", query: "watch=true&timeoutSeconds=-1", naming: "timeoutSeconds"},
		{name: "watch timeoutSeconds=abc", query: "watch=true&timeoutSeconds=abc", naming: "timeoutSeconds"},
		{name: "limit=-5", query: "limit=-5", naming: "limit"},
		{name: "an unknown field selector", query: "fieldSelector=spec.bogus%3Dx", naming: "spec.bogus"},
		{name: "a continue token", query: "limit=1&continue=eyJydiI6MX0", naming: "continue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			code, body, err := w.request(ctx, http.MethodGet, "/apis/discovery.k8s.io/v1/endpointslices?"+tc.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			if code != http.StatusBadRequest || !strings.Contains(body, tc.naming) {
				t.Errorf("?%s: %d %s, want 400 naming %s", tc.query, code, body, tc.naming)
			}
		})
	}
	// It still serves.
	if _, err := w.get(ctx, "/apis/discovery.k8s.io/v1/endpointslices"); err != nil {
		t.Errorf("a good list after the bad ones: %v", err)
	}
}
