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

// nodeScope: a node's labels decide its own view of every Service, and which
// tier its endpoints fall in for every node viewing a Service it serves.
func (e *Engine) nodeScope(node string) scope {
	s := scope{}
	for svc := range e.services {
		s[svc] = sets.New(node)
	}
	for svc := range e.nodeServices[node] {
		s[svc] = nil
	}
	return s
}

// sliceScope: a slice's endpoints are seen through its Service only.
func (e *Engine) sliceScope(slice types.NamespacedName) scope {
	if svc, ok := e.sliceService[slice]; ok {
		return allNodesOf(svc)
	}
	return scope{}
}

// change applies mutate and returns the views in scope whose content it
// changed, appeared or went, sorted.
func (e *Engine) change(s scope, mutate func()) []Change {
	before := e.views(s)
	mutate()
	after := e.views(s)
	var changed []Change
	for key, old := range before {
		if current, ok := after[key]; !ok || !reflect.DeepEqual(old, current) {
			changed = append(changed, Change{Key: key, Old: old, New: current})
		}
	}
	for key, current := range after {
		if _, ok := before[key]; !ok {
			changed = append(changed, Change{Key: key, New: current})
		}
	}
	slices.SortFunc(changed, func(a, b Change) int { return compareViewKeys(a.Key, b.Key) })
	return changed
}

// views computes the views in scope, once per group of nodes that share a
// signature.
func (e *Engine) views(s scope) map[ViewKey]*View {
	out := map[ViewKey]*View{}
	for svc, nodes := range s {
		p, ok := e.services[svc]
		if !ok {
			continue
		}
		source := e.sortedSlices(svc)
		shared := map[string]*View{}
		visit := func(node string) {
			labels, ok := e.nodes[node]
			if !ok {
				return
			}
			sig := signature(p, node, labels)
			view, ok := shared[sig]
			if !ok {
				view = computeView(p, source, matcher{node: node, labels: labels, nodes: e.nodes})
				shared[sig] = view
			}
			out[ViewKey{Node: node, Service: svc}] = view
		}
		if nodes == nil {
			for node := range e.nodes {
				visit(node)
			}
			continue
		}
		for node := range nodes {
			visit(node)
		}
	}
	return out
}

func compareViewKeys(a, b ViewKey) int {
	return cmp.Or(compareServices(a.Service, b.Service), cmp.Compare(a.Node, b.Node))
}

func compareServices(a, b types.NamespacedName) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
