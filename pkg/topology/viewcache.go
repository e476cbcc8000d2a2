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
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// serviceViews derives the views of one Service from one state of its inputs.
// It is replaced, never modified, when they change, so that a reader holding
// one needs no lock of the engine's; it caches the views it computed, per
// signature, for every reader.
type serviceViews struct {
	// stamp is the engine's stamp when the views were derived.
	stamp  uint64
	policy policy
	tiers  *serviceTiers
	// slices are the Service's slices, sorted by name.
	slices []*endpointSlice

	mu    sync.Mutex
	cache map[string]*View
	// counts are the last RouteCounts, valid while the engine's node
	// generation is theirs.
	counts atomic.Pointer[countsAt]
}

func (e *Engine) newServiceViews(p policy, st *serviceTiers, slices []*endpointSlice) *serviceViews {
	return &serviceViews{stamp: e.stamp, policy: p, tiers: st, slices: slices, cache: map[string]*View{}}
}

// uniform says whether every node has the same view: nothing is pruned.
func (sv *serviceViews) uniform() bool {
	return sv.policy.mode == topologyapi.TopologyModeNone
}

// view returns the view of a node, given its labels, computing it once per
// signature. viewer and sig are scratch space the caller may reuse.
func (sv *serviceViews) view(node string, labels map[string]string, viewer []tier, sig []byte) (*View, []tier, []byte) {
	viewer = tiersOf(viewer, sv.policy, node, labels, true)
	sig = appendSignature(sig[:0], sv.policy, sv.tiers, viewer)
	sv.mu.Lock()
	defer sv.mu.Unlock()
	view, ok := sv.cache[string(sig)]
	if !ok {
		view = computeView(sv.policy, sv.slices, sv.tiers, viewer)
		sv.cache[string(sig)] = view
	}
	return view, viewer, sig
}

// Snapshot is the engine's state at one moment, for reading many views
// without holding whatever lock serializes the engine's mutations: it shares
// the engine's immutable parts and copies only three maps.
type Snapshot struct {
	nodes      map[string]map[string]string
	nodeStamps map[string]uint64
	services   map[types.NamespacedName]*serviceViews
	// sortedNodes and sortedServices are the keys of nodes and services,
	// sorted.
	sortedNodes    []string
	sortedServices []types.NamespacedName
}

// Snapshot returns the current state; it stays valid after later mutations.
func (e *Engine) Snapshot() *Snapshot {
	return &Snapshot{
		nodes: maps.Clone(e.nodes), nodeStamps: maps.Clone(e.nodeStamps), services: maps.Clone(e.views),
		sortedNodes: e.Nodes(), sortedServices: e.sortedServices(),
	}
}

// View returns a node's view of a Service; false when either is unknown or
// the Service has no view (ExternalName).
func (s *Snapshot) View(node string, svc types.NamespacedName) (*View, bool) {
	return viewOf(s.nodes, s.services, node, svc)
}

// Stamp is the latest stamp of the mutations that changed a node's view of
// a Service, or later.
func (s *Snapshot) Stamp(node string, svc types.NamespacedName) uint64 {
	return stampOf(s.nodeStamps, s.services, node, svc)
}

// Nodes returns the known nodes, sorted. Shared: never modify it.
func (s *Snapshot) Nodes() []string { return s.sortedNodes }

// Services returns the Services that have views, sorted; those of one
// namespace, or of all when namespace is empty. Shared: never modify it.
func (s *Snapshot) Services(namespace string) []types.NamespacedName {
	return inNamespace(s.sortedServices, namespace)
}

func viewOf(nodes map[string]map[string]string, services map[types.NamespacedName]*serviceViews, node string, svc types.NamespacedName) (*View, bool) {
	sv, ok := services[svc]
	if !ok {
		return nil, false
	}
	labels, ok := nodes[node]
	if !ok {
		return nil, false
	}
	view, _, _ := sv.view(node, labels, nil, nil)
	return view, true
}

func stampOf(nodeStamps map[string]uint64, services map[types.NamespacedName]*serviceViews, node string, svc types.NamespacedName) uint64 {
	var stamp uint64
	if sv, ok := services[svc]; ok {
		stamp = sv.stamp
	}
	return max(stamp, nodeStamps[node])
}

// inNamespace returns the part of sorted Services in a namespace; all of
// them when it is empty.
func inNamespace(sorted []types.NamespacedName, namespace string) []types.NamespacedName {
	if namespace == "" {
		return sorted
	}
	start, _ := slices.BinarySearchFunc(sorted, namespace, func(svc types.NamespacedName, ns string) int { return cmp.Compare(svc.Namespace, ns) })
	end := start
	for end < len(sorted) && sorted[end].Namespace == namespace {
		end++
	}
	return sorted[start:end:end]
}
