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
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// routeSink takes the sets of nodes that route alike as visitRoutes finds
// them: values are their label values as nodeGroups reads them, labels those
// of their first node by name, samples their first nodes by name, sorted.
// Shared: labels and samples are the engine's.
type routeSink interface {
	add(values string, labels map[string]string, rt routing, nodes int, samples []string)
}

// visitRoutes visits one node of each group of the policy's grouping, whose
// nodes share their tiers; or, when the node itself is a tier, one of each
// set of nodes that share their tiers but that one. Routes and RouteCounts
// both walk the nodes by it.
func (e *Engine) visitRoutes(svc types.NamespacedName, sv *serviceViews, nodes []string, sink routeSink) {
	_, countReady := sink.(*routeSet)
	b := &routeBuilder{sv: sv, countReady: countReady, bySignature: map[string]routing{}}
	grouping := e.grouping(sv.policy)
	if grouping == nil {
		e.sameNodeGroups(b, svc, nodes, sink)
		return
	}
	for values, group := range grouping.groups {
		labels, n := e.nodes[group[0]], min(len(group), sampleNodes)
		// Shared: groups are replaced, never modified.
		sink.add(values, labels, b.route(group[0], labels), len(group), group[:n:n])
	}
}

// sameNodeGroups groups the nodes of a policy whose node itself is a tier.
// A node without endpoints of the Service routes as the others without
// endpoints that share its label values, so that each such set needs one
// view: they are the groups of the grouping of those keys when another
// Service has it, or every node when there are none; else found node by
// node.
func (e *Engine) sameNodeGroups(b *routeBuilder, svc types.NamespacedName, nodes []string, sink routeSink) {
	by := nodeGroups{keys: labelKeys(b.sv.policy)}
	local := e.serviceNodes[svc]
	groups := map[string][]string{"": nodes}
	if len(by.keys) > 0 {
		groups = nil
		// The id of a policy that reads the same label keys.
		if id, ok := groupingID(policy{mode: b.sv.policy.mode, keys: by.keys}); ok && e.groupings[id] != nil {
			groups = e.groupings[id].groups
		}
	}
	var values []byte
	localIn := map[string]int{}
	for node := range local {
		if labels, known := e.nodes[node]; known {
			values = by.valuesOf(labels, values[:0])
			localIn[string(values)]++
			sink.add(string(values), labels, b.route(node, labels), 1, []string{node})
		}
	}
	if groups == nil && len(by.keys) == 1 && e.byLabel.labelled[by.keys[0]] == len(e.nodes) {
		// Every node carries the one key: the label index groups them.
		for _, group := range e.byLabel.groups[by.keys[0]] {
			if samples := smallest(group, local); len(samples) > 0 {
				labels := e.nodes[samples[0]]
				values = by.valuesOf(labels, values[:0])
				sink.add(string(values), labels, b.route(samples[0], labels), group.Len()-localIn[string(values)], samples)
			}
		}
		return
	}
	if groups == nil {
		// Gathered node by node, the nodes being sorted.
		type gathered struct {
			nodes   int
			samples []string
		}
		byValues := map[string]*gathered{}
		for _, node := range nodes {
			if local.Has(node) {
				continue
			}
			values = by.valuesOf(e.nodes[node], values[:0])
			g := byValues[string(values)]
			if g == nil {
				g = &gathered{}
				byValues[string(values)] = g
			}
			g.nodes++
			if len(g.samples) < sampleNodes {
				g.samples = append(g.samples, node)
			}
		}
		for id, g := range byValues {
			labels := e.nodes[g.samples[0]]
			sink.add(id, labels, b.route(g.samples[0], labels), g.nodes, g.samples)
		}
		return
	}
	for id, group := range groups {
		samples := make([]string, 0, sampleNodes)
		for _, node := range group {
			if len(samples) == sampleNodes {
				break
			}
			if !local.Has(node) {
				samples = append(samples, node)
			}
		}
		if len(samples) > 0 {
			labels := e.nodes[samples[0]]
			sink.add(id, labels, b.route(samples[0], labels), len(group)-localIn[id], samples)
		}
	}
}

// routeBuilder finds where nodes route, once per view signature, from the
// Service's tiers: an ordered Service's ready endpoints are its chosen
// tiers' counts, so no view is built, which for a Service whose node is a
// tier would be one per node with an endpoint. An any-match node's ready
// endpoints, the union of its tiers', need its view, built only when the
// sink counts them.
type routeBuilder struct {
	sv          *serviceViews
	countReady  bool
	bySignature map[string]routing
	viewer      []tier
	sig         []byte
}

// route returns where a node routes.
func (b *routeBuilder) route(node string, labels map[string]string) routing {
	p, st := b.sv.policy, b.sv.tiers
	b.viewer = tiersOf(b.viewer, p, node, labels, true)
	b.sig = appendSignature(b.sig[:0], p, st, b.viewer)
	if rt, ok := b.bySignature[string(b.sig)]; ok {
		return rt
	}
	var rt routing
	if p.mode == topologyapi.TopologyModeOrdered {
		chosen, widest := st.chosenTiers(b.viewer)
		rt = routingOf(p, keyAt(p, widest), b.viewer)
		for family, k := range chosen {
			if k >= 0 {
				rt.ready += st.counts[family].count(k, b.viewer[k]).ready
			}
		}
	} else {
		rt = routingOf(p, st.anyMatched(st.fallingFamilies(b.viewer), b.viewer), b.viewer)
		if b.countReady {
			view, _, _ := b.sv.view(node, labels, nil, nil)
			rt.ready = readyEndpointsIn(view)
		}
	}
	b.bySignature[string(b.sig)] = rt
	return rt
}

// smallest returns the first nodes of a set by name, but those of skip.
func smallest(nodes, skip sets.Set[string]) []string {
	out := make([]string, 0, sampleNodes+1)
	for node := range nodes {
		if len(out) == sampleNodes && node >= out[sampleNodes-1] || skip.Has(node) {
			continue
		}
		i, _ := slices.BinarySearch(out, node)
		out = slices.Insert(out, i, node)[:min(len(out)+1, sampleNodes)]
	}
	return out
}
