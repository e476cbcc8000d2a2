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

package viewstore

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

const unitKey = "superedge.io/nodeunit"

var (
	svcA = types.NamespacedName{Namespace: "edge", Name: "a"}
	svcB = types.NamespacedName{Namespace: "edge", Name: "b"}
)

// fakeRoutes serves fixed routes, and counts them; a Service listed without
// routes fails, as one deleted between the list and its read. It records
// the Services whose routes, not counts, were read.
type fakeRoutes struct {
	routes map[types.NamespacedName]topology.Routes
	passes atomic.Int32
	read   []types.NamespacedName
}

func (f *fakeRoutes) RoutedServices() []types.NamespacedName {
	f.passes.Add(1)
	return slices.SortedFunc(maps.Keys(f.routes), func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
}

func (f *fakeRoutes) Routes(svc types.NamespacedName) (topology.Routes, error) {
	f.read = append(f.read, svc)
	return f.routesOf(svc)
}

func (f *fakeRoutes) routesOf(svc types.NamespacedName) (topology.Routes, error) {
	routes, ok := f.routes[svc]
	if !ok || routes.Groups == nil {
		return topology.Routes{}, apierrors.NewNotFound(corev1.Resource("services"), svc.Name)
	}
	return routes, nil
}

// RouteCounts sums the groups by position, as the engine counts them.
func (f *fakeRoutes) RouteCounts(svc types.NamespacedName) (topology.RouteCounts, error) {
	routes, err := f.routesOf(svc)
	return topologytest.CountRoutes(routes), err
}

// uidRecorder records the UID of each Event's object, which kubectl
// describe finds it by.
type uidRecorder struct {
	*record.FakeRecorder
	uids []types.UID
}

func (r *uidRecorder) Event(obj runtime.Object, eventtype, reason, message string) {
	r.uids = append(r.uids, obj.(metav1.Object).GetUID())
	r.FakeRecorder.Event(obj, eventtype, reason, message)
}

func (r *uidRecorder) drain() []string {
	var events []string
	for len(r.Events) > 0 {
		events = append(events, <-r.Events)
	}
	return events
}

// unit is a group of nodes of one unit routing to position, under the keys
// unit then zone; each node is named after its unit.
func unit(name, position string, nodes int) topology.RouteGroup {
	chosen := map[string]string{topology.PositionLocal: unitKey, topology.FallbackPosition(1): topology.KeyZone}[position]
	return topology.RouteGroup{Labels: map[string]string{unitKey: name}, Nodes: nodes, Position: position, ChosenKey: chosen,
		SampleNodes: []string{name + "-node"}[:min(nodes, 1)]}
}

func superEdge(endpoints int, groups ...topology.RouteGroup) topology.Routes {
	return topology.Routes{Rule: topology.RuleSuperEdge, Keys: []string{unitKey, topology.KeyZone}, Ready: endpoints, Total: endpoints, Groups: groups}
}

func newTestObserver(reader RoutesReader, leader *bool, services ...types.NamespacedName) (*RoutingObserver, *uidRecorder) {
	RegisterMetrics()
	routingNodes.Reset()
	nodesWithoutEndpoints.Reset()
	recorder := &uidRecorder{FakeRecorder: record.NewFakeRecorder(10)}
	return NewRoutingObserver(reader, newTestLister(services...), recorder, func() bool { return *leader }), recorder
}

// newTestLister lists Services whose UIDs are "uid-<name>".
func newTestLister(services ...types.NamespacedName) corelisters.ServiceLister {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, svc := range services {
		_ = indexer.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name, UID: types.UID("uid-" + svc.Name)}})
	}
	return corelisters.NewServiceLister(indexer)
}

// series reads a gauge family's series by their labels, "k=v,k=v".
func series(t *testing.T, name string) map[string]float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			var pairs []string
			for _, label := range m.GetLabel() {
				pairs = append(pairs, label.GetName()+"="+label.GetValue())
			}
			out[strings.Join(pairs, ",")] = m.GetGauge().GetValue()
		}
	}
	return out
}

// fallbacks sums gridview_routing_fallbacks_total over the rules.
func fallbacks(t *testing.T) float64 {
	t.Helper()
	sum := 0.0
	for _, rule := range []string{topology.RuleSuperEdge, topology.RuleGridview} {
		value, err := testutil.GetCounterMetricValue(routingFallbacks.WithLabelValues(rule))
		if err != nil {
			t.Fatal(err)
		}
		sum += value
	}
	return sum
}

func gridview(routes topology.Routes) topology.Routes {
	routes.Rule = topology.RuleGridview
	return routes
}

const stranded = "Warning NoEndpointsForNodes "

func TestRoutingObserverPasses(t *testing.T) {
	leader := true
	reader := &fakeRoutes{}
	observer, recorder := newTestObserver(reader, &leader, svcA, svcB)
	unpruned := topology.Routes{Total: 4, Ready: 4, Groups: []topology.RouteGroup{{Nodes: 4, Position: topology.PositionAll}}}
	steps := []struct {
		name         string
		routes       map[types.NamespacedName]topology.Routes
		wantNodes    map[string]float64
		wantStranded map[string]float64
		wantFell     float64
		wantEvents   []string
	}{{
		name:      "every unit local",
		routes:    map[types.NamespacedName]topology.Routes{svcA: superEdge(2, unit("u1", "local", 3), unit("u2", "local", 2)), svcB: unpruned},
		wantNodes: map[string]float64{"route=local,rule=SuperEdge": 5, "route=all,rule=None": 4},
	}, {
		name:         "u1 falls back to its zone, u2 to no endpoint",
		routes:       map[types.NamespacedName]topology.Routes{svcA: superEdge(2, unit("u1", "fallback-1", 3), unit("u2", "none", 2)), svcB: unpruned},
		wantNodes:    map[string]float64{"route=fallback-1,rule=SuperEdge": 3, "route=none,rule=SuperEdge": 2, "route=all,rule=None": 4},
		wantStranded: map[string]float64{"namespace=edge,service=a": 2},
		wantFell:     5,
		wantEvents: []string{stranded + "2 nodes route this Service to no endpoint, e.g. the 2 nodes of superedge.io/nodeunit=u2: " +
			"no tier of theirs holds one and the rule has no fallback that does"},
	}, {
		name:         "unchanged: no second Warning, no fallback",
		routes:       map[types.NamespacedName]topology.Routes{svcA: superEdge(2, unit("u1", "fallback-1", 3), unit("u2", "none", 2)), svcB: unpruned},
		wantNodes:    map[string]float64{"route=fallback-1,rule=SuperEdge": 3, "route=none,rule=SuperEdge": 2, "route=all,rule=None": 4},
		wantStranded: map[string]float64{"namespace=edge,service=a": 2},
	}, {
		name:         "u1 falls from its zone to none, no more nodes astray: no fallback; b is deleted before its read",
		routes:       map[types.NamespacedName]topology.Routes{svcA: superEdge(2, unit("u1", "none", 3), unit("u2", "none", 2)), svcB: {}},
		wantNodes:    map[string]float64{"route=none,rule=SuperEdge": 5},
		wantStranded: map[string]float64{"namespace=edge,service=a": 5},
	}, {
		name:      "recovered: the series goes",
		routes:    map[types.NamespacedName]topology.Routes{svcA: superEdge(2, unit("u1", "local", 3), unit("u2", "local", 2))},
		wantNodes: map[string]float64{"route=local,rule=SuperEdge": 5},
	}, {
		name:         "one node of u2 strands again: a new Warning",
		routes:       map[types.NamespacedName]topology.Routes{svcA: superEdge(2, unit("u1", "local", 3), unit("u2", "local", 1), unit("u2", "none", 1))},
		wantNodes:    map[string]float64{"route=local,rule=SuperEdge": 4, "route=none,rule=SuperEdge": 1},
		wantStranded: map[string]float64{"namespace=edge,service=a": 1},
		wantFell:     1,
		wantEvents: []string{stranded + "1 node routes this Service to no endpoint, e.g. node u2-node of superedge.io/nodeunit=u2: " +
			"no tier of theirs holds one and the rule has no fallback that does"},
	}, {
		name:      "a change of rule is no fallback",
		routes:    map[types.NamespacedName]topology.Routes{svcA: gridview(superEdge(2, unit("u1", "fallback-1", 3), unit("u2", "fallback-1", 2)))},
		wantNodes: map[string]float64{"route=fallback-1,rule=Gridview": 5},
	}, {
		name:         "u1 comes back as u2 falls further, to none: the net count is 0",
		routes:       map[types.NamespacedName]topology.Routes{svcA: gridview(superEdge(2, unit("u1", "local", 3), unit("u2", "none", 2)))},
		wantNodes:    map[string]float64{"route=local,rule=Gridview": 3, "route=none,rule=Gridview": 2},
		wantStranded: map[string]float64{"namespace=edge,service=a": 2},
		wantEvents: []string{stranded + "2 nodes route this Service to no endpoint, e.g. the 2 nodes of superedge.io/nodeunit=u2: " +
			"no tier of theirs holds one and the rule has no fallback that does"},
	}, {
		name:         "u1 falls back again: 3",
		routes:       map[types.NamespacedName]topology.Routes{svcA: gridview(superEdge(2, unit("u1", "fallback-1", 3), unit("u2", "none", 2)))},
		wantNodes:    map[string]float64{"route=fallback-1,rule=Gridview": 3, "route=none,rule=Gridview": 2},
		wantStranded: map[string]float64{"namespace=edge,service=a": 2},
		wantFell:     3,
	}, {
		name: "a change of keys is no fallback, and without endpoints no node is stranded",
		routes: map[types.NamespacedName]topology.Routes{svcA: {Rule: topology.RuleGridview, Keys: []string{"region", unitKey},
			Groups: []topology.RouteGroup{{Labels: map[string]string{unitKey: "u1"}, Nodes: 5, Position: topology.PositionNone}}}},
		wantNodes: map[string]float64{"route=none,rule=Gridview": 5},
	}}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			reader.routes = step.routes
			fellBefore := fallbacks(t)
			observer.pass()
			if got := series(t, "gridview_routing_nodes"); !maps.Equal(got, step.wantNodes) {
				t.Errorf("gridview_routing_nodes = %v, want %v", got, step.wantNodes)
			}
			if got := series(t, "gridview_service_nodes_without_endpoints"); !maps.Equal(got, step.wantStranded) {
				t.Errorf("gridview_service_nodes_without_endpoints = %v, want %v", got, step.wantStranded)
			}
			if fell := fallbacks(t) - fellBefore; fell != step.wantFell {
				t.Errorf("fallbacks counted %v, want %v", fell, step.wantFell)
			}
			if got := recorder.drain(); !slices.Equal(got, step.wantEvents) {
				t.Errorf("Events = %q, want %q", got, step.wantEvents)
			}
			// Counts serve the metrics; routes only name a Warning's nodes.
			if len(reader.read) != len(step.wantEvents) {
				t.Errorf("routes read of %v, for %d Warnings", reader.read, len(step.wantEvents))
			}
			reader.read = nil
		})
	}
}

// Only the leader warns; a replica that becomes leader warns of the
// stranded Services it has not warned of itself.
func TestRoutingWarningFromLeaderOnly(t *testing.T) {
	leader := false
	missing := types.NamespacedName{Namespace: "edge", Name: "not-in-the-lister-yet"}
	reader := &fakeRoutes{routes: map[types.NamespacedName]topology.Routes{svcA: superEdge(1, unit("u7", "none", 3))}}
	observer, recorder := newTestObserver(reader, &leader, svcA)
	steps := []struct {
		name       string
		leader     bool
		addMissing bool
		wantUIDs   []types.UID
	}{
		{name: "a follower keeps the metric but does not warn"},
		{name: "the new leader warns", leader: true, wantUIDs: []types.UID{"uid-a"}},
		{name: "once", leader: true},
		{name: "a Service the lister lacks is warned of later", leader: true, addMissing: true},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			leader = step.leader
			if step.addMissing {
				reader.routes[missing] = superEdge(1, unit("u8", "none", 2))
			}
			recorder.uids = nil
			observer.pass()
			if got := series(t, "gridview_service_nodes_without_endpoints")["namespace=edge,service=a"]; got != 3 {
				t.Errorf("nodes without endpoints of a = %v, want 3", got)
			}
			if !slices.Equal(recorder.uids, step.wantUIDs) {
				t.Errorf("Events on the UIDs %v, want %v", recorder.uids, step.wantUIDs)
			}
			if len(reader.read) != len(step.wantUIDs) {
				t.Errorf("routes read of %v, for %d Warnings", reader.read, len(step.wantUIDs))
			}
			reader.read = nil
			recorder.drain()
		})
	}
	observer.services = newTestLister(svcA, missing)
	observer.pass()
	if want := []types.UID{"uid-not-in-the-lister-yet"}; !slices.Equal(recorder.uids, want) {
		t.Errorf("Events on the UIDs %v once the lister has the Service, want %v", recorder.uids, want)
	}
}

func TestRoutingObserverRunsEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader := true
		reader := &fakeRoutes{}
		observer, _ := newTestObserver(reader, &leader)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			observer.Run(ctx, 30*time.Second)
			close(done)
		}()
		for _, step := range []struct {
			after      time.Duration
			wantPasses int32
		}{{29 * time.Second, 0}, {2 * time.Second, 1}, {time.Minute, 3}} {
			time.Sleep(step.after)
			synctest.Wait()
			if got := reader.passes.Load(); got != step.wantPasses {
				t.Fatalf("%d passes after another %s, want %d", got, step.after, step.wantPasses)
			}
		}
		cancel()
		<-done
	})
}

// The store's own routes: demo/echo is pruned by unit, the other two are
// not; then unit b loses demo/echo's only endpoint there.
func TestRoutingObserverReadsTheStore(t *testing.T) {
	store := newTestStore(t, testOptions)
	leader := true
	echo := types.NamespacedName{Namespace: "demo", Name: "echo"}
	observer, recorder := newTestObserver(store, &leader, echo)
	observer.pass()
	if got, want := series(t, "gridview_routing_nodes"), map[string]float64{"route=local,rule=SuperEdge": 3, "route=all,rule=None": 6}; !maps.Equal(got, want) {
		t.Errorf("gridview_routing_nodes = %v, want %v", got, want)
	}
	fellBefore := fallbacks(t)
	store.SetEndpointSlice(slice("demo", "echo", "edge-1"))
	observer.pass()
	if got, want := series(t, "gridview_service_nodes_without_endpoints"), map[string]float64{"namespace=demo,service=echo": 1}; !maps.Equal(got, want) {
		t.Errorf("gridview_service_nodes_without_endpoints = %v, want %v", got, want)
	}
	if fell := fallbacks(t) - fellBefore; fell != 1 {
		t.Errorf("fallbacks counted %v, want 1", fell)
	}
	want := []string{stranded + "1 node routes this Service to no endpoint, e.g. node edge-3 of unit=b: no tier of theirs holds one and the rule has no fallback that does"}
	if got := recorder.drain(); !slices.Equal(got, want) {
		t.Errorf("Events = %q, want %q", got, want)
	}
}
