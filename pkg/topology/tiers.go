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
// without a label, in none of that key.
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

// serviceTiers is what the engine derives from a Service's topology keys,
// its endpoints and the labels of their nodes, so that views compare strings
// instead of looking nodes up, and a node's choice of tier is O(keys).
type serviceTiers struct {
	// policy is the one the tiers were derived for.
	policy policy
	// endpoints holds the tiers of each endpoint, by slice name and index.
	endpoints map[string][][]tier
	// counts holds, per key index, the endpoints in each tier by value.
	counts []map[string]tierCount
}

func (st *serviceTiers) count(k int, t tier) tierCount {
	if !t.in {
		return tierCount{}
	}
	return st.counts[k][t.value]
}

// firstTier returns the index of the first key whose tier holds, for a node
// in the viewer tiers, endpoints that n counts; -1 for none.
func (st *serviceTiers) firstTier(viewer []tier, n func(tierCount) int) int {
	for k, t := range viewer {
		if n(st.count(k, t)) > 0 {
			return k
		}
	}
	return -1
}

// chosenTier returns the index of the key of an ordered Service whose tier a
// node sees: the first with a ready endpoint; else the first that is not
// empty, so that kube-proxy can still fall back to serving or terminating
// endpoints; -1 for none.
func (st *serviceTiers) chosenTier(viewer []tier) int {
	if k := st.firstTier(viewer, readyEndpoints); k >= 0 {
		return k
	}
	return st.firstTier(viewer, allEndpoints)
}

// hasReadyTier tells whether a tier of a node but "*" holds a ready endpoint.
func (st *serviceTiers) hasReadyTier(p policy, viewer []tier) bool {
	for k, t := range viewer {
		if p.keys[k] != KeyAny && st.count(k, t).ready > 0 {
			return true
		}
	}
	return false
}

// countTiers derives a Service's tiers again after its endpoints, its policy
// or the labels of a node it has endpoints on changed: what its views are
// computed from, so it drops them.
func (e *Engine) countTiers(svc types.NamespacedName) {
	delete(e.shared, svc)
	e.indexTiers(svc, false)
	p, ok := e.services[svc]
	if !ok || p.mode == topologyapi.TopologyModeNone {
		delete(e.tiers, svc)
		return
	}
	st := &serviceTiers{policy: p, endpoints: map[string][][]tier{}, counts: make([]map[string]tierCount, len(p.keys))}
	for k := range st.counts {
		st.counts[k] = map[string]tierCount{}
	}
	// Endpoints on one node share its tiers; those without one, in no tier
	// but "*", share theirs.
	unplaced := tiersOf(nil, p, "", nil, false)
	byNode := map[string][]tier{}
	for name, slice := range e.slices[svc] {
		endpoints := make([][]tier, len(slice.endpoints))
		for i := range slice.endpoints {
			ep := &slice.endpoints[i]
			tiers := unplaced
			if ep.NodeName != nil {
				node := *ep.NodeName
				if tiers = byNode[node]; tiers == nil {
					labels, known := e.nodes[node]
					tiers = tiersOf(nil, p, node, labels, known)
					byNode[node] = tiers
				}
			}
			endpoints[i] = tiers
			for k, t := range tiers {
				if t.in {
					c := st.counts[k][t.value]
					c.all++
					if ready(ep) {
						c.ready++
					}
					st.counts[k][t.value] = c
				}
			}
		}
		st.endpoints[name] = endpoints
	}
	e.tiers[svc] = st
	e.indexTiers(svc, true)
}

// indexTiers adds a Service to tierServices for each tier of a label key that
// holds an endpoint of it, or removes it.
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
		for value := range st.counts[k] {
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
	}
}
