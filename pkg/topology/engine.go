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

// Change is one view that appeared, went or changed.
type Change struct {
	Key ViewKey
	// Old is the view before the change, nil when it did not exist; New the
	// view after, nil when it no longer exists.
	Old, New *View
}

// Engine indexes Nodes, Services and EndpointSlices and derives views from
// them on demand. It keeps one view per Service and signature, not per node,
// so its memory grows with the objects, not with nodes × Services. It is not
// safe for concurrent use, but for View calls between mutations.
type Engine struct {
	nodes    map[string]map[string]string
	services map[types.NamespacedName]policy
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
	// shared holds the views computed by mutations, per Service and
	// signature, until the Service's tiers are counted again.
	shared map[types.NamespacedName]map[string]*View
}

// NewEngine returns an empty engine.
func NewEngine() *Engine {
	return &Engine{
		nodes:        map[string]map[string]string{},
		services:     map[types.NamespacedName]policy{},
		slices:       map[types.NamespacedName]map[string]*endpointSlice{},
		sliceService: map[types.NamespacedName]types.NamespacedName{},
		nodeServices: map[string]sets.Set[types.NamespacedName]{},
		serviceNodes: map[types.NamespacedName]sets.Set[string]{},
		keyServices:  map[string]sets.Set[types.NamespacedName]{},
		byLabel:      newLabelIndex(),
		tiers:        map[types.NamespacedName]*serviceTiers{},
		tierServices: map[string]map[string]sets.Set[types.NamespacedName]{},
		shared:       map[types.NamespacedName]map[string]*View{},
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
// the Service has no view (ExternalName).
func (e *Engine) View(node string, svc types.NamespacedName) (*View, bool) {
	p, ok := e.services[svc]
	if !ok {
		return nil, false
	}
	labels, ok := e.nodes[node]
	if !ok {
		return nil, false
	}
	st, viewer := e.tiers[svc], tiersOf(nil, p, node, labels, true)
	// Read only, so that View calls can run concurrently.
	if view, ok := e.shared[svc][string(appendSignature(nil, p, st, viewer))]; ok {
		return view, true
	}
	return computeView(p, e.sortedSlices(svc), st, viewer), true
}

// Nodes returns the names of the known nodes, sorted.
func (e *Engine) Nodes() []string {
	return slices.Sorted(maps.Keys(e.nodes))
}

// Services returns the Services that have views, sorted; those of one
// namespace, or of all when namespace is empty.
func (e *Engine) Services(namespace string) []types.NamespacedName {
	var out []types.NamespacedName
	for svc := range e.services {
		if namespace == "" || svc.Namespace == namespace {
			out = append(out, svc)
		}
	}
	slices.SortFunc(out, compareServices)
	return out
}

// Malformed returns why a Service's topology annotation could not be parsed.
func (e *Engine) Malformed(svc types.NamespacedName) error {
	return e.services[svc].malformed
}
