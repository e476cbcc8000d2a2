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
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

// checkCounts checks a Service's counts, perhaps cached, against its routes.
// It may run in any goroutine.
func checkCounts(t *testing.T, e *topology.Engine, svc types.NamespacedName) topology.RouteCounts {
	t.Helper()
	got, err := e.RouteCounts(svc)
	routes, routesErr := e.Routes(svc)
	if (err == nil) != (routesErr == nil) {
		t.Errorf("counts of %s: %v, routes: %v", svc, err, routesErr)
	}
	if want := topologytest.CountRoutes(routes); err == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("counts of %s\n got %+v\nwant %+v", svc, got, want)
	}
	return got
}

// TestRouteCountsAgreeWithRoutes counts after every random change, so that
// counts cached before a change, dropped or brought up to date by it, are
// checked, on six nodes with any change and on 48 with few label values.
// SEEDS sets how many seeds.
func TestRouteCountsAgreeWithRoutes(t *testing.T) {
	saved := randomNodes
	defer func() { randomNodes = saved }()
	for _, tc := range []struct {
		name   string
		nodes  []string
		change func(*rand.Rand, *topology.Engine, *topologytest.Oracle) (string, []topology.SliceChange)
	}{
		{name: "six nodes", nodes: saved, change: randomChange},
		{name: "48 nodes", nodes: manyRandomNodes, change: manyNodesChange},
	} {
		randomNodes = tc.nodes
		for _, seed := range randomSeeds(500, 3) {
			t.Run(fmt.Sprintf("%s seed %d", tc.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, seed))
				engine, model := topology.NewEngine(), topologytest.NewOracle()
				positions := 0
				for step := range 1000 {
					what, _ := tc.change(rng, engine, model)
					for _, svc := range randomServices {
						positions += len(maps.Collect(checkCounts(t, engine, svc).ByPosition()))
						if t.Failed() {
							t.Fatalf("step %d, %s", step, what)
						}
					}
				}
				if positions == 0 {
					t.Error("no node was counted")
				}
			})
		}
	}
}

// TestRouteCountsCatchUpWithNodeChanges counts after batches of node
// changes, fewer and more than the engine remembers, so that counts brought
// up to date change by change, and those counted again, both agree with
// the routes. The changes are mostly of nodes no endpoint is on, which
// leave the Services' views, and their cached counts, in place. SEEDS sets
// how many seeds.
func TestRouteCountsCatchUpWithNodeChanges(t *testing.T) {
	saved := randomNodes
	defer func() { randomNodes = saved }()
	randomNodes = manyRandomNodes
	bare := make([]string, 24)
	for i := range bare {
		bare[i] = fmt.Sprintf("bare-%02d", i)
	}
	for _, seed := range randomSeeds(700, 3) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed))
			engine, model := topology.NewEngine(), topologytest.NewOracle()
			for range 400 {
				manyNodesChange(rng, engine, model)
			}
			for _, batch := range []int{1, 2, 17, 255, 256, 257, 511, 512, 513, 1000, 3} {
				for _, svc := range randomServices {
					checkCounts(t, engine, svc)
				}
				for range batch {
					name := oneOf(rng, bare...)
					if rng.IntN(100) == 0 {
						name = oneOf(rng, randomNodes...)
					}
					if rng.IntN(5) == 0 {
						engine.DeleteNode(name)
						continue
					}
					engine.SetNode(name, fewLabelValues(rng))
				}
				for _, svc := range randomServices {
					checkCounts(t, engine, svc)
				}
				if t.Failed() {
					t.Fatalf("after a batch of %d node changes", batch)
				}
			}
		})
	}
}

// TestRouteCountsCache checks that counts are computed again after each
// change they depend on, and kept through a heartbeat. echo-svc is
// any-match on the unit with endpoints in shanghai-01 and hangzhou-01: bj-1,
// bare and blank route it to none.
func TestRouteCountsCache(t *testing.T) {
	anyMatch := withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["superedge.io/nodeunit"]`})
	ordered := withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny})
	ordered.Namespace, ordered.Name = echo.Namespace, echo.Name
	tests := []struct {
		name   string
		change func(*topology.Engine)
		want   topology.RouteCounts
	}{
		{
			name:   "bj-1, without endpoints, moves into hangzhou-01",
			change: func(e *topology.Engine) { e.SetNode("bj-1", map[string]string{keyUnit: "hangzhou-01"}) },
			want:   topology.RouteCounts{Rule: topology.RuleSuperEdge, Nodes: 6, Local: 4, None: 2},
		},
		{
			name:   "a node appears in shanghai-01",
			change: func(e *topology.Engine) { e.SetNode("sh-3", map[string]string{keyUnit: "shanghai-01"}) },
			want:   topology.RouteCounts{Rule: topology.RuleSuperEdge, Nodes: 7, Local: 4, None: 3},
		},
		{
			name:   "bare goes",
			change: func(e *topology.Engine) { e.DeleteNode("bare") },
			want:   topology.RouteCounts{Rule: topology.RuleSuperEdge, Nodes: 5, Local: 3, None: 2},
		},
		{
			// bj-1 has no endpoint in its zone either.
			name:   "the Service turns ordered unit, zone, *",
			change: func(e *topology.Engine) { e.SetService(ordered.DeepCopy()) },
			want:   topology.RouteCounts{Rule: topology.RuleGridview, Nodes: 6, Local: 3, Fallback: []int{0, 3}},
		},
		{
			name:   "a heartbeat keeps them",
			change: func(e *topology.Engine) { e.SetNode("bj-1", reviewNodes["bj-1"]) },
			want:   topology.RouteCounts{Rule: topology.RuleSuperEdge, Nodes: 6, Local: 3, None: 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := reviewCluster(nil, anyMatch.DeepCopy(), slices.Concat(shanghai(true, false), hangzhou)...)
			checkCounts(t, e, echo)
			tc.change(e)
			got := checkCounts(t, e, echo)
			if got.Rule != tc.want.Rule || got.Nodes != tc.want.Nodes || got.Local != tc.want.Local || got.None != tc.want.None || !slices.Equal(got.Fallback, tc.want.Fallback) {
				t.Errorf("counts %+v, want %+v", got, tc.want)
			}
			// Cached: reading them again computes nothing.
			if allocs := testing.AllocsPerRun(10, func() { _, _ = e.RouteCounts(echo) }); allocs != 0 {
				t.Errorf("%v allocations to read cached counts", allocs)
			}
		})
	}
}

// TestRouteCountsRunConcurrently counts, routes and reads views from several
// goroutines after each node change, as the store's readers do under its
// read lock: with -race, it finds what the cache shares unguarded.
func TestRouteCountsRunConcurrently(t *testing.T) {
	for _, svc := range []*corev1.Service{
		withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny}),
		withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["superedge.io/nodeunit"]`}),
		withTrafficDistribution(corev1.ServiceTrafficDistributionPreferSameNode, nil),
		withAnnotations(nil),
	} {
		e := reviewCluster(nil, svc, slices.Concat(shanghai(true, false), hangzhou, beijing)...)
		for round, unit := range []string{"beijing-01", "hangzhou-01", "shanghai-01", "beijing-01"} {
			e.SetNode("bare", map[string]string{keyUnit: unit})
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					e.View("bare", echo)
					checkCounts(t, e, echo)
				})
			}
			wg.Wait()
			if t.Failed() {
				t.Fatalf("%s, round %d", svc.Annotations, round)
			}
		}
	}
}

// BenchmarkEdge10kRouteCountsOfEveryService counts the routes of the 5,000
// Services of edge-10k, as a pass of the routing metrics does: after a node
// moved to another unit, brought up to date from the counts before (but
// the ~11 Services with endpoints on it, counted again); after more node
// changes than the engine remembers, counted again; warm, from the counts
// cached by the pass before.
func BenchmarkEdge10kRouteCountsOfEveryService(b *testing.B) {
	e := newEdge10k().engine()
	countAll := func(b *testing.B) {
		for _, svc := range e.Services("") {
			if _, err := e.RouteCounts(svc); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("a node moved", func(b *testing.B) {
		countAll(b)
		i := 0
		for b.Loop() {
			i++
			e.SetNode("node-00000", unitLabels(i%2))
			countAll(b)
		}
	})
	b.Run("counted again", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			for i := range 2*256 + 1 {
				e.SetNode("node-00000", unitLabels(i%2))
			}
			b.StartTimer()
			countAll(b)
		}
	})
	b.Run("warm", func(b *testing.B) {
		countAll(b)
		for b.Loop() {
			countAll(b)
		}
	})
}
