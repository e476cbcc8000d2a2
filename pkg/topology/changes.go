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

func insertAll(into, from sets.Set[string]) {
	for node := range from {
		into.Insert(node)
	}
}

// change applies mutate and returns what it changed of the views in scope,
// per source slice: the changes that take a slice away from nodes come
// first, so that a slice moving from one Service to another reaches a node
// that sees it in both as gone, then back.
func (e *Engine) change(s scope, mutate func()) []SliceChange {
	hadNodes := len(e.nodes) > 0
	before := e.scopeViews(s)
	mutate()
	if !hadNodes && len(e.nodes) == 0 {
		return nil
	}
	after := e.scopeViews(s)
	var changed []SliceChange
	for _, svc := range slices.SortedFunc(maps.Keys(s), compareServices) {
		changed = appendChanges(changed, svc, before[svc], after[svc])
	}
	slices.SortStableFunc(changed, func(a, b SliceChange) int {
		return cmp.Compare(boolRank(a.New != nil), boolRank(b.New != nil))
	})
	return changed
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// viewsInScope are a Service's views of the nodes in scope: one for every
// known node when the Service prunes nothing and every node is in scope,
// else one per node; none when the Service has no views.
type viewsInScope struct {
	all    *View
	byNode map[string]*View
}

// of is the view of a node; nil when it has none.
func (v viewsInScope) of(node string) *View {
	if v.byNode == nil {
		return v.all
	}
	return v.byNode[node]
}

// scopeViews computes the views in scope by Service.
func (e *Engine) scopeViews(s scope) map[types.NamespacedName]viewsInScope {
	out := make(map[types.NamespacedName]viewsInScope, len(s))
	var viewer []tier
	var sig []byte
	for svc, nodes := range s {
		sv, ok := e.views[svc]
		if !ok {
			continue
		}
		if nodes == nil && sv.uniform() {
			all, _, _ := sv.view("", nil, nil, nil)
			out[svc] = viewsInScope{all: all}
			continue
		}
		byNode := make(map[string]*View, max(len(nodes), len(e.nodes)*boolRank(nodes == nil)))
		visit := func(node string) {
			if labels, ok := e.nodes[node]; ok {
				byNode[node], viewer, sig = sv.view(node, labels, viewer, sig)
			}
		}
		if nodes == nil {
			for node := range e.nodes {
				visit(node)
			}
		}
		for node := range nodes {
			visit(node)
		}
		out[svc] = viewsInScope{byNode: byNode}
	}
	return out
}

// appendChanges appends the changes of a Service's views: per pair of views
// before and after, the slices that differ, for the nodes that went from one
// to the other. Nodes share views, so pairs are few.
func appendChanges(changed []SliceChange, svc types.NamespacedName, before, after viewsInScope) []SliceChange {
	if before.byNode == nil && after.byNode == nil {
		return appendSliceChanges(changed, svc, before.all, after.all, nil)
	}
	pairs := map[[2]*View][]string{}
	for node := range before.byNode {
		pair := [2]*View{before.of(node), after.of(node)}
		pairs[pair] = append(pairs[pair], node)
	}
	for node := range after.byNode {
		if before.byNode == nil || before.byNode[node] == nil {
			pair := [2]*View{before.of(node), after.of(node)}
			pairs[pair] = append(pairs[pair], node)
		}
	}
	for _, pair := range slices.SortedFunc(maps.Keys(pairs), comparePairs(pairs)) {
		if pair[0] != pair[1] {
			nodes := pairs[pair]
			slices.Sort(nodes)
			changed = appendSliceChanges(changed, svc, pair[0], pair[1], nodes)
		}
	}
	return changed
}

// comparePairs orders pairs of views by their first node, so that changes
// come in an order that does not depend on map iteration.
func comparePairs(pairs map[[2]*View][]string) func(a, b [2]*View) int {
	return func(a, b [2]*View) int {
		return cmp.Compare(slices.Min(pairs[a]), slices.Min(pairs[b]))
	}
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
