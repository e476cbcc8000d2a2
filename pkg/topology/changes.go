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

// change applies mutate and returns the views in scope whose content it
// changed, appeared or went, sorted.
func (e *Engine) change(s scope, mutate func()) []Change {
	before := e.views(s)
	mutate()
	after := e.views(s)
	services := slices.SortedFunc(maps.Keys(s), compareServices)
	var changed []Change
	for _, svc := range services {
		first := len(changed)
		changed = appendChanges(changed, svc, before[svc], after[svc])
		slices.SortFunc(changed[first:], func(a, b Change) int { return cmp.Compare(a.Key.Node, b.Key.Node) })
	}
	return changed
}

// appendChanges appends the views of a Service by node that differ.
func appendChanges(changed []Change, svc types.NamespacedName, before, after map[string]*View) []Change {
	// Nodes that share a view share it before and after too: compare each
	// pair of views once.
	equal := map[[2]*View]bool{}
	for node, old := range before {
		current, ok := after[node]
		if ok && old == current {
			continue
		}
		if ok {
			pair := [2]*View{old, current}
			same, known := equal[pair]
			if !known {
				same = reflect.DeepEqual(old, current)
				equal[pair] = same
			}
			if same {
				continue
			}
		}
		changed = append(changed, Change{Key: ViewKey{Node: node, Service: svc}, Old: old, New: current})
	}
	for node, current := range after {
		if _, ok := before[node]; !ok {
			changed = append(changed, Change{Key: ViewKey{Node: node, Service: svc}, New: current})
		}
	}
	return changed
}

// views computes the views in scope by Service and node.
func (e *Engine) views(s scope) map[types.NamespacedName]map[string]*View {
	out := make(map[types.NamespacedName]map[string]*View, len(s))
	var viewer []tier
	var sig []byte
	for svc, nodes := range s {
		p, ok := e.services[svc]
		if !ok {
			continue
		}
		st := e.tiers[svc]
		byNode := make(map[string]*View, len(nodes))
		visit := func(node string) {
			if labels, ok := e.nodes[node]; ok {
				viewer = tiersOf(viewer, p, node, labels, true)
				sig = appendSignature(sig[:0], p, st, viewer)
				byNode[node] = e.sharedView(svc, p, st, viewer, sig)
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
		out[svc] = byNode
	}
	return out
}

// sharedView returns the view of a Service by the nodes with a signature,
// computing it once.
func (e *Engine) sharedView(svc types.NamespacedName, p policy, st *serviceTiers, viewer []tier, sig []byte) *View {
	bySignature := e.shared[svc]
	if view, ok := bySignature[string(sig)]; ok {
		return view
	}
	if bySignature == nil {
		bySignature = map[string]*View{}
		e.shared[svc] = bySignature
	}
	view := computeView(p, e.sortedSlices(svc), st, viewer)
	bySignature[string(sig)] = view
	return view
}

func compareServices(a, b types.NamespacedName) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
