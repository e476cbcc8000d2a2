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
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	topologyapi "github.com/gridview/gridview/apis/topology"
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
// them on demand; it stores no view. It is not safe for concurrent use.
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
	}
}

// Load adds objects without computing which views changed: for the initial
// state, where every view is new.
func (e *Engine) Load(nodes []*corev1.Node, services []*corev1.Service, slices []*discoveryv1.EndpointSlice) {
	for _, node := range nodes {
		e.nodes[node.Name] = maps.Clone(node.Labels)
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
	return computeView(p, e.sortedSlices(svc), matcher{node: node, labels: labels, nodes: e.nodes}), true
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

// SetNode adds or updates a node's labels.
func (e *Engine) SetNode(name string, labels map[string]string) []Change {
	return e.change(e.nodeScope(name), func() { e.nodes[name] = maps.Clone(labels) })
}

// DeleteNode removes a node: its views go, and its endpoints match only "*".
func (e *Engine) DeleteNode(name string) []Change {
	return e.change(e.nodeScope(name), func() { delete(e.nodes, name) })
}

// SetService adds or updates a Service; an ExternalName Service has no view.
func (e *Engine) SetService(svc *corev1.Service) []Change {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	return e.change(allNodesOf(key), func() { e.setService(svc) })
}

func (e *Engine) setService(svc *corev1.Service) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		delete(e.services, key)
		return
	}
	p := parsePolicy(svc.Annotations)
	p.labels = maps.Clone(svc.Labels)
	e.services[key] = p
}

// DeleteService removes a Service and its views.
func (e *Engine) DeleteService(key types.NamespacedName) []Change {
	return e.change(allNodesOf(key), func() { delete(e.services, key) })
}

// SetEndpointSlice adds or updates an EndpointSlice of a Service.
func (e *Engine) SetEndpointSlice(slice *discoveryv1.EndpointSlice) []Change {
	scope := e.sliceScope(types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name})
	if svcName, owned := slice.Labels[discoveryv1.LabelServiceName]; owned {
		scope[types.NamespacedName{Namespace: slice.Namespace, Name: svcName}] = nil
	}
	return e.change(scope, func() { e.setEndpointSlice(slice) })
}

func (e *Engine) setEndpointSlice(slice *discoveryv1.EndpointSlice) {
	sliceKey := types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}
	e.removeSlice(sliceKey)
	svcName, owned := slice.Labels[discoveryv1.LabelServiceName]
	if !owned {
		return
	}
	svcKey := types.NamespacedName{Namespace: slice.Namespace, Name: svcName}
	if e.slices[svcKey] == nil {
		e.slices[svcKey] = map[string]*endpointSlice{}
	}
	e.slices[svcKey][slice.Name] = &endpointSlice{
		name: slice.Name, labels: maps.Clone(slice.Labels), addressType: slice.AddressType,
		ports: slices.Clone(slice.Ports), endpoints: slices.Clone(slice.Endpoints),
	}
	e.sliceService[sliceKey] = svcKey
	e.reindexEndpointNodes(svcKey)
}

// DeleteEndpointSlice removes an EndpointSlice.
func (e *Engine) DeleteEndpointSlice(key types.NamespacedName) []Change {
	return e.change(e.sliceScope(key), func() { e.removeSlice(key) })
}

func (e *Engine) removeSlice(key types.NamespacedName) {
	svcKey, ok := e.sliceService[key]
	if !ok {
		return
	}
	delete(e.sliceService, key)
	delete(e.slices[svcKey], key.Name)
	if len(e.slices[svcKey]) == 0 {
		delete(e.slices, svcKey)
	}
	e.reindexEndpointNodes(svcKey)
}

// reindexEndpointNodes records which nodes a Service has endpoints on.
func (e *Engine) reindexEndpointNodes(svc types.NamespacedName) {
	for node := range e.serviceNodes[svc] {
		if e.nodeServices[node].Delete(svc).Len() == 0 {
			delete(e.nodeServices, node)
		}
	}
	nodes := sets.New[string]()
	for _, slice := range e.slices[svc] {
		for _, ep := range slice.endpoints {
			if ep.NodeName != nil {
				nodes.Insert(*ep.NodeName)
			}
		}
	}
	if nodes.Len() == 0 {
		delete(e.serviceNodes, svc)
		return
	}
	e.serviceNodes[svc] = nodes
	for node := range nodes {
		if e.nodeServices[node] == nil {
			e.nodeServices[node] = sets.New[types.NamespacedName]()
		}
		e.nodeServices[node].Insert(svc)
	}
}

func (e *Engine) sortedSlices(svc types.NamespacedName) []*endpointSlice {
	byName := e.slices[svc]
	out := make([]*endpointSlice, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out
}

// parsePolicy reads a Service's topology annotations; the gridview key wins.
func parsePolicy(annotations map[string]string) policy {
	if value, ok := annotations[AnnotationGridviewKeys]; ok {
		keys, err := ParseGridviewKeys(value)
		if err != nil {
			return policy{mode: topologyapi.TopologyModeNone, malformed: err}
		}
		return policy{mode: topologyapi.TopologyModeOrdered, keys: keys}
	}
	if value, ok := annotations[AnnotationTopologyKeys]; ok {
		keys, err := ParseTopologyKeys(value)
		if err != nil {
			return policy{mode: topologyapi.TopologyModeNone, malformed: err}
		}
		return policy{mode: topologyapi.TopologyModeAnyMatch, keys: keys}
	}
	return policy{mode: topologyapi.TopologyModeNone}
}

// signature is what a node's view of a Service depends on besides the
// Service's endpoints: nodes with equal signatures share the view.
func signature(p policy, node string, labels map[string]string) string {
	var b strings.Builder
	for _, key := range p.keys {
		switch {
		case key == KeyAny:
		case key == KeyHostname && p.mode == topologyapi.TopologyModeOrdered:
			b.WriteString("\x00h=" + node)
		default:
			if value, ok := labels[key]; ok {
				b.WriteString("\x00=" + value)
			} else {
				b.WriteString("\x00-")
			}
		}
	}
	return b.String()
}
