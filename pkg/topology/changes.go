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
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// scope is the views a change may affect: per Service, a set of nodes, nil
// meaning every node. It may hold more than the change affects, never less.
type scope map[types.NamespacedName]sets.Set[string]

func allNodesOf(svc types.NamespacedName) scope {
	return scope{svc: nil}
}

// add puts a node's view of a Service in scope.
func (s scope) add(svc types.NamespacedName, node string) {
	if nodes := s.nodesOf(svc); nodes != nil {
		nodes.Insert(node)
	}
}

// addAll puts the views of a Service by some nodes in scope.
func (s scope) addAll(svc types.NamespacedName, nodes sets.Set[string]) {
	if in := s.nodesOf(svc); in != nil {
		insertAll(in, nodes)
	}
}

// nodesOf returns the set of nodes in scope for a Service, creating it; nil
// when every node is.
func (s scope) nodesOf(svc types.NamespacedName) sets.Set[string] {
	nodes, ok := s[svc]
	if !ok {
		nodes = sets.New[string]()
		s[svc] = nodes
	}
	return nodes
}

func insertAll[T comparable](into, from sets.Set[T]) {
	for item := range from {
		into.Insert(item)
	}
}

// change applies mutate and returns what it changed of the views in scope,
// per source slice: the changes that take a slice away from nodes come
// first, so that a slice moving from one Service to another reaches a node
// that sees it in both as gone, then back.
func (e *Engine) change(s scope, mutate func()) []SliceChange {
	hadNodes := len(e.nodes) > 0
	targets := e.targets(s)
	before := e.scopeViews(s, targets)
	mutate()
	if !hadNodes && len(e.nodes) == 0 {
		return nil
	}
	after := e.scopeViews(s, targets)
	var changed []SliceChange
	for _, svc := range slices.SortedFunc(maps.Keys(s), compareServices) {
		changed = appendChanges(changed, svc, targets[svc], before[svc], after[svc])
	}
	sortGoneFirst(changed)
	return changed
}

// sortGoneFirst puts the changes that take a slice away from nodes first,
// keeping the order of the others.
func sortGoneFirst(changed []SliceChange) {
	slices.SortStableFunc(changed, func(a, b SliceChange) int {
		return cmp.Compare(boolRank(a.New != nil), boolRank(b.New != nil))
	})
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// target are the nodes whose views of a Service a change compares, the same
// before and after it, so that views compare position by position: the
// groups of a grouping, when every node is in scope and the Service groups
// nodes, else nodes, sorted.
type target struct {
	grouping *nodeGroups
	groups   [][]string
	nodes    []string
	// groupOf is the group of each node, once nodes is the groups' nodes.
	groupOf []int
}

// flatten lists the nodes of the groups, for views that are not per group.
func (t *target) flatten() {
	if t.nodes != nil || t.groups == nil {
		return
	}
	n := 0
	for _, group := range t.groups {
		n += len(group)
	}
	// Sized once: a Service's change flattens every node.
	t.nodes, t.groupOf = make([]string, 0, n), make([]int, 0, n)
	for g, group := range t.groups {
		t.nodes = append(t.nodes, group...)
		for range group {
			t.groupOf = append(t.groupOf, g)
		}
	}
}

// targets returns the target of each Service in scope: the nodes known
// before the change or named by the scope.
func (e *Engine) targets(s scope) map[types.NamespacedName]*target {
	out := make(map[types.NamespacedName]*target, len(s))
	for svc, nodes := range s {
		t := &target{}
		out[svc] = t
		switch {
		case nodes == nil:
			if g := e.grouping(e.services[svc]); g != nil {
				t.grouping = g
				t.groups = slices.SortedFunc(maps.Values(g.groups), func(a, b []string) int { return cmp.Compare(a[0], b[0]) })
				continue
			}
			t.nodes = e.Nodes()
		case nodes.Len() > len(e.nodes)/4:
			// Filtering the sorted nodes costs less than sorting many.
			for _, node := range e.Nodes() {
				if nodes.Has(node) {
					t.nodes = append(t.nodes, node)
				}
			}
			for node := range nodes {
				if _, known := e.nodes[node]; !known {
					t.nodes = append(t.nodes, node)
				}
			}
			slices.Sort(t.nodes)
		default:
			t.nodes = sets.List(nodes)
		}
	}
	return out
}

// viewsInScope are a Service's views of its target: one for every known node
// when the Service prunes nothing and every node is in scope, one per group,
// or one per node, nil for a node unknown; none when the Service has no
// views.
type viewsInScope struct {
	all     *View
	byGroup []*View
	byNode  []*View
}

// of is the view of the i-th node of a flattened target; nil when it has
// none.
func (v viewsInScope) of(t *target, i int) *View {
	switch {
	case v.byNode != nil:
		return v.byNode[i]
	case v.byGroup != nil:
		return v.byGroup[t.groupOf[i]]
	}
	return v.all
}

// ofGroup is the view of the g-th group of a target by groups, when the
// views are not per node.
func (v viewsInScope) ofGroup(g int) *View {
	if v.byGroup != nil {
		return v.byGroup[g]
	}
	return v.all
}

// scopeViews computes the views in scope by Service. Nodes that share the
// values of a Service's keys share its view: it is looked up once per such
// group.
func (e *Engine) scopeViews(s scope, targets map[types.NamespacedName]*target) map[types.NamespacedName]viewsInScope {
	out := make(map[types.NamespacedName]viewsInScope, len(s))
	var viewer []tier
	var sig, group []byte
	for svc, nodes := range s {
		sv, ok := e.views[svc]
		if !ok {
			continue
		}
		t := targets[svc]
		switch {
		case nodes == nil && sv.uniform():
			all, _, _ := sv.view("", nil, nil, nil)
			out[svc] = viewsInScope{all: all}
			continue
		case t.grouping != nil && t.grouping == e.grouping(sv.policy):
			views := make([]*View, len(t.groups))
			for g, group := range t.groups {
				views[g], viewer, sig = sv.view(group[0], e.nodes[group[0]], viewer, sig)
			}
			out[svc] = viewsInScope{byGroup: views}
			continue
		}
		t.flatten()
		var byGroup map[string]*View
		views := make([]*View, len(t.nodes))
		holders := e.serviceNodes[svc]
		for i, node := range t.nodes {
			labels, ok := e.nodes[node]
			switch {
			case !ok:
				continue
			case len(t.nodes) == 1:
				// A node's own view, as a node change asks of most Services:
				// no group to share it with.
				views[i], viewer, sig = sv.view(node, labels, viewer, sig)
				continue
			case byGroup == nil:
				byGroup = map[string]*View{}
			}
			group = appendGroup(group[:0], sv.policy, node, labels, holders)
			view, ok := byGroup[string(group)]
			if !ok {
				view, viewer, sig = sv.view(node, labels, viewer, sig)
				byGroup[string(group)] = view
			}
			views[i] = view
		}
		out[svc] = viewsInScope{byNode: views}
	}
	return out
}

// appendGroup appends what decides a node's view of a Service besides the
// Service itself: its values of the Service's keys, and itself only when it
// is one of the holders of the Service's endpoints: else its same-node tier
// is empty, never chosen, so the nodes that share the other values share
// the view.
func appendGroup(b []byte, p policy, node string, labels map[string]string, holders sets.Set[string]) []byte {
	for _, key := range p.keys {
		switch {
		case key == KeyAny:
		case isSameNode(p, key):
			if holders.Has(node) {
				b = append(b, '=')
				b = append(b, node...)
			}
		default:
			if value, ok := labels[key]; ok {
				b = append(b, '=')
				b = append(b, value...)
			}
		}
		b = append(b, 0)
	}
	return b
}

// appendChanges appends the changes of a Service's views: per pair of views
// before and after, the slices that differ, for the nodes that went from one
// to the other. Nodes share views, so pairs are few.
func appendChanges(changed []SliceChange, svc types.NamespacedName, t *target, before, after viewsInScope) []SliceChange {
	if before.byGroup == nil && before.byNode == nil && after.byGroup == nil && after.byNode == nil {
		return appendSliceChanges(changed, svc, before.all, after.all, nil)
	}
	var pairs [][2]*View
	// Each pair's nodes are kept as the parts they come in, then joined
	// into one list of their exact size: the history holds these lists.
	pairParts := map[[2]*View][][]string{}
	add := func(pair [2]*View, nodes []string) {
		if pair[0] == pair[1] {
			return
		}
		if _, seen := pairParts[pair]; !seen {
			pairs = append(pairs, pair)
		}
		pairParts[pair] = append(pairParts[pair], nodes)
	}
	byGroup := before.byNode == nil && after.byNode == nil
	if byGroup {
		for g, group := range t.groups {
			add([2]*View{before.ofGroup(g), after.ofGroup(g)}, group)
		}
	} else {
		t.flatten()
		for i := range t.nodes {
			add([2]*View{before.of(t, i), after.of(t, i)}, t.nodes[i:i+1])
		}
	}
	for _, pair := range pairs {
		parts := pairParts[pair]
		// A group's list is never modified, only replaced (see
		// nodeGroups.add), so a pair of one group shares it.
		nodes := parts[0]
		if len(parts) > 1 || !byGroup {
			nodes = slices.Concat(parts...)
		}
		changed = appendSliceChanges(changed, svc, pair[0], pair[1], nodes)
	}
	return changed
}

// appendSliceChanges appends, for the nodes given (nil: every known node),
// the slices whose part in view old differs from new's.
func appendSliceChanges(changed []SliceChange, svc types.NamespacedName, old, new *View, nodes []string) []SliceChange {
	var oldSlices, newSlices []*SliceView
	if old != nil {
		oldSlices = old.SliceViews(svc)
	}
	if new != nil {
		newSlices = new.SliceViews(svc)
	}
	add := func(name string, o, n *SliceView) {
		changed = append(changed, SliceChange{
			Slice: types.NamespacedName{Namespace: svc.Namespace, Name: name},
			Old:   o, New: n, Nodes: nodes, AllNodes: nodes == nil,
		})
	}
	for len(oldSlices) > 0 || len(newSlices) > 0 {
		switch {
		case len(newSlices) == 0 || len(oldSlices) > 0 && oldSlices[0].Slice.Name < newSlices[0].Slice.Name:
			add(oldSlices[0].Slice.Name, oldSlices[0], nil)
			oldSlices = oldSlices[1:]
		case len(oldSlices) == 0 || newSlices[0].Slice.Name < oldSlices[0].Slice.Name:
			add(newSlices[0].Slice.Name, nil, newSlices[0])
			newSlices = newSlices[1:]
		default:
			if !reflect.DeepEqual(oldSlices[0], newSlices[0]) {
				add(newSlices[0].Slice.Name, oldSlices[0], newSlices[0])
			}
			oldSlices, newSlices = oldSlices[1:], newSlices[1:]
		}
	}
	return changed
}

func compareServices(a, b types.NamespacedName) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
