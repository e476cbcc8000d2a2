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

// targets returns, per Service in scope, the nodes whose views to compare,
// sorted: known before the change or named by the scope. The same list
// serves before and after, so that views compare position by position.
func (e *Engine) targets(s scope) map[types.NamespacedName][]string {
	out := make(map[types.NamespacedName][]string, len(s))
	for svc, nodes := range s {
		switch {
		case nodes == nil:
			out[svc] = e.Nodes()
		case nodes.Len() > len(e.nodes)/4:
			// Filtering the sorted nodes costs less than sorting many.
			var in []string
			for _, node := range e.Nodes() {
				if nodes.Has(node) {
					in = append(in, node)
				}
			}
			for node := range nodes {
				if _, known := e.nodes[node]; !known {
					in = append(in, node)
				}
			}
			slices.Sort(in)
			out[svc] = in
		default:
			out[svc] = sets.List(nodes)
		}
	}
	return out
}

// viewsInScope are a Service's views of its target nodes: one for every
// known node when the Service prunes nothing and every node is in scope,
// else one per target, nil for a node unknown; none when the Service has no
// views.
type viewsInScope struct {
	all   *View
	views []*View
}

// of is the view of the i-th target; nil when it has none.
func (v viewsInScope) of(i int) *View {
	if v.views == nil {
		return v.all
	}
	return v.views[i]
}

// scopeViews computes the views in scope by Service. Nodes that share the
// values of a Service's keys share its view: it is looked up once per such
// group.
func (e *Engine) scopeViews(s scope, targets map[types.NamespacedName][]string) map[types.NamespacedName]viewsInScope {
	out := make(map[types.NamespacedName]viewsInScope, len(s))
	var viewer []tier
	var sig, group []byte
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
		byGroup := map[string]*View{}
		views := make([]*View, len(targets[svc]))
		for i, node := range targets[svc] {
			labels, ok := e.nodes[node]
			if !ok {
				continue
			}
			group = appendGroup(group[:0], sv.policy, node, labels)
			view, ok := byGroup[string(group)]
			if !ok {
				view, viewer, sig = sv.view(node, labels, viewer, sig)
				byGroup[string(group)] = view
			}
			views[i] = view
		}
		out[svc] = viewsInScope{views: views}
	}
	return out
}

// appendGroup appends what decides a node's view of a Service besides the
// Service itself: its values of the Service's keys.
func appendGroup(b []byte, p policy, node string, labels map[string]string) []byte {
	for _, key := range p.keys {
		switch {
		case key == KeyAny:
		case isSameNode(p, key):
			b = append(b, node...)
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
func appendChanges(changed []SliceChange, svc types.NamespacedName, nodes []string, before, after viewsInScope) []SliceChange {
	if before.views == nil && after.views == nil {
		return appendSliceChanges(changed, svc, before.all, after.all, nil)
	}
	var pairs [][2]*View
	pairNodes := map[[2]*View][]string{}
	for i, node := range nodes {
		pair := [2]*View{before.of(i), after.of(i)}
		if pair[0] == pair[1] {
			continue
		}
		if _, seen := pairNodes[pair]; !seen {
			pairs = append(pairs, pair)
		}
		pairNodes[pair] = append(pairNodes[pair], node)
	}
	for _, pair := range pairs {
		changed = appendSliceChanges(changed, svc, pair[0], pair[1], pairNodes[pair])
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
