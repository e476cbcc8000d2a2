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
	"strings"
)

// nodeGroups groups the nodes by their values of the label keys some
// Services' topology reads together: nodes of one group see the same of
// each such Service, so a change that reaches most nodes is computed once
// per group. Each group is a sorted list replaced, never modified, when it
// changes, so that changes may hold it.
type nodeGroups struct {
	keys []string
	// services counts the Services whose keys these are.
	services int
	groups   map[string][]string
}

// groupingID names the grouping a Service's policy uses; "" when its views
// depend on more than label values (the node itself is a tier).
func groupingID(p policy) (string, bool) {
	if p.mode == "" || len(p.keys) == 0 || slices.ContainsFunc(p.keys, func(key string) bool { return isSameNode(p, key) }) {
		return "", false
	}
	return strings.Join(labelKeys(p), "\x00"), true
}

func (g *nodeGroups) valuesOf(labels map[string]string, b []byte) []byte {
	for _, key := range g.keys {
		if value, ok := labels[key]; ok {
			b = append(b, '=')
			b = append(b, value...)
		}
		b = append(b, 0)
	}
	return b
}

func (g *nodeGroups) add(node string, labels map[string]string) {
	id := string(g.valuesOf(labels, nil))
	group := g.groups[id]
	i, _ := slices.BinarySearch(group, node)
	// A new list of the exact size, never the old one grown: changes in
	// the history share a group's list (see appendChanges).
	grown := make([]string, len(group)+1)
	copy(grown, group[:i])
	grown[i] = node
	copy(grown[i+1:], group[i:])
	g.groups[id] = grown
}

func (g *nodeGroups) remove(node string, labels map[string]string) {
	id := string(g.valuesOf(labels, nil))
	group := g.groups[id]
	i, found := slices.BinarySearch(group, node)
	switch {
	case !found:
	case len(group) == 1:
		delete(g.groups, id)
	default:
		g.groups[id] = slices.Delete(slices.Clone(group), i, i+1)
	}
}

// useGrouping records that a Service's policy groups nodes, building the
// grouping for the first.
func (e *Engine) useGrouping(p policy) {
	id, ok := groupingID(p)
	if !ok {
		return
	}
	g := e.groupings[id]
	if g == nil {
		g = &nodeGroups{keys: labelKeys(p), groups: map[string][]string{}}
		for _, node := range e.Nodes() {
			g.add(node, e.nodes[node])
		}
		e.groupings[id] = g
	}
	g.services++
}

// dropGrouping records that a Service's policy no longer groups nodes.
func (e *Engine) dropGrouping(p policy) {
	id, ok := groupingID(p)
	if !ok {
		return
	}
	if g := e.groupings[id]; g != nil {
		if g.services--; g.services == 0 {
			delete(e.groupings, id)
		}
	}
}

// grouping returns the grouping of a policy's nodes, if it has one.
func (e *Engine) grouping(p policy) *nodeGroups {
	id, ok := groupingID(p)
	if !ok {
		return nil
	}
	return e.groupings[id]
}
