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
	"reflect"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// sliceScope is what setting a slice may change, computed before the change.
// A node has a view of a slice only while it sees one of its endpoints, and
// it sees an endpoint through its tiers: a slice's views change only for the
// nodes that can see the endpoints it loses or gains (all of them when it
// appears, goes, moves to another Service or changes other than in its
// endpoints), and for those whose choice of tier the endpoints' counts may
// change, who share a tier with them.
func (e *Engine) sliceScope(slice *discoveryv1.EndpointSlice) scope {
	s := scope{}
	oldSvc, had := e.sliceService[types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}]
	svcName, owned := slice.Labels[discoveryv1.LabelServiceName]
	svc := types.NamespacedName{Namespace: slice.Namespace, Name: svcName}
	if had {
		old := e.slices[oldSvc][slice.Name]
		if owned && oldSvc == svc && sameExceptEndpoints(old, slice) {
			e.addEndpointScope(s, svc, slice.AddressType, changedEndpoints(old.endpoints, slice.Endpoints))
			return s
		}
		e.addEndpointScope(s, oldSvc, old.addressType, old.endpoints)
	}
	if owned {
		e.addEndpointScope(s, svc, slice.AddressType, slice.Endpoints)
	}
	return s
}

// addEndpointScope puts in scope the views of a Service that the endpoints
// touched, all of one family, may change.
func (e *Engine) addEndpointScope(s scope, svc types.NamespacedName, family discoveryv1.AddressType, touched []discoveryv1.Endpoint) {
	if len(touched) == 0 {
		return
	}
	switch nodes := e.endpointScope(svc, family, touched); {
	case nodes == nil, nodes.Len()*2 > len(e.nodes):
		// Most nodes: visiting them all in order costs less than a set.
		s[svc] = nil
	default:
		s.addAll(svc, nodes)
	}
}

func sameExceptEndpoints(old *endpointSlice, slice *discoveryv1.EndpointSlice) bool {
	return reflect.DeepEqual(old.labels, slice.Labels) && old.addressType == slice.AddressType && reflect.DeepEqual(old.ports, slice.Ports)
}

// changedEndpoints returns the endpoints of old and new outside their common
// prefix and suffix: a view that sees none of them keeps its endpoints, in
// their order.
func changedEndpoints(old, new []discoveryv1.Endpoint) []discoveryv1.Endpoint {
	prefix := 0
	for prefix < len(old) && prefix < len(new) && reflect.DeepEqual(old[prefix], new[prefix]) {
		prefix++
	}
	suffix := 0
	for suffix < len(old)-prefix && suffix < len(new)-prefix && reflect.DeepEqual(old[len(old)-1-suffix], new[len(new)-1-suffix]) {
		suffix++
	}
	return slices.Concat(old[prefix:len(old)-suffix], new[prefix:len(new)-suffix])
}

// endpointScope returns the nodes whose view of a Service can change when the
// endpoints touched, all of one address family, appear, go or change; nil
// means every node, and stands for any set of more than half of them. A node
// sees an endpoint in a key's tier when they share the key's value, and only
// the counts of those tiers change. A node of a Service with "*" that may
// fall through to it (ordered) or back on it (any-match) in that family
// also sees any endpoint; the other nodes keep the counts of every tier but
// "*", and their matched endpoints, so they keep their choice. The other families' choices do not depend
// on these endpoints.
func (e *Engine) endpointScope(svc types.NamespacedName, family discoveryv1.AddressType, touched []discoveryv1.Endpoint) sets.Set[string] {
	p, ok := e.services[svc]
	if !ok {
		return sets.New[string]()
	}
	if p.mode == topologyapi.TopologyModeNone {
		return nil
	}
	// The groups of nodes that share a tier with an endpoint touched: when
	// they hold more than half the nodes, every node costs less to visit
	// than their union to build.
	groups := map[[2]string]sets.Set[string]{}
	size := 0
	var viewer []tier
	for _, ep := range touched {
		if ep.NodeName == nil {
			continue
		}
		labels, known := e.nodes[*ep.NodeName]
		if !known {
			continue
		}
		viewer = tiersOf(viewer, p, *ep.NodeName, labels, true)
		for k, t := range viewer {
			switch key := p.keys[k]; {
			case !t.in || key == KeyAny:
			case isSameNode(p, key):
				if _, ok := groups[[2]string{key, t.value}]; !ok {
					groups[[2]string{key, t.value}] = sets.New(t.value)
					size++
				}
			default:
				if _, ok := groups[[2]string{key, t.value}]; !ok {
					group := e.byLabel.group(key, t.value)
					groups[[2]string{key, t.value}] = group
					size += group.Len()
				}
			}
		}
		if size*2 > len(e.nodes) {
			return nil
		}
	}
	var falling []string
	if p.fallsBack() {
		if falling = e.fallingThrough(e.tiers[svc], family); (size+len(falling))*2 > len(e.nodes) {
			return nil
		}
	}
	// Sized once: growing a set of thousands of nodes costs more than
	// filling it.
	nodes := make(sets.Set[string], size+len(falling))
	for _, group := range groups {
		insertAll(nodes, group)
	}
	nodes.Insert(falling...)
	return nodes
}

// fallingThrough returns the nodes that may see any endpoint of one address
// family of a Service with "*": for an ordered one, those for which no tier
// but "*" holds the ready endpoints min-ready asks of it, so that they may
// choose "*"; for an any-match one, those that get the fallback set. Either
// needs every tier of the node short of its minimum, so it visits only the
// nodes in the groups short of ready endpoints of the key where those are
// fewest; all nodes when no key has every node in a group. Each node is
// listed once.
func (e *Engine) fallingThrough(st *serviceTiers, family discoveryv1.AddressType) []string {
	p, counts := st.policy, st.counts[family]
	falls := func(viewer []tier) bool { return !counts.hasQualifyingTier(p, viewer) }
	if p.mode == topologyapi.TopologyModeAnyMatch {
		falls = func(viewer []tier) bool { return st.fallingBack(family, viewer) }
	}
	var candidates []sets.Set[string]
	fewest := -1
	for k, key := range p.keys {
		if key == KeyAny || isSameNode(p, key) || e.byLabel.labelled[key] < len(e.nodes) {
			continue
		}
		var groups []sets.Set[string]
		n := 0
		for value, nodes := range e.byLabel.groups[key] {
			if counts.count(k, tier{value: value, in: true}).ready < p.mins[k] {
				groups = append(groups, nodes)
				n += nodes.Len()
			}
		}
		if fewest < 0 || n < fewest {
			candidates, fewest = groups, n
		}
	}
	var out []string
	var viewer []tier
	if g := e.grouping(p); g != nil {
		// Nodes of a group share their tiers.
		for _, group := range g.groups {
			if viewer = tiersOf(viewer, p, group[0], e.nodes[group[0]], true); falls(viewer) {
				out = append(out, group...)
			}
		}
		return out
	}
	visit := func(node string) {
		if viewer = tiersOf(viewer, p, node, e.nodes[node], true); falls(viewer) {
			out = append(out, node)
		}
	}
	if fewest < 0 {
		for node := range e.nodes {
			visit(node)
		}
		return out
	}
	for _, group := range candidates {
		for node := range group {
			visit(node)
		}
	}
	return out
}
