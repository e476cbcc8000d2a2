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
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// routeGroup is a RouteGroup being gathered.
type routeGroup struct {
	// values are the group's label values as nodeGroups reads them, which
	// sort as the labels in key order.
	values string
	// rank orders positions: the chosen key's index, none last.
	rank  int
	group RouteGroup
}

func newRouteGroup(values string, keys []string, labels map[string]string, rt routing) routeGroup {
	g := routeGroup{values: values, rank: rt.rank, group: RouteGroup{
		Labels: make(map[string]string, len(keys)), Position: rt.position, ChosenKey: rt.key, ChosenValue: rt.value, Ready: rt.ready,
	}}
	for _, key := range keys {
		if value, ok := labels[key]; ok {
			g.group.Labels[key] = value
		}
	}
	return g
}

// routeGroups visits one node of each group of the policy's grouping, whose
// nodes share their tiers; or, when the node itself is a tier, one of each
// set of nodes that share their tiers but that one.
func (e *Engine) routeGroups(svc types.NamespacedName, sv *serviceViews, nodes []string) []RouteGroup {
	b := &routeBuilder{sv: sv, bySignature: map[string]routing{}}
	var all []routeGroup
	if grouping := e.grouping(sv.policy); grouping != nil {
		all = make([]routeGroup, 0, len(grouping.groups))
		for values, group := range grouping.groups {
			labels := e.nodes[group[0]]
			g := newRouteGroup(values, grouping.keys, labels, b.route(group[0], labels))
			// Shared: groups are replaced, never modified.
			g.group.Nodes, g.group.SampleNodes = len(group), group[:min(len(group), sampleNodes):min(len(group), sampleNodes)]
			all = append(all, g)
		}
	} else {
		all = e.sameNodeGroups(b, svc, nodes)
	}
	// Sorted by index: a routeGroup is large to move.
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		return cmp.Or(strings.Compare(all[i].values, all[j].values), cmp.Compare(all[i].rank, all[j].rank))
	})
	out := make([]RouteGroup, len(all))
	for i, j := range order {
		out[i] = all[j].group
	}
	return out
}

// sameNodeGroups groups the nodes of a policy whose node itself is a tier.
// A node without endpoints of the Service routes as the others without
// endpoints that share its label values, so that each such set needs one
// view: they are the groups of the grouping of those keys when another
// Service has it, or every node when there are none; else found node by
// node.
func (e *Engine) sameNodeGroups(b *routeBuilder, svc types.NamespacedName, nodes []string) []routeGroup {
	set := &routeSet{values: &nodeGroups{keys: labelKeys(b.sv.policy)}, byRoute: map[string]int{}}
	local := e.serviceNodes[svc]
	groups := map[string][]string{"": nodes}
	if len(set.values.keys) > 0 {
		groups = nil
		// The id of a policy that reads the same label keys.
		if id, ok := groupingID(policy{mode: b.sv.policy.mode, keys: set.values.keys}); ok && e.groupings[id] != nil {
			groups = e.groupings[id].groups
		}
	}
	var values []byte
	localIn := map[string]int{}
	for node := range local {
		if labels, known := e.nodes[node]; known {
			values = set.values.valuesOf(labels, values[:0])
			localIn[string(values)]++
			set.add(values, labels, b.route(node, labels), 1, []string{node})
		}
	}
	if groups == nil && len(set.values.keys) == 1 && e.byLabel.labelled[set.values.keys[0]] == len(e.nodes) {
		// Every node carries the one key: the label index groups them.
		for _, group := range e.byLabel.groups[set.values.keys[0]] {
			if samples := smallest(group, local); len(samples) > 0 {
				labels := e.nodes[samples[0]]
				values = set.values.valuesOf(labels, values[:0])
				set.add(values, labels, b.route(samples[0], labels), group.Len()-localIn[string(values)], samples)
			}
		}
		return set.all
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
			values = set.values.valuesOf(e.nodes[node], values[:0])
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
			set.add([]byte(id), labels, b.route(g.samples[0], labels), g.nodes, g.samples)
		}
		return set.all
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
			set.add([]byte(id), labels, b.route(samples[0], labels), len(group)-localIn[id], samples)
		}
	}
	return set.all
}

// routeSet gathers route groups by label values and position.
type routeSet struct {
	values  *nodeGroups
	all     []routeGroup
	byRoute map[string]int
	id      []byte
}

// add adds nodes that share label values and route alike, samples being
// the first of them by name. A group counts the ready addresses of its
// first node by name.
func (s *routeSet) add(values []byte, labels map[string]string, rt routing, nodes int, samples []string) {
	s.id = append(append(s.id[:0], values...), rt.position...)
	i, ok := s.byRoute[string(s.id)]
	if !ok {
		i = len(s.all)
		s.byRoute[string(s.id)] = i
		s.all = append(s.all, newRouteGroup(string(values), s.values.keys, labels, rt))
	}
	g := &s.all[i].group
	if ok && samples[0] < g.SampleNodes[0] {
		g.Ready = rt.ready
	}
	g.Nodes += nodes
	g.SampleNodes = append(g.SampleNodes, samples...)
	slices.Sort(g.SampleNodes)
	g.SampleNodes = g.SampleNodes[:min(len(g.SampleNodes), sampleNodes)]
}

// routeBuilder finds where nodes route, once per view signature.
type routeBuilder struct {
	sv          *serviceViews
	bySignature map[string]routing
	viewer      []tier
	sig         []byte
}

// route returns where a node routes, from its view.
func (b *routeBuilder) route(node string, labels map[string]string) routing {
	var view *View
	view, b.viewer, b.sig = b.sv.view(node, labels, b.viewer, b.sig)
	rt, ok := b.bySignature[string(b.sig)]
	if !ok {
		rt = routingOf(b.sv.policy, view, b.viewer)
		b.bySignature[string(b.sig)] = rt
	}
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
