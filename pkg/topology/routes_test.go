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

package topology_test

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

func TestRoutes(t *testing.T) {
	all := slices.Concat(shanghai(true, true), hangzhou, beijing)
	tests := []struct {
		name      string
		svc       *corev1.Service
		endpoints []discoveryv1.Endpoint
		want      []topology.RouteGroup
	}{
		{
			name: "ordered unit, zone, *", svc: withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny}), endpoints: all,
			want: []topology.RouteGroup{
				{Labels: map[string]string{}, Nodes: 2, SampleNodes: []string{"bare", "blank"}, Position: topology.FallbackPosition(2), ChosenKey: "*", Ready: 8},
				{
					Labels: map[string]string{keyUnit: "beijing-01", topology.KeyZone: "north-1"}, Nodes: 1, SampleNodes: []string{"bj-1"},
					Position: topology.PositionLocal, ChosenKey: keyUnit, ChosenValue: "beijing-01", Ready: 1,
				},
				{
					Labels: map[string]string{keyUnit: "hangzhou-01", topology.KeyZone: "east-1"}, Nodes: 1, SampleNodes: []string{"hz-1"},
					Position: topology.PositionLocal, ChosenKey: keyUnit, ChosenValue: "hangzhou-01", Ready: 4,
				},
				{
					Labels: map[string]string{keyUnit: "shanghai-01", topology.KeyZone: "east-1"}, Nodes: 2, SampleNodes: []string{"sh-1", "sh-2"},
					Position: topology.PositionLocal, ChosenKey: keyUnit, ChosenValue: "shanghai-01", Ready: 3,
				},
			},
		},
		{
			name: "any-match", svc: withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["superedge.io/nodeunit"]`}),
			endpoints: slices.Concat(shanghai(true, false), hangzhou),
			want: []topology.RouteGroup{
				{Labels: map[string]string{}, Nodes: 2, SampleNodes: []string{"bare", "blank"}, Position: topology.PositionNone},
				{Labels: map[string]string{keyUnit: "beijing-01"}, Nodes: 1, SampleNodes: []string{"bj-1"}, Position: topology.PositionNone},
				{
					Labels: map[string]string{keyUnit: "hangzhou-01"}, Nodes: 1, SampleNodes: []string{"hz-1"},
					Position: topology.PositionLocal, ChosenKey: keyUnit, ChosenValue: "hangzhou-01", Ready: 4,
				},
				{
					Labels: map[string]string{keyUnit: "shanghai-01"}, Nodes: 2, SampleNodes: []string{"sh-1", "sh-2"},
					Position: topology.PositionLocal, ChosenKey: keyUnit, ChosenValue: "shanghai-01", Ready: 1,
				},
			},
		},
		{
			// hz-1 shares its zone with sh-1 and sh-2 but has no endpoint of
			// its own: it lands in another group of the zone.
			name: "PreferSameNode", svc: withTrafficDistribution(corev1.ServiceTrafficDistributionPreferSameNode, nil),
			endpoints: slices.Concat(shanghai(true, true), beijing),
			want: []topology.RouteGroup{
				{Labels: map[string]string{}, Nodes: 2, SampleNodes: []string{"bare", "blank"}, Position: topology.FallbackPosition(2), ChosenKey: "*", Ready: 4},
				{
					Labels: map[string]string{topology.KeyZone: "east-1"}, Nodes: 2, SampleNodes: []string{"sh-1", "sh-2"},
					Position: topology.PositionLocal, ChosenKey: topology.KeyHostname, Ready: 2,
				},
				{
					Labels: map[string]string{topology.KeyZone: "east-1"}, Nodes: 1, SampleNodes: []string{"hz-1"},
					Position: topology.FallbackPosition(1), ChosenKey: topology.KeyZone, ChosenValue: "east-1", Ready: 3,
				},
				{
					Labels: map[string]string{topology.KeyZone: "north-1"}, Nodes: 1, SampleNodes: []string{"bj-1"},
					Position: topology.PositionLocal, ChosenKey: topology.KeyHostname, Ready: 1,
				},
			},
		},
		{
			name: "not pruned", svc: withAnnotations(nil), endpoints: all,
			want: []topology.RouteGroup{{Nodes: 6, SampleNodes: []string{"bare", "bj-1", "blank"}, Position: topology.PositionAll, Ready: 8}},
		},
	}
	// A Service that groups the nodes by zone lets a PreferSameNode one
	// visit them by zone.
	zonal := withTrafficDistribution(corev1.ServiceTrafficDistributionPreferSameZone, nil)
	zonal.Namespace, zonal.Name = "demo", "zonal"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := reviewCluster(nil, tc.svc.DeepCopy(), tc.endpoints...)
			t.Run("alone", func(t *testing.T) { checkRoutesOf(t, e, tc.endpoints, tc.want) })
			e.SetService(zonal)
			t.Run("with a zonal Service", func(t *testing.T) { checkRoutesOf(t, e, tc.endpoints, tc.want) })
		})
	}
	if _, err := reviewCluster(nil, withAnnotations(nil)).Routes(types.NamespacedName{Namespace: "demo", Name: "missing"}); !errors.Is(err, topology.ErrUnknownService) {
		t.Errorf("routes of a missing Service: %v, want %v", err, topology.ErrUnknownService)
	}
}

func checkRoutesOf(t *testing.T, e *topology.Engine, endpoints []discoveryv1.Endpoint, want []topology.RouteGroup) {
	got, err := e.Routes(echo)
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodes != len(reviewNodes) || got.Total != len(endpoints) {
		t.Errorf("%d nodes, %d endpoints; want %d, %d", got.Nodes, got.Total, len(reviewNodes), len(endpoints))
	}
	if !apiequality.Semantic.DeepEqual(got.Groups, want) {
		t.Errorf("groups\n got %+v\nwant %+v", got.Groups, want)
	}
}

// TestReviewsAndRoutesAgreeWithViews checks, on random engines of every rule,
// that a node's review routes to the ready addresses of its view, that a
// what-if review routes as the oracle would in the state it asks about
// without changing the engine's views, and that a Service's routes group
// the nodes as their reviews say. On six nodes with any change, and on 48
// with few label values, where groups are larger. SEEDS sets how many seeds.
func TestReviewsAndRoutesAgreeWithViews(t *testing.T) {
	saved := randomNodes
	defer func() { randomNodes = saved }()
	for _, tc := range []struct {
		name   string
		nodes  []string
		first  uint64
		change func(*rand.Rand, *topology.Engine, *topologytest.Oracle) (string, []topology.SliceChange)
		every  int
	}{
		{name: "six nodes", nodes: saved, first: 300, change: randomChange, every: 3},
		{name: "48 nodes", nodes: manyRandomNodes, first: 400, change: manyNodesChange, every: 25},
	} {
		randomNodes = tc.nodes
		seen := sets.New[string]()
		for _, seed := range randomSeeds(tc.first, 3) {
			t.Run(fmt.Sprintf("%s seed %d", tc.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, seed))
				engine, model := topology.NewEngine(), topologytest.NewOracle()
				for step := range 1500 {
					what, _ := tc.change(rng, engine, model)
					if step%tc.every > 0 {
						continue
					}
					for _, svc := range randomServices {
						checkRoutes(t, rng, engine, model, svc, seen)
						if t.Failed() {
							t.Fatalf("step %d, %s", step, what)
						}
					}
				}
			})
		}
		for _, want := range []string{"Ordered local", "Ordered fallback", "Ordered none", "AnyMatch local", "AnyMatch fallback", "AnyMatch none", "None all"} {
			if !seen.Has(want) {
				t.Errorf("%s: no review of %s among %v", tc.name, want, sets.List(seen))
			}
		}
	}
}

// checkRoutes checks the reviews of a Service for every node, and its routes
// against them, recording the modes and kinds of positions reviewed.
func checkRoutes(t *testing.T, rng *rand.Rand, engine *topology.Engine, model *topologytest.Oracle, svc types.NamespacedName, seen sets.Set[string]) {
	routes, err := engine.Routes(svc)
	if has := slices.Contains(engine.Services(""), svc); has != (err == nil) {
		t.Fatalf("routes of %s: %v, but it has views: %v", svc, err, has)
	}
	type group struct {
		labels map[string]string
		rank   int
		topology.RouteGroup
	}
	var keys []string
	for _, key := range routes.Keys {
		if key != topology.KeyAny && (key != topology.KeyHostname || routes.Mode != topologyapi.TopologyModeOrdered) {
			keys = append(keys, key)
		}
	}
	byRoute := map[string]*group{}
	for _, node := range randomNodes {
		review, ok := checkReview(t, rng, engine, model, node, svc)
		if !ok {
			continue
		}
		seen.Insert(string(review.Mode) + " " + strings.Split(review.Position, "-")[0])
		view, _ := engine.View(node, svc)
		g := group{labels: map[string]string{}, RouteGroup: topology.RouteGroup{Position: review.Position, Ready: readyEndpointsOf(view)}}
		for _, key := range keys {
			if value, ok := model.Nodes[node][key]; ok {
				g.labels[key] = value
			}
		}
		g.rank = len(routes.Keys)
		switch k, _ := strconv.Atoi(strings.TrimPrefix(review.Position, "fallback-")); review.Position {
		case topology.PositionNone:
		case topology.PositionLocal, topology.PositionAll:
			g.rank = 0
		default:
			g.rank = k
		}
		if review.Mode == topologyapi.TopologyModeNone {
			g.labels = nil
		} else if review.Position != topology.PositionNone {
			g.ChosenKey = routes.Keys[g.rank]
			if tier := review.Tiers[g.rank]; slices.Contains(keys, tier.Key) {
				g.ChosenValue = tier.Value
			}
		}
		id := fmt.Sprint(g.labels, g.Position)
		if byRoute[id] == nil {
			g.Labels = g.labels
			byRoute[id] = &g
		}
		byRoute[id].Nodes++
		if len(byRoute[id].SampleNodes) < 3 {
			byRoute[id].SampleNodes = append(byRoute[id].SampleNodes, node)
		}
	}
	if err != nil {
		return
	}
	var want []topology.RouteGroup
	for _, g := range slices.SortedFunc(maps.Values(byRoute), func(a, b *group) int {
		for _, key := range keys {
			av, aok := a.labels[key]
			bv, bok := b.labels[key]
			if c := cmp.Or(cmp.Compare(boolRank(aok), boolRank(bok)), cmp.Compare(av, bv)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.rank, b.rank)
	}) {
		want = append(want, g.RouteGroup)
	}
	if routes.Nodes != len(engine.Nodes()) || !apiequality.Semantic.DeepEqual(routes.Groups, want) {
		t.Errorf("routes of %s over %d nodes\n got %+v\nwant %+v", svc, routes.Nodes, routes.Groups, want)
	}
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkReview checks a review of a node's view, and one of a random what-if;
// false when the node has no view of the Service.
func checkReview(t *testing.T, rng *rand.Rand, engine *topology.Engine, model *topologytest.Oracle, node string, svc types.NamespacedName) (topology.Review, bool) {
	view, ok := engine.View(node, svc)
	got, err := engine.Review(node, svc, topology.WhatIf{})
	if ok != (err == nil) {
		t.Errorf("review of %s for %s: %v, but a view: %v", svc, node, err, ok)
	}
	if !ok {
		return got, false
	}
	if want := viewAddresses(view); !slices.Equal(got.Addresses, want) {
		t.Errorf("review of %s for %s routes to %v, its view to %v", svc, node, got.Addresses, want)
	}
	routed := slices.ContainsFunc(view.Slices, func(s topologyapi.NodeEndpointSlice) bool { return len(s.Endpoints) > 0 })
	if got.Mode != topologyapi.TopologyModeNone && routed == (got.Position == topology.PositionNone) {
		t.Errorf("review of %s for %s: position %s, but the view routes to endpoints: %v", svc, node, got.Position, routed)
	}
	w := randomWhatIf(rng)
	whatIf, err := engine.Review(node, svc, w)
	if err != nil {
		t.Fatal(err)
	}
	if want := viewAddresses(whatIfModel(model, node, w).View(node, model.Services[svc])); !slices.Equal(whatIf.Addresses, want) {
		t.Errorf("review of %s for %s under %+v routes to %v, the oracle to %v", svc, node, w, whatIf.Addresses, want)
	}
	if after, _ := engine.View(node, svc); after != view {
		t.Errorf("a what-if review changed the view of %s for %s", svc, node)
	}
	return got, true
}

func randomWhatIf(rng *rand.Rand) topology.WhatIf {
	var w topology.WhatIf
	if rng.IntN(2) == 0 {
		w.NodeLabels = map[string]string{}
		for _, key := range randomLabelKeys {
			if rng.IntN(10) < 7 {
				w.NodeLabels[key] = oneOf(rng, randomValues...)
			}
		}
	}
	if rng.IntN(2) == 0 {
		w.UnreadyNodes = sets.New(oneOf(rng, randomNodes...), oneOf(rng, randomNodes...))
	}
	return w
}

// whatIfModel returns the state a what-if asks about, as the oracle's.
func whatIfModel(model *topologytest.Oracle, node string, w topology.WhatIf) *topologytest.Oracle {
	o := topologytest.NewOracle()
	o.Services, o.Namespaces = model.Services, model.Namespaces
	for name, labels := range model.Nodes {
		o.Nodes[name] = labels
	}
	if w.NodeLabels != nil {
		o.Nodes[node] = w.NodeLabels
	}
	for key, slice := range model.Slices {
		slice = slice.DeepCopy()
		for i := range slice.Endpoints {
			if ep := &slice.Endpoints[i]; ep.NodeName != nil && w.UnreadyNodes.Has(*ep.NodeName) {
				ep.Conditions.Ready = ptr.To(false)
			}
		}
		o.Slices[key] = slice
	}
	return o
}

// viewAddresses returns the ready addresses of a view, sorted, each once.
func viewAddresses(view *topology.View) []string {
	var out []string
	for _, slice := range view.Slices {
		for _, ep := range slice.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				out = append(out, ep.Addresses...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestReviewsAndRoutesRunConcurrently reviews and routes while views are
// read, as the store's readers do under its read lock: with -race, it finds
// what they share unguarded.
func TestReviewsAndRoutesRunConcurrently(t *testing.T) {
	for _, svc := range []*corev1.Service{
		withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny}),
		withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["superedge.io/nodeunit","*"]`, topology.AnnotationMinReady: "2"}),
		withTrafficDistribution(corev1.ServiceTrafficDistributionPreferSameNode, nil),
	} {
		e := reviewCluster(nil, svc, slices.Concat(shanghai(true, false), hangzhou, beijing)...)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				for node := range reviewNodes {
					e.View(node, echo)
					if _, err := e.Review(node, echo, topology.WhatIf{UnreadyNodes: sets.New(fmt.Sprint("sh-", i%2+1))}); err != nil {
						t.Error(err)
					}
					if _, err := e.Routes(echo); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
	}
}

// BenchmarkEdge10kRoutes groups edge-10k's 10,000 nodes by where they route
// a Service: svc-0000 is any-match on the unit, svc-0002 ordered
// unit,zone,*, whose nodes the engine groups by unit; svc-0011 is
// PreferSameNode, whose nodes without endpoints are taken by the zone
// grouping of the PreferSameZone Services; svc-0015 is OpenYurt's nodepool,
// whose nodes without endpoints are gathered one by one.
func BenchmarkEdge10kRoutes(b *testing.B) {
	e := newEdge10k().engine()
	for _, name := range []string{"svc-0000", "svc-0002", "svc-0011", "svc-0015"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Routes(types.NamespacedName{Namespace: "ns", Name: name}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEdge10kRoutesOfEveryService routes the 5,000 Services of
// edge-10k, as a pass of the routing metrics does.
func BenchmarkEdge10kRoutesOfEveryService(b *testing.B) {
	e := newEdge10k().engine()
	for b.Loop() {
		for _, svc := range e.Services("") {
			if _, err := e.Routes(svc); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEdge10kReviewWhatIf reviews node-00042 of svc-0002, ordered
// unit,zone,*, with its unit down.
func BenchmarkEdge10kReviewWhatIf(b *testing.B) {
	e := newEdge10k().engine()
	w := topology.WhatIf{UnreadyNodes: sets.New[string]()}
	for i := 40; i < 50; i++ {
		w.UnreadyNodes.Insert(fmt.Sprintf("node-%05d", i))
	}
	for b.Loop() {
		if _, err := e.Review("node-00042", types.NamespacedName{Namespace: "ns", Name: "svc-0002"}, w); err != nil {
			b.Fatal(err)
		}
	}
}

// readyEndpointsOf counts the ready endpoints of a view.
func readyEndpointsOf(v *topology.View) int {
	n := 0
	for _, slice := range v.Slices {
		for i := range slice.Endpoints {
			if topology.Ready(&slice.Endpoints[i]) {
				n++
			}
		}
	}
	return n
}

// BenchmarkRoutesOfADaemonSetPreferringItsNode routes a Service with an
// endpoint on each of 10,000 nodes and trafficDistribution PreferSameNode,
// whose every node is its own tier, right after an endpoint changed: from
// the tiers' counts, with no view per node (which took 3.2-3.8 s).
func BenchmarkRoutesOfADaemonSetPreferringItsNode(b *testing.B) {
	e := topology.NewEngine()
	const nodes = 10_000
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: "ds-x", Labels: map[string]string{discoveryv1.LabelServiceName: "ds"}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for i := range nodes {
		node := fmt.Sprintf("edge-%05d", i)
		e.SetNode(node, map[string]string{topology.KeyZone: fmt.Sprintf("z%d", i%10)})
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)}, NodeName: ptr.To(node),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}
	e.SetService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ds"},
		Spec: corev1.ServiceSpec{TrafficDistribution: ptr.To(corev1.ServiceTrafficDistributionPreferSameNode)}})
	e.SetEndpointSlice(slice)
	svc := types.NamespacedName{Namespace: "ns", Name: "ds"}
	for b.Loop() {
		b.StopTimer()
		// A new endpoint state: the views and their caches are new.
		slice.Endpoints[0].Conditions.Ready = ptr.To(!*slice.Endpoints[0].Conditions.Ready)
		e.SetEndpointSlice(slice.DeepCopy())
		b.StartTimer()
		routes, err := e.Routes(svc)
		if err != nil || len(routes.Groups) == 0 {
			b.Fatal(routes, err)
		}
	}
}
