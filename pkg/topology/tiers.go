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

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// tier is the tier of one key a node is in, shared by the nodes with the
// same value; in is false for none.
type tier struct {
	value string
	in    bool
}

// meets tells whether an endpoint in tier t is in the viewing node's tier.
func (t tier) meets(viewer tier) bool {
	return t.in && viewer.in && t.value == viewer.value
}

// tiersOf returns a node's tier of each key of a policy, in dst's array when
// it is large enough: its label's value; the node itself for a same-node
// key; one tier for "*". An unknown node is in no tier but "*"; a node
// without a label, in none of that key, nor one with an empty value under a
// policy that reads none as Kubernetes and OpenYurt do.
func tiersOf(dst []tier, p policy, node string, labels map[string]string, known bool) []tier {
	out := slices.Grow(dst[:0], len(p.keys))[:len(p.keys)]
	clear(out)
	for k, key := range p.keys {
		switch {
		case key == KeyAny:
			out[k] = tier{in: true}
		case !known:
		case isSameNode(p, key):
			out[k] = tier{value: node, in: true}
		default:
			out[k].value, out[k].in = labels[key]
			out[k].in = out[k].in && (out[k].value != "" || !p.emptyIsNone)
		}
	}
	return out
}

// tierCount counts the endpoints of a Service in one tier.
type tierCount struct {
	all, ready int
}

func allEndpoints(c tierCount) int   { return c.all }
func readyEndpoints(c tierCount) int { return c.ready }

// tierCounts holds, per key index, the endpoints in each tier by value.
type tierCounts []map[string]tierCount

func newTierCounts(keys int) tierCounts {
	c := make(tierCounts, keys)
	for k := range c {
		c[k] = map[string]tierCount{}
	}
	return c
}

// count is nil-safe: a family without endpoints counts none.
func (c tierCounts) count(k int, t tier) tierCount {
	if !t.in || c == nil {
		return tierCount{}
	}
	return c[k][t.value]
}

// firstTier returns the index of the first key whose tier holds, for a node
// in the viewer tiers, endpoints that n counts; -1 for none.
func (c tierCounts) firstTier(viewer []tier, n func(tierCount) int) int {
	for k, t := range viewer {
		if n(c.count(k, t)) > 0 {
			return k
		}
	}
	return -1
}

// chosenTier returns the index of the key of an ordered Service whose tier a
// node sees: the first that holds the ready endpoints mins asks of it; else
// the first with a ready endpoint; else the first that is not empty, so that
// kube-proxy can still fall back to serving or terminating endpoints; -1 for
// none.
func (c tierCounts) chosenTier(viewer []tier, mins []int) int {
	for k, t := range viewer {
		if c.count(k, t).ready >= mins[k] {
			return k
		}
	}
	if k := c.firstTier(viewer, readyEndpoints); k >= 0 {
		return k
	}
	return c.firstTier(viewer, allEndpoints)
}

// hasQualifyingTier tells whether a tier of a node but "*" holds the ready
// endpoints min-ready asks of it: the node then never chooses "*".
func (c tierCounts) hasQualifyingTier(p policy, viewer []tier) bool {
	for k, t := range viewer {
		if p.keys[k] != KeyAny && c.count(k, t).ready >= p.mins[k] {
			return true
		}
	}
	return false
}

// serviceTiers is what the engine derives from a Service's topology keys,
// its endpoints and the labels of their nodes, so that views compare strings
// instead of looking nodes up, and a node's choice of tier is O(keys).
type serviceTiers struct {
	// policy is the one the tiers were derived for.
	policy policy
	// endpoints holds the tiers of each endpoint, by slice name and index.
	endpoints map[string][][]tier
	// counts holds the tiers' counts per address family: an ordered Service
	// chooses its tier for each family apart, as kube-proxy routes each
	// family apart, so that the IPv6 slices of a dual-stack Service, lagging
	// their IPv4 twins, never choose a tier without a ready IPv6 endpoint.
	counts map[discoveryv1.AddressType]tierCounts
	// families are the families in counts, sorted.
	families []discoveryv1.AddressType
	// ready holds, for an any-match Service with "*", the ready endpoints
	// per family and node ("" for none).
	ready map[discoveryv1.AddressType]map[string]*readyOn
}

// held tells whether a tier holds an endpoint of any family.
func (st *serviceTiers) held(k int, t tier) bool {
	for _, c := range st.counts {
		if c.count(k, t).all > 0 {
			return true
		}
	}
	return false
}

// firstHeld returns the index of the first key whose tier holds, for a node
// in the viewer tiers, an endpoint of any family; -1 for none.
func (st *serviceTiers) firstHeld(viewer []tier) int {
	for k, t := range viewer {
		if st.held(k, t) {
			return k
		}
	}
	return -1
}

// chosenTiers returns, for an ordered Service, the index of the key each
// family chooses for a node, by family, and the widest of them: what
// matchedKey shows, as the farthest this node's traffic may go.
func (st *serviceTiers) chosenTiers(viewer []tier) (map[discoveryv1.AddressType]int, int) {
	byFamily := make(map[discoveryv1.AddressType]int, len(st.families))
	widest := -1
	for _, family := range st.families {
		k := st.counts[family].chosenTier(viewer, st.policy.mins)
		byFamily[family] = k
		widest = max(widest, k)
	}
	return byFamily, widest
}

// countTiers derives a Service's tiers again after its endpoints, its policy
// or the labels of a node it has endpoints on changed: what its views are
// computed from, so it replaces the Service's views.
func (e *Engine) countTiers(svc types.NamespacedName) {
	e.indexTiers(svc, false)
	p, ok := e.services[svc]
	if _, had := e.views[svc]; had != ok {
		e.servicesSorted.Store(nil)
	}
	if !ok {
		delete(e.tiers, svc)
		delete(e.views, svc)
		return
	}
	source := e.sortedSlices(svc)
	if p.mode == topologyapi.TopologyModeNone {
		delete(e.tiers, svc)
		e.views[svc] = e.newServiceViews(p, nil, source)
		return
	}
	st := deriveTiers(p, source, e.labelsOf)
	e.tiers[svc] = st
	e.views[svc] = e.newServiceViews(p, st, source)
	e.indexTiers(svc, true)
}

// labelsOf returns a node's labels; false when the node is unknown.
func (e *Engine) labelsOf(node string) (map[string]string, bool) {
	labels, known := e.nodes[node]
	return labels, known
}

// deriveTiers derives the tiers of a Service's endpoints under a policy that
// has keys, reading the labels of their nodes from labelsOf: the engine's
// own, or those a review asks about.
func deriveTiers(p policy, source []*endpointSlice, labelsOf func(node string) (map[string]string, bool)) *serviceTiers {
	st := &serviceTiers{policy: p, endpoints: map[string][][]tier{}, counts: map[discoveryv1.AddressType]tierCounts{}}
	// Endpoints on one node share its tiers; those without one, in no tier
	// but "*", share theirs.
	unplaced := tiersOf(nil, p, "", nil, false)
	byNode := map[string][]tier{}
	for _, slice := range source {
		endpoints := make([][]tier, len(slice.endpoints))
		counts := st.counts[slice.addressType]
		if counts == nil && len(slice.endpoints) > 0 {
			counts = newTierCounts(len(p.keys))
			st.counts[slice.addressType] = counts
		}
		for i := range slice.endpoints {
			ep := &slice.endpoints[i]
			tiers, node := unplaced, ""
			if ep.NodeName != nil {
				node = *ep.NodeName
				if tiers = byNode[node]; tiers == nil {
					labels, known := labelsOf(node)
					tiers = tiersOf(nil, p, node, labels, known)
					byNode[node] = tiers
				}
			}
			endpoints[i] = tiers
			st.countReady(slice.addressType, node, tiers, Ready(ep))
			for k, t := range tiers {
				if t.in {
					c := counts[k][t.value]
					c.all++
					if Ready(ep) {
						c.ready++
					}
					counts[k][t.value] = c
				}
			}
		}
		st.endpoints[slice.name] = endpoints
	}
	st.families = slices.Sorted(maps.Keys(st.counts))
	return st
}

// indexTiers adds a Service to tierServices for each tier of a label key that
// holds an endpoint of it, of any family, or removes it; either is
// idempotent, so a tier that holds endpoints of two families is visited twice.
func (e *Engine) indexTiers(svc types.NamespacedName, add bool) {
	st := e.tiers[svc]
	if st == nil {
		return
	}
	p := st.policy
	for k, key := range p.keys {
		if key == KeyAny || isSameNode(p, key) {
			continue
		}
		for _, family := range st.families {
			for value := range st.counts[family][k] {
				e.indexTier(key, value, svc, add)
			}
		}
	}
}

func (e *Engine) indexTier(key, value string, svc types.NamespacedName, add bool) {
	byValue := e.tierServices[key]
	switch {
	case add && byValue == nil:
		e.tierServices[key] = map[string]sets.Set[types.NamespacedName]{value: sets.New(svc)}
	case add && byValue[value] == nil:
		byValue[value] = sets.New(svc)
	case add:
		byValue[value].Insert(svc)
	case byValue[value].Delete(svc).Len() == 0:
		delete(byValue, value)
		if len(byValue) == 0 {
			delete(e.tierServices, key)
		}
	}
}
