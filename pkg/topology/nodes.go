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
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// SetNode adds or updates a node's labels.
func (e *Engine) SetNode(name string, labels map[string]string) []SliceChange {
	changes, ownViews := e.SetNodeInStages(name, labels)
	if ownViews != nil {
		changes = append(changes, ownViews()...)
	}
	return changes
}

// SetNodeInStages adds or updates a node's labels as SetNode does, and
// returns what that changed in two stages: at once, the changes of every
// view of the Services with endpoints on the node; then, from ownViews, the
// changes of the node's own views of the other Services. A node that moves
// to another unit changes its own view of most Services and the views of a
// few hundred other nodes, whose changes no longer wait for its own. Call
// ownViews, when not nil, before any other change of the engine, with the
// engine's stamp set to the one the node's views take: it finds which views
// changed from the engine as it is then. Until then the engine already
// serves the node's new views at the first stage's stamp: nothing may read
// it in between.
func (e *Engine) SetNodeInStages(name string, labels map[string]string) (changes []SliceChange, ownViews func() []SliceChange) {
	if e.HasNode(name, labels) {
		return nil, nil
	}
	old, known := e.nodes[name]
	changed := e.changedKeys(old, labels)
	s := e.movedEndpointsScope(name, old, labels, changed)
	if !known {
		// A node appearing changes its own view of every Service.
		for svc := range e.nodeServices[name] {
			s.add(svc, name)
		}
	}
	changes = e.change(s, func() { e.setNode(name, labels) })
	if known && changed.Len() == 0 {
		return changes, nil
	}
	// Which of the other Services the node now sees differently is found
	// only then, out of the other nodes' way: their derived views and tiers
	// do not depend on its labels, so the answer is the same before its
	// change and after.
	return changes, func() []SliceChange {
		e.nodeStamps[name] = e.stamp
		own := e.viewedServices(old, e.nodes[name], !known, changed).Difference(e.nodeServices[name]).UnsortedList()
		slices.SortFunc(own, compareServices)
		return e.ownViewChanges(name, old, known, own)
	}
}

// ownViewChanges returns what a node's new labels changed of its own views
// of Services whose views its labels do not derive, sorted.
func (e *Engine) ownViewChanges(node string, old map[string]string, known bool, services []types.NamespacedName) []SliceChange {
	nodes, labels := []string{node}, e.nodes[node]
	var changed []SliceChange
	var viewer []tier
	var sig []byte
	for _, svc := range services {
		sv, ok := e.views[svc]
		if !ok {
			continue
		}
		var before, after *View
		if known {
			before, viewer, sig = sv.view(node, old, viewer, sig)
		}
		after, viewer, sig = sv.view(node, labels, viewer, sig)
		if before != after {
			changed = appendSliceChanges(changed, svc, before, after, nodes)
		}
	}
	sortGoneFirst(changed)
	return changed
}

// HasNode says whether the node is known with these very labels, as after
// a kubelet's status update: setting it again would change nothing.
func (e *Engine) HasNode(name string, labels map[string]string) bool {
	old, known := e.nodes[name]
	return known && maps.Equal(old, labels)
}

// DeleteNode removes a node: its views go, and its endpoints match only "*".
func (e *Engine) DeleteNode(name string) []SliceChange {
	return e.change(e.nodeScope(name), func() { e.deleteNode(name) })
}

func (e *Engine) setNode(name string, labels map[string]string) {
	old, known := e.nodes[name]
	if !known {
		e.sortedNodes.Store(nil)
	}
	labels = maps.Clone(labels)
	// A label no Service reads moves no route.
	if before, after := e.readLabels(old), e.readLabels(labels); !known || !maps.Equal(before, after) {
		e.nodeChanged(nodeChange{name: name, old: before, known: known, new: after, kept: true})
	}
	e.byLabel.remove(name, old)
	for _, g := range e.groupings {
		if known {
			g.remove(name, old)
		}
		g.add(name, labels)
	}
	e.nodes[name] = labels
	e.nodeStamps[name] = e.stamp
	e.byLabel.add(name, labels)
	for svc := range e.nodeServices[name] {
		// A known node's labels place its endpoints only in the tiers of
		// the keys a Service reads: a Service that reads none of those that
		// changed (one that prunes nothing, as a DaemonSet's may) keeps its
		// tiers and its derived views.
		if !known || slices.ContainsFunc(labelKeys(e.services[svc]), func(key string) bool { return !sameValue(old, labels, key) }) {
			e.countTiers(svc)
		}
	}
}

// sameValue says whether two sets of labels have the same value of a key, or
// both lack it.
func sameValue(a, b map[string]string, key string) bool {
	va, oka := a[key]
	vb, okb := b[key]
	return oka == okb && va == vb
}

func (e *Engine) deleteNode(name string) {
	if old, known := e.nodes[name]; known {
		for _, g := range e.groupings {
			g.remove(name, old)
		}
		e.nodeChanged(nodeChange{name: name, old: e.readLabels(old), known: true})
	}
	e.byLabel.remove(name, e.nodes[name])
	delete(e.nodes, name)
	delete(e.nodeStamps, name)
	e.sortedNodes.Store(nil)
	for svc := range e.nodeServices[name] {
		e.countTiers(svc)
	}
}

// nodeScope is what deleting a node may change, computed before: a known
// node's own view of every Service, and the views of its endpoints'
// Services by the nodes that shared its labels.
func (e *Engine) nodeScope(name string) scope {
	old, known := e.nodes[name]
	changed := e.changedKeys(old, nil)
	s := e.movedEndpointsScope(name, old, nil, changed)
	for svc := range e.viewedServices(old, nil, known, changed) {
		s.add(svc, name)
	}
	return s
}

// changedKeys returns the keys some Service reads whose value differs
// between two sets of labels. An unknown node's endpoints fall in no
// labelled tier, as a node without labels' do: comparing to nil labels
// finds the keys whose tier changes.
func (e *Engine) changedKeys(old, labels map[string]string) sets.Set[string] {
	changed := sets.New[string]()
	for key := range e.keyServices {
		if !sameValue(old, labels, key) {
			changed.Insert(key)
		}
	}
	return changed
}

// viewedServices returns the Services whose view by a node going from old
// labels to new ones may change: every one when the node appears or goes;
// otherwise those that read a changed key and hold an endpoint in the tier
// it leaves or joins. A node leaving an empty tier for another empty one
// keeps its view, unless its own endpoints move with it (movedEndpointsScope).
func (e *Engine) viewedServices(old, labels map[string]string, every bool, changed sets.Set[string]) sets.Set[types.NamespacedName] {
	viewed := sets.New[types.NamespacedName]()
	if every {
		for svc := range e.services {
			viewed.Insert(svc)
		}
		return viewed
	}
	for key := range changed {
		for _, side := range []map[string]string{old, labels} {
			if value, ok := side[key]; ok {
				insertAll(viewed, e.tierServices[key][value])
			}
		}
	}
	return viewed
}

// movedEndpointsScope is what a node's changed labels change of the
// Services with endpoints on it, computed before the change: which tier its
// endpoints fall in, for the node and the nodes that share the old or the
// new value of a changed key. Nodes outside those groups keep every tier
// but "*", whose content does not depend on labels, so they keep their view.
func (e *Engine) movedEndpointsScope(name string, old, labels map[string]string, changed sets.Set[string]) scope {
	s := scope{}
	for svc := range e.nodeServices[name] {
		for _, key := range labelKeys(e.services[svc]) {
			if !changed.Has(key) {
				continue
			}
			s.add(svc, name)
			if value, ok := old[key]; ok {
				s.addAll(svc, e.byLabel.group(key, value))
			}
			if value, ok := labels[key]; ok {
				s.addAll(svc, e.byLabel.group(key, value))
			}
		}
	}
	return s
}

// nodeChangesKept bounds the node changes the engine remembers: counts
// older than that are counted again, which costs about as much as bringing
// them up to date through a few hundred changes (docs/performance.md,
// "Routing metrics pass").
const nodeChangesKept = 256

// nodeChange is a node that appeared, went or changed labels: of its labels
// before and after, those some Service read then (readLabels), all a route
// reads. A Service that reads another key came since, and has no counts
// from before.
type nodeChange struct {
	generation  uint64
	name        string
	old, new    map[string]string
	known, kept bool
}

// nodeChanged bumps the node generation and remembers the change.
func (e *Engine) nodeChanged(c nodeChange) {
	e.nodeGeneration++
	c.generation = e.nodeGeneration
	if len(e.nodeChanges) == 2*nodeChangesKept {
		// Copied, so that the dropped half's labels can be collected.
		e.nodeChanges = append(make([]nodeChange, 0, 2*nodeChangesKept), e.nodeChanges[nodeChangesKept:]...)
	}
	e.nodeChanges = append(e.nodeChanges, c)
}

// readLabels returns the labels some Service reads.
func (e *Engine) readLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for key := range e.keyServices {
		if value, ok := labels[key]; ok {
			out[key] = value
		}
	}
	return out
}

// nodeChangesSince returns the node changes after a generation; false when
// the engine no longer holds them all.
func (e *Engine) nodeChangesSince(generation uint64) ([]nodeChange, bool) {
	if generation > e.nodeGeneration || e.nodeGeneration-generation > uint64(len(e.nodeChanges)) {
		return nil, false
	}
	return e.nodeChanges[len(e.nodeChanges)-int(e.nodeGeneration-generation):], true
}
