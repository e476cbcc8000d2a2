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

package topology

import (
	"maps"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ViewKey names one node's view of one Service.
type ViewKey struct {
	Node    string
	Service types.NamespacedName
}

// SliceChange is a change of what some nodes route to of one source
// EndpointSlice: every node it names went from Old to New. A node has a
// SliceView of a slice only while it routes to one of its endpoints at least.
type SliceChange struct {
	// Slice names the source EndpointSlice.
	Slice types.NamespacedName
	// Old is what the nodes had, nil when they had nothing; New what they
	// have, nil when they have nothing any more.
	Old, New *SliceView
	// Nodes are the nodes the change is for, in an order that depends only
	// on the engine's state (sorted, or sorted groups one after another);
	// nil when it is for every known node (AllNodes). Shared: never modify
	// it.
	Nodes    []string
	AllNodes bool
}

// Engine indexes Nodes, Services and EndpointSlices and derives views from
// them on demand. It keeps one view per Service and signature, not per node,
// so its memory grows with the objects, not with nodes × Services. It is not
// safe for concurrent use, but for View calls between mutations.
type Engine struct {
	nodes    map[string]map[string]string
	services map[types.NamespacedName]policy
	// namespaces holds the Namespaces' default rules, of those that set one;
	// inheriting, per Namespace, the Services that carry no rule of their
	// own.
	namespaces map[string]policy
	inheriting map[string]sets.Set[types.NamespacedName]
	// slices of each Service by slice name, kept even before their Service
	// is known.
	slices       map[types.NamespacedName]map[string]*endpointSlice
	sliceService map[types.NamespacedName]types.NamespacedName
	// nodeServices holds, per node name, the Services with endpoints on it.
	nodeServices map[string]sets.Set[types.NamespacedName]
	serviceNodes map[types.NamespacedName]sets.Set[string]
	// keyServices holds, per node label key, the Services whose topology
	// reads it; byLabel groups the nodes by the values of exactly those keys.
	keyServices map[string]sets.Set[types.NamespacedName]
	byLabel     labelIndex
	// tiers holds the tiers of each Service with topology keys, and
	// tierServices, per label key and value, the Services whose tier of it
	// holds an endpoint.
	tiers        map[types.NamespacedName]*serviceTiers
	tierServices map[string]map[string]sets.Set[types.NamespacedName]
	// views derives the views of each Service that has them.
	views map[types.NamespacedName]*serviceViews
	// groupings group the nodes by the keys of the Services that have some.
	groupings map[string]*nodeGroups
	// sortedNodes caches Nodes until a node appears or goes, and
	// servicesSorted the keys of views until a Service appears or goes:
	// filled by readers, which may run concurrently.
	sortedNodes    atomic.Pointer[[]string]
	servicesSorted atomic.Pointer[[]types.NamespacedName]
	// nodeGeneration counts the changes of the known nodes or of the labels
	// Services read: what RouteCounts depends on besides a Service's views.
	// nodeChanges are the latest of them, from which counts cached a few
	// generations ago are brought up to date instead of counted again.
	nodeGeneration uint64
	nodeChanges    []nodeChange
	// stamp is what the caller said the next mutations are: views derived
	// by them, and nodes they set, carry it (nodeStamps).
	stamp      uint64
	nodeStamps map[string]uint64
}

// NewEngine returns an empty engine.
func NewEngine() *Engine {
	return &Engine{
		nodes:        map[string]map[string]string{},
		services:     map[types.NamespacedName]policy{},
		namespaces:   map[string]policy{},
		inheriting:   map[string]sets.Set[types.NamespacedName]{},
		slices:       map[types.NamespacedName]map[string]*endpointSlice{},
		sliceService: map[types.NamespacedName]types.NamespacedName{},
		nodeServices: map[string]sets.Set[types.NamespacedName]{},
		serviceNodes: map[types.NamespacedName]sets.Set[string]{},
		keyServices:  map[string]sets.Set[types.NamespacedName]{},
		byLabel:      newLabelIndex(),
		tiers:        map[types.NamespacedName]*serviceTiers{},
		tierServices: map[string]map[string]sets.Set[types.NamespacedName]{},
		views:        map[types.NamespacedName]*serviceViews{},
		groupings:    map[string]*nodeGroups{},
		nodeStamps:   map[string]uint64{},
	}
}

// Load adds objects without computing which views changed: for the initial
// state, where every view is new.
func (e *Engine) Load(nodes []*corev1.Node, services []*corev1.Service, slices []*discoveryv1.EndpointSlice) {
	for _, node := range nodes {
		e.setNode(node.Name, node.Labels)
	}
	for _, svc := range services {
		e.setService(svc)
	}
	for _, slice := range slices {
		e.setEndpointSlice(slice)
	}
}

// View returns a node's view of a Service; false when either is unknown or
// the Service has no view (ExternalName). Calls may run concurrently between
// mutations.
func (e *Engine) View(node string, svc types.NamespacedName) (*View, bool) {
	return viewOf(e.nodes, e.views, node, svc)
}

// Nodes returns the names of the known nodes, sorted. Shared: never modify it.
func (e *Engine) Nodes() []string {
	if sorted := e.sortedNodes.Load(); sorted != nil {
		return *sorted
	}
	sorted := slices.Sorted(maps.Keys(e.nodes))
	e.sortedNodes.Store(&sorted)
	return sorted
}

// Services returns the Services that have views, sorted; those of one
// namespace, or of all when namespace is empty. Shared: never modify it.
func (e *Engine) Services(namespace string) []types.NamespacedName {
	return inNamespace(e.sortedServices(), namespace)
}

func (e *Engine) sortedServices() []types.NamespacedName {
	if sorted := e.servicesSorted.Load(); sorted != nil {
		return *sorted
	}
	sorted := slices.SortedFunc(maps.Keys(e.views), compareServices)
	e.servicesSorted.Store(&sorted)
	return sorted
}

// SetStamp stamps what the next mutations derive: Stamp returns it for the
// views they change.
func (e *Engine) SetStamp(stamp uint64) {
	e.stamp = stamp
}

// Stamp is the latest stamp of the mutations that changed a node's view of
// a Service, or later.
func (e *Engine) Stamp(node string, svc types.NamespacedName) uint64 {
	return stampOf(e.nodeStamps, e.views, node, svc)
}

// Malformed returns why a Service's topology annotations could not be parsed.
func (e *Engine) Malformed(svc types.NamespacedName) error {
	return e.services[svc].malformed
}
