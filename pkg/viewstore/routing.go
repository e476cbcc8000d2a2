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
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/topology"
)

// ReasonNoEndpointsForNodes is the reason of the Warning a Service gets when
// some of its nodes route it to no endpoint while it has some.
const ReasonNoEndpointsForNodes = "NoEndpointsForNodes"

// noRule is the rule label of a Service that is not pruned and carries no
// rule, whose NodeEndpoints name no topology rule.
const noRule = "None"

// RoutesReader reads where the nodes' traffic to each Service goes; each
// call holds the store's read lock for one Service at most.
type RoutesReader interface {
	RoutedServices() []types.NamespacedName
	Routes(types.NamespacedName) (topology.Routes, error)
}

// RoutingObserver turns where the nodes route every Service into the
// routing metrics, and warns about Services that leave nodes without an
// endpoint. Every replica keeps the metrics; only the leader sends Events.
type RoutingObserver struct {
	routes   RoutesReader
	services corelisters.ServiceLister
	recorder record.EventRecorder
	isLeader func() bool

	// ranks holds the last pass's routes of each Service, by group, so that
	// the next pass counts the nodes that fell back since.
	ranks map[types.NamespacedName]routeRanks
	// stranded are the Services with a nodes_without_endpoints series, and
	// announced those of them this replica sent the Warning for while they
	// were stranded.
	stranded, announced sets.Set[types.NamespacedName]
}

// routeRanks is a compact summary of a Service's routes: per group labels,
// the nodes at each rank, ranks ascending, without any node's name.
type routeRanks struct {
	rule   string
	keys   []string
	groups map[string][]rankedNodes
}

type rankedNodes struct{ rank, nodes int }

// NewRoutingObserver returns an observer of routes whose Events name the
// Services of the lister; isLeader tells whether this replica sends them.
func NewRoutingObserver(routes RoutesReader, services corelisters.ServiceLister, recorder record.EventRecorder, isLeader func() bool) *RoutingObserver {
	return &RoutingObserver{routes: routes, services: services, recorder: recorder, isLeader: isLeader,
		stranded: sets.New[types.NamespacedName](), announced: sets.New[types.NamespacedName]()}
}

// Run makes a pass every interval, which must be positive, until ctx is done.
func (o *RoutingObserver) Run(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			o.pass()
		}
	}
}

// pass reads every Service's routes, one Service at a time so that the
// store's writers wait for one Service at most, and updates the metrics.
func (o *RoutingObserver) pass() {
	start := time.Now()
	type ruleRoute struct{ rule, route string }
	nodes := map[ruleRoute]int{}
	ranks := make(map[types.NamespacedName]routeRanks, len(o.ranks))
	stranded := sets.New[types.NamespacedName]()
	for _, svc := range o.routes.RoutedServices() {
		routes, err := o.routes.Routes(svc)
		if err != nil {
			// Deleted since the list, or the views are not loaded: the
			// Service is dropped as gone.
			klog.V(4).InfoS("Skipping a Service's routes", "service", svc, "err", err)
			continue
		}
		now := rankRoutes(routes)
		for _, g := range routes.Groups {
			nodes[ruleRoute{now.rule, g.Position}] += g.Nodes
		}
		if before, ok := o.ranks[svc]; ok && before.rule == now.rule && slices.Equal(before.keys, now.keys) {
			if fell := fellBack(before, now); fell > 0 {
				routingFallbacks.WithLabelValues(now.rule).Add(float64(fell))
			}
		}
		ranks[svc] = now
		if none, example := unrouted(routes); none > 0 {
			stranded.Insert(svc)
			nodesWithoutEndpoints.WithLabelValues(svc.Namespace, svc.Name).Set(float64(none))
			o.announce(svc, none, example)
		}
	}
	for svc := range o.stranded.Difference(stranded) {
		nodesWithoutEndpoints.DeleteLabelValues(svc.Namespace, svc.Name)
	}
	// A Service that left the state is announced again when it re-enters.
	o.ranks, o.stranded, o.announced = ranks, stranded, o.announced.Intersection(stranded)
	routingNodes.Reset()
	for key, n := range nodes {
		routingNodes.WithLabelValues(key.rule, key.route).Set(float64(n))
	}
	routingPassSeconds.Observe(time.Since(start).Seconds())
	routingLastPass.SetToCurrentTime()
}

// rankRoutes summarizes routes by group labels and rank: the index of the
// chosen key, a Service that is not pruned first, no endpoint last.
func rankRoutes(routes topology.Routes) routeRanks {
	out := routeRanks{rule: cmp.Or(routes.Rule, noRule), keys: routes.Keys, groups: map[string][]rankedNodes{}}
	// A rule may have thousands of keys and a Service thousands of groups,
	// which share a few positions.
	byPosition := map[string]int{}
	for _, g := range routes.Groups {
		rank, ok := byPosition[g.Position]
		if !ok {
			rank = math.MaxInt
			if g.Position != topology.PositionNone {
				rank = max(0, slices.Index(routes.Keys, g.ChosenKey))
			}
			byPosition[g.Position] = rank
		}
		key := labels.Set(g.Labels).String()
		out.groups[key] = append(out.groups[key], rankedNodes{rank: rank, nodes: g.Nodes})
	}
	for _, ranked := range out.groups {
		slices.SortFunc(ranked, func(a, b rankedNodes) int { return cmp.Compare(a.rank, b.rank) })
	}
	return out
}

// fellBack counts the nodes whose route got worse from one pass to the next,
// group by group. Where a group's nodes route several ways, nothing tells
// which node moved: they are paired in rank order, the fewest moves that
// explain the change.
func fellBack(before, now routeRanks) int {
	fell := 0
	for key, after := range now.groups {
		prev := before.groups[key]
		var b, a rankedNodes
		for i, j := 0, 0; ; {
			if b.nodes == 0 && i < len(prev) {
				b, i = prev[i], i+1
			}
			if a.nodes == 0 && j < len(after) {
				a, j = after[j], j+1
			}
			if a.nodes == 0 || b.nodes == 0 {
				break
			}
			n := min(a.nodes, b.nodes)
			if a.rank > b.rank {
				fell += n
			}
			a.nodes, b.nodes = a.nodes-n, b.nodes-n
		}
	}
	return fell
}

// unrouted counts the nodes that route a Service with endpoints to none,
// and returns its largest group of them as the example.
func unrouted(routes topology.Routes) (int, topology.RouteGroup) {
	var none int
	var example topology.RouteGroup
	if routes.Total == 0 {
		return 0, example
	}
	for _, g := range routes.Groups {
		if g.Position == topology.PositionNone {
			none += g.Nodes
			if g.Nodes > example.Nodes {
				example = g
			}
		}
	}
	return none, example
}

// announce sends the Warning of a stranded Service once per entry into that
// state, from the leader. A new leader announces the stranded Services it
// has not announced itself: a Service may get a second Warning on failover.
func (o *RoutingObserver) announce(svc types.NamespacedName, none int, example topology.RouteGroup) {
	if o.announced.Has(svc) || !o.isLeader() {
		return
	}
	obj, err := o.services.Services(svc.Namespace).Get(svc.Name)
	if err != nil {
		// Deleted since: the next pass drops it.
		klog.V(4).InfoS("Cannot read a Service to warn about", "service", svc, "err", err)
		return
	}
	o.recorder.Event(obj, corev1.EventTypeWarning, ReasonNoEndpointsForNodes, noEndpointsMessage(none, example))
	o.announced.Insert(svc)
}

// noEndpointsMessage names how many nodes route nowhere and one group of
// them, as "superedge.io/nodeunit=u7".
func noEndpointsMessage(none int, example topology.RouteGroup) string {
	where := "without the rule's labels"
	if len(example.Labels) > 0 {
		where = "of " + labels.Set(example.Labels).String()
	}
	head := fmt.Sprintf("%d nodes route", none)
	if none == 1 {
		head = "1 node routes"
	}
	group := fmt.Sprintf("the %d nodes %s", example.Nodes, where)
	if example.Nodes == 1 && len(example.SampleNodes) == 1 {
		group = fmt.Sprintf("node %s %s", example.SampleNodes[0], where)
	}
	return head + " this Service to no endpoint, e.g. " + group + ": no tier of theirs holds one and the rule has no fallback that does"
}
