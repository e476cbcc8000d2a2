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

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// sampleNodes is how many nodes a route group names.
const sampleNodes = 3

// RouteGroup is a set of nodes that route a Service alike.
type RouteGroup struct {
	// Labels are the nodes' values of the policy's label keys, not "*" nor
	// the same-node key; a key absent means the nodes lack the label.
	Labels map[string]string
	Nodes  int
	// SampleNodes are the first nodes of the group by name.
	SampleNodes []string
	Position    string
	// ChosenKey and ChosenValue name the widest tier the nodes route to: ""
	// for none, or for every endpoint of a Service that is not pruned; the
	// value is "" for "*" and for the same-node key, each node's own.
	ChosenKey, ChosenValue string
	// Ready counts the ready endpoints a node of the group routes to, its
	// first node's where the same-node key makes them differ.
	Ready int
}

// Routes is where the nodes' traffic to a Service goes, by group.
type Routes struct {
	Rule string
	Mode topologyapi.TopologyMode
	Keys []string
	// Nodes counts every known node.
	Nodes int
	// Ready and Total count the Service's endpoints.
	Ready, Total int
	// Groups are sorted by their labels, in key order, then by position.
	Groups []RouteGroup
}

// Routes groups the nodes by where their traffic to a Service goes, without
// changing the engine: it may run concurrently with View calls.
func (e *Engine) Routes(svc types.NamespacedName) (Routes, error) {
	sv, ok := e.views[svc]
	if !ok {
		return Routes{}, unknownService(svc)
	}
	p, nodes := sv.policy, e.Nodes()
	out := Routes{Rule: p.rule, Mode: p.mode, Keys: p.keys, Nodes: len(nodes)}
	out.Ready, out.Total = countEndpoints(sv.slices)
	switch {
	case len(nodes) == 0:
	case sv.uniform():
		samples := slices.Clone(nodes[:min(len(nodes), sampleNodes)])
		out.Groups = []RouteGroup{{Nodes: len(nodes), SampleNodes: samples, Position: PositionAll, Ready: out.Ready}}
	default:
		out.Groups = e.routeGroups(svc, sv, nodes)
	}
	return out, nil
}

// routeGroups groups the nodes by their label values and position.
func (e *Engine) routeGroups(svc types.NamespacedName, sv *serviceViews, nodes []string) []RouteGroup {
	set := &routeSet{}
	if grouping := e.grouping(sv.policy); grouping != nil {
		// One group each.
		set.all = make([]routeGroup, 0, len(grouping.groups))
	}
	e.visitRoutes(svc, sv, nodes, set)
	all, keys := set.all, labelKeys(sv.policy)
	// Sorted by index: a routeGroup is large to move.
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		return cmp.Or(strings.Compare(all[i].values, all[j].values), cmp.Compare(all[i].rank, all[j].rank))
	})
	out := make([]RouteGroup, 0, len(all))
	for i, j := range order {
		// A rank stands for one position of the policy.
		if i > 0 && all[j].values == all[order[i-1]].values && all[j].rank == all[order[i-1]].rank {
			out[len(out)-1].merge(&all[j].group)
			continue
		}
		g := all[j].group
		g.Labels = make(map[string]string, len(keys))
		for _, key := range keys {
			if value, ok := all[j].labels[key]; ok {
				g.Labels[key] = value
			}
		}
		out = append(out, g)
	}
	return out
}

// routeGroup is a RouteGroup being gathered.
type routeGroup struct {
	// values are the group's label values as nodeGroups reads them, which
	// sort as the labels in key order.
	values string
	// rank orders positions: the chosen key's index, none last.
	rank int
	// labels are those of a node of the group, to read its Labels from.
	labels map[string]string
	group  RouteGroup
}

// routeSet gathers the sets of nodes that route alike, one group each: a
// routeSink. Where the node itself is a tier, several sets may share their
// label values and position, which routeGroups merges.
type routeSet struct {
	all []routeGroup
}

func (s *routeSet) add(values string, labels map[string]string, rt routing, nodes int, samples []string) {
	s.all = append(s.all, routeGroup{values: values, rank: rt.rank, labels: labels, group: RouteGroup{
		Nodes: nodes, SampleNodes: samples, Position: rt.position, ChosenKey: rt.key, ChosenValue: rt.value, Ready: rt.ready,
	}})
}

// merge adds the nodes of another group of the same labels and position.
// A group counts the ready addresses of its first node by name.
func (g *RouteGroup) merge(other *RouteGroup) {
	if other.SampleNodes[0] < g.SampleNodes[0] {
		g.Ready = other.Ready
	}
	g.Nodes += other.Nodes
	// Clipped: the samples it holds may be a grouping's.
	g.SampleNodes = append(slices.Clip(g.SampleNodes), other.SampleNodes...)
	slices.Sort(g.SampleNodes)
	g.SampleNodes = g.SampleNodes[:min(len(g.SampleNodes), sampleNodes)]
}

// routing is where the nodes of one view signature route.
type routing struct {
	position, key, value string
	// rank orders positions: the chosen key's index, none last.
	rank, ready int
}

// routingOf is where a node of a pruned Service routes, given the key its
// view shows matched, but for the ready endpoints.
func routingOf(p policy, matched string, viewer []tier) routing {
	rt := routing{position: position(p, matched), rank: len(p.keys)}
	if k := slices.Index(p.keys, matched); k >= 0 {
		rt.key, rt.rank = p.keys[k], k
		if !isSameNode(p, rt.key) {
			rt.value = viewer[k].value
		}
	}
	return rt
}

// position reads where a node's traffic goes from its view's matched key,
// which computeView set: the widest tier an ordered Service's families
// chose, "*" for an any-match node falling back, else its first tier that
// holds an endpoint.
func position(p policy, matched string) string {
	if p.mode == topologyapi.TopologyModeNone {
		return PositionAll
	}
	switch k := slices.Index(p.keys, matched); {
	case k < 0:
		return PositionNone
	case k > 0:
		return FallbackPosition(k)
	case matched == KeyAny:
		return PositionAll
	default:
		return PositionLocal
	}
}

// readyEndpointsIn counts the ready endpoints of a view.
func readyEndpointsIn(v *View) int {
	n := 0
	for _, slice := range v.Slices {
		for i := range slice.Endpoints {
			if Ready(&slice.Endpoints[i]) {
				n++
			}
		}
	}
	return n
}

// readyAddresses returns the ready addresses of a view, sorted, each once.
func readyAddresses(v *View) []string {
	var out []string
	for _, slice := range v.Slices {
		for i := range slice.Endpoints {
			if Ready(&slice.Endpoints[i]) {
				out = append(out, slice.Endpoints[i].Addresses...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// countEndpoints counts the endpoints of a Service's slices and those ready.
func countEndpoints(source []*endpointSlice) (ready, total int) {
	for _, slice := range source {
		for i := range slice.endpoints {
			if Ready(&slice.endpoints[i]) {
				ready++
			}
		}
		total += len(slice.endpoints)
	}
	return ready, total
}
