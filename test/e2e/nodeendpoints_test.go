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
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// site is a namespace of the test's own, whose nodes are <ns>-<name>.
type site struct {
	framework.Site
}

// newSite is a small edge cluster of the test's own: nodes a1, a2 in unit a
// and b1 in unit b, and three Services whose Pods run on them: grid
// (any-match on the unit) on every node, plain on a1 and b1, and ordered
// ("unit,*") on a1 alone.
func newSite(t *testing.T) ruleSite {
	t.Helper()
	s := newRuleSite(t, framework.SiteNodes())
	for _, svc := range []struct {
		name, annotation, keys string
		nodes                  []string
	}{
		{name: "grid", annotation: topology.AnnotationTopologyKeys, keys: `["` + framework.UnitKey + `"]`, nodes: []string{"a1", "a2", "b1"}},
		{name: "plain", nodes: []string{"a1", "b1"}},
		{name: "ordered", annotation: topology.AnnotationGridviewKeys, keys: framework.UnitKey + ",*", nodes: []string{"a1"}},
	} {
		s.createService(t, svc.name, func(service *corev1.Service) {
			if svc.annotation != "" {
				service.Annotations[svc.annotation] = svc.keys
			}
		})
		var pods []podOn
		for _, node := range svc.nodes {
			pods = append(pods, podOn{node: node, ready: true})
		}
		s.runPods(t, svc.name, pods...)
	}
	return s
}

// writeNamedSlice creates or replaces the EndpointSlice name of a Service,
// with endpoints by address on the site's nodes, for a layout the
// EndpointSlice controller does not give (each caller says which).
func (s site) writeNamedSlice(t *testing.T, service, name string, endpoints map[string]string) {
	t.Helper()
	onNodes := map[string]string{}
	for address, node := range endpoints {
		onNodes[address] = s.Node(node)
	}
	framework.WriteNamedEndpointSlice(t, kubeClient, s.NS, service, name, onNodes)
}

// addresses lists the endpoint addresses of views, sorted.
func addresses(views ...*topologyv1alpha1.NodeEndpoints) []string {
	return framework.Addresses(views...)
}

// viewsOf returns what a node routes to in the site's namespace, by Service
// name: the addresses of its views of each Service's slices, joined. A
// Service it routes to no endpoint of has no view, and no entry.
func (s site) viewsOf(ctx context.Context, node string) (map[string][]string, error) {
	list, err := gridview.TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node(node)})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for i := range list.Items {
		view := &list.Items[i]
		out[view.ServiceName] = append(out[view.ServiceName], addresses(view)...)
	}
	for _, addrs := range out {
		slices.Sort(addrs)
	}
	return out, nil
}

func (s site) expectViews(t *testing.T, node string, want map[string][]string) {
	t.Helper()
	localcluster.Eventually(t, 10*time.Second, node+"'s views", func(ctx context.Context) error {
		got, err := s.viewsOf(ctx, node)
		if err != nil {
			return err
		}
		for svc, addrs := range want {
			if !slices.Equal(got[svc], addrs) {
				return fmt.Errorf("%s: %v, want %v (all: %v)", svc, got[svc], addrs, got)
			}
		}
		return nil
	})
}

func TestNodeEndpointsArePrunedByGridUnit(t *testing.T) {
	s := newSite(t)
	s.expectViews(t, "a1", map[string][]string{
		"grid": s.podIPs(t, "grid", "a1", "a2"), "plain": s.podIPs(t, "plain", "a1", "b1"), "ordered": s.podIPs(t, "ordered", "a1"),
	})
	// Unit b has no endpoint of ordered: its "*" tier takes them all.
	s.expectViews(t, "b1", map[string][]string{
		"grid": s.podIPs(t, "grid", "b1"), "plain": s.podIPs(t, "plain", "a1", "b1"), "ordered": s.podIPs(t, "ordered", "a1"),
	})

	ctx := context.Background()
	gridSlice := s.controllerSlice(t, "grid")
	view, err := gridview.TopologyV1alpha1().NodeEndpoints(s.NS).Get(ctx, s.view(t, "b1", "grid"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if view.NodeName != s.Node("b1") || view.ServiceName != "grid" || view.Topology.Mode != topologyv1alpha1.TopologyModeAnyMatch ||
		view.Topology.MatchedKey != framework.UnitKey || view.Labels["app"] != "grid" || view.ResourceVersion == "" {
		t.Errorf("b1's view of grid: %+v", view)
	}
	// The slice keeps its source's name and labels.
	if view.Slice.Name != gridSlice || view.Slice.Labels[discoveryv1.LabelServiceName] != "grid" ||
		view.Slice.AddressType != discoveryv1.AddressTypeIPv4 || len(view.Slice.Ports) != 1 {
		t.Errorf("b1's view of grid's slice: %+v", view.Slice)
	}
	for _, name := range []string{topology.Name("no-such-node", gridSlice), topology.Name(s.Node("b1"), "no-such-slice")} {
		if _, err := gridview.TopologyV1alpha1().NodeEndpoints(s.NS).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get %s: %v, want 404", name, err)
		}
	}
	if _, err := gridview.TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=x"}); !apierrors.IsBadRequest(err) ||
		!strings.Contains(err.Error(), "spec.nodeName") {
		t.Errorf("an unknown field selector: %v, want 400 naming it", err)
	}
	byLabel, err := gridview.TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{LabelSelector: "app=plain", FieldSelector: "nodeName=" + s.Node("a2")})
	if err != nil || len(byLabel.Items) != 1 || byLabel.Items[0].ServiceName != "plain" {
		t.Errorf("label selector app=plain: %v, %v", byLabel, err)
	}

	out := mustKubectl(t, "get", "nep", "-n", s.NS, "--field-selector", "nodeName="+s.Node("a1"))
	for _, want := range []string{"NAME", "NODE", "SERVICE", "TOPOLOGY", "ENDPOINTS", "AGE", s.view(t, "a1", "grid"), "AnyMatch(" + framework.UnitKey + ")"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get nep lacks %q:\n%s", want, out)
		}
	}
	row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s.view(t, "a1", "grid")) + `\s.*\s(\S+)\s+\S+$`).FindStringSubmatch(out)
	if row == nil {
		t.Errorf("kubectl get nep: no row of a1's view of grid:\n%s", out)
	} else if err := endpointsColumn(row[1], "", sets.New(s.podIPs(t, "grid", "a1", "a2")...)); err != nil {
		t.Errorf("kubectl get nep, a1's view of grid: %v:\n%s", err, out)
	}
}

func TestNodeEndpointsWatchFollowsARelabel(t *testing.T) {
	s := newSite(t)
	s.expectViews(t, "a1", map[string][]string{"grid": s.podIPs(t, "grid", "a1", "a2")})
	ctx := context.Background()
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	list, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1")})
	if err != nil {
		t.Fatal(err)
	}
	w, err := views.Watch(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1"), ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	start := time.Now()
	s.label(t, "a1", framework.UnitKey, "b")
	timeout := time.After(5 * time.Second)
	for {
		select {
		case e := <-w.ResultChan():
			view, ok := e.Object.(*topologyv1alpha1.NodeEndpoints)
			if e.Type != watch.Modified || !ok || view.ServiceName != "grid" {
				continue
			}
			// a1 takes its own endpoint along into unit b.
			if got, want := addresses(view), s.podIPs(t, "grid", "a1", "b1"); !slices.Equal(got, want) {
				t.Fatalf("a1 in unit b routes grid to %v, want the Pods of unit b %v", got, want)
			}
			t.Logf("relabel to watch event: %s", time.Since(start))
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("the watch streamed the relabel after %s, want within 1s", elapsed)
			}
			return
		case <-timeout:
			t.Fatal("no MODIFIED event for a1's view of grid within 5s of the relabel")
		}
	}
}

func TestNodeEndpointsResourceVersionsAndPaging(t *testing.T) {
	s := newSite(t)
	s.expectViews(t, "b1", map[string][]string{"grid": s.podIPs(t, "grid", "b1")})
	ctx := context.Background()
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	whole, err := views.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var paged []string
	opts := metav1.ListOptions{Limit: 2}
	for {
		page, err := views.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			paged = append(paged, item.Name)
		}
		if opts.Continue = page.Continue; opts.Continue == "" {
			break
		}
	}
	var want []string
	for _, item := range whole.Items {
		want = append(want, item.Name)
	}
	if !slices.Equal(paged, want) || len(want) < 9 {
		t.Errorf("pages of 2 gave %v, the whole list %v", paged, want)
	}
	// A plain watch from "" (kubectl get -w without a list) starts with the
	// current views as ADDED.
	plain, err := views.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-plain.ResultChan():
		if e.Type != watch.Added {
			t.Errorf("a plain watch starts with %s %v, want ADDED", e.Type, e.Object)
		}
	case <-time.After(5 * time.Second):
		t.Error("a plain watch sent nothing")
	}
	plain.Stop()
	if _, err := views.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("watch from resourceVersion 1: %v, want 410", err)
	}
	if _, err := views.List(ctx, metav1.ListOptions{Limit: 1, Continue: "bm90IGEgdG9rZW4"}); !apierrors.IsBadRequest(err) {
		t.Errorf("a tampered continue token: %v, want 400", err)
	}
}

// A Service whose topology annotation cannot be parsed is not pruned, and
// gets a Warning Event saying why.
func TestMalformedTopologyIsReported(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"[not json"}}}`, topology.AnnotationTopologyKeys)
	if _, err := kubeClient.CoreV1().Services(s.NS).Patch(ctx, "grid", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	s.expectViews(t, "b1", map[string][]string{"grid": s.podIPs(t, "grid", "a1", "a2", "b1")})
	localcluster.Eventually(t, 10*time.Second, "a MalformedTopology Warning on the Service", func(ctx context.Context) error {
		events, err := kubeClient.CoreV1().Events(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=grid,reason=MalformedTopology"})
		if err != nil {
			return err
		}
		if len(events.Items) == 0 || events.Items[0].Type != corev1.EventTypeWarning || !strings.Contains(events.Items[0].Message, topology.AnnotationTopologyKeys) {
			return fmt.Errorf("events: %+v", events.Items)
		}
		return nil
	})
}
