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
	RouteCounts(types.NamespacedName) (topology.RouteCounts, error)
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

	// astray holds what the last pass read of each Service, so that the
	// next one counts the nodes that fell back since.
	astray map[types.NamespacedName]astrayNodes
	// stranded are the Services with a nodes_without_endpoints series, and
	// announced those of them this replica sent the Warning for while they
	// were stranded.
	stranded, announced sets.Set[types.NamespacedName]
	// routed are the rule and route pairs of the gridview_routing_nodes
	// series the last pass set.
	routed map[ruleRoute]int
}

// ruleRoute labels a gridview_routing_nodes series.
type ruleRoute struct{ rule, route string }

// astrayNodes is how many nodes of a Service routed to a fallback tier or
// to none, under which rule and keys.
type astrayNodes struct {
	rule  string
	keys  []string
	nodes int
}

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

// pass counts where every Service's nodes route, one Service at a time so
// that the store's writers wait for one Service at most, and updates the
// metrics. The counts are cached in the engine until a node or the Service
// changes, so a pass in a steady state computes almost nothing.
func (o *RoutingObserver) pass() {
	start := time.Now()
	nodes := map[ruleRoute]int{}
	astray := make(map[types.NamespacedName]astrayNodes, len(o.astray))
	stranded := sets.New[types.NamespacedName]()
	for _, svc := range o.routes.RoutedServices() {
		counts, err := o.routes.RouteCounts(svc)
		if err != nil {
			// Deleted since the list, or the views are not loaded: the
			// Service is dropped as gone.
			klog.V(4).InfoS("Skipping a Service's routes", "service", svc, "err", err)
			continue
		}
		now := astrayNodes{rule: cmp.Or(counts.Rule, noRule), keys: counts.Keys, nodes: counts.Astray()}
		for route, n := range counts.ByPosition() {
			nodes[ruleRoute{now.rule, route}] += n
		}
		// A net count: nodes that fell back as many others came back, or
		// that went from one fallback to another, count nothing.
		if before, ok := o.astray[svc]; ok && before.rule == now.rule && slices.Equal(before.keys, now.keys) && now.nodes > before.nodes {
			routingFallbacks.WithLabelValues(now.rule).Add(float64(now.nodes - before.nodes))
		}
		astray[svc] = now
		if counts.Total > 0 && counts.None > 0 {
			stranded.Insert(svc)
			nodesWithoutEndpoints.WithLabelValues(svc.Namespace, svc.Name).Set(float64(counts.None))
			o.announce(svc, counts.None)
		}
	}
	for svc := range o.stranded.Difference(stranded) {
		nodesWithoutEndpoints.DeleteLabelValues(svc.Namespace, svc.Name)
	}
	// A Service that left the state is announced again when it re-enters.
	o.astray, o.stranded, o.announced = astray, stranded, o.announced.Intersection(stranded)
	// Series are overwritten and those gone deleted, never reset, so that a
	// scrape during a pass sees no empty gauges.
	for key, n := range nodes {
		routingNodes.WithLabelValues(key.rule, key.route).Set(float64(n))
	}
	for key := range o.routed {
		if _, ok := nodes[key]; !ok {
			routingNodes.DeleteLabelValues(key.rule, key.route)
		}
	}
	o.routed = nodes
	routingPassSeconds.Observe(time.Since(start).Seconds())
	routingLastPass.SetToCurrentTime()
}

// unrouted returns the largest group of nodes that route a Service to no
// endpoint, as the example a Warning names; false when there is none.
func unrouted(routes topology.Routes) (topology.RouteGroup, bool) {
	var example topology.RouteGroup
	for _, g := range routes.Groups {
		if g.Position == topology.PositionNone && g.Nodes > example.Nodes {
			example = g
		}
	}
	return example, example.Nodes > 0
}

// announce sends the Warning of a stranded Service once per entry into that
// state, from the leader, naming its largest group of nodes without endpoints. A new leader announces the stranded Services it
// has not announced itself: a Service may get a second Warning on failover.
func (o *RoutingObserver) announce(svc types.NamespacedName, none int) {
	if o.announced.Has(svc) || !o.isLeader() {
		return
	}
	obj, err := o.services.Services(svc.Namespace).Get(svc.Name)
	if err != nil {
		// Deleted since: the next pass drops it.
		klog.V(4).InfoS("Cannot read a Service to warn about", "service", svc, "err", err)
		return
	}
	// Only this Service's groups are built, to name one.
	routes, err := o.routes.Routes(svc)
	example, ok := unrouted(routes)
	if err != nil || !ok {
		// Deleted or recovered since its counts: the next pass tells.
		klog.V(4).InfoS("Cannot find the nodes of a Service to warn about", "service", svc, "err", err)
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
