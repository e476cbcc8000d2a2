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
	discoveryv1 "k8s.io/api/discovery/v1"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// fallsBack tells whether a policy has a fallback set: an ordered one whose
// last tier is "*", or an any-match one that lists "*" (last), whose nodes
// short of matched ready endpoints get every endpoint.
func (p policy) fallsBack() bool {
	return len(p.keys) > 0 && p.keys[len(p.keys)-1] == KeyAny && p.mode != topologyapi.TopologyModeNone
}

// matching returns the keys of an any-match policy an endpoint may match by
// label: all but "*", which is the fallback set, not a match.
func (p policy) matching() int {
	if p.fallsBack() {
		return len(p.keys) - 1
	}
	return len(p.keys)
}

// readyOn is the ready endpoints of one address family on one node (or on
// none), with the node's tiers: what a node's matched ready endpoints, the
// union of its matched tiers, are counted from.
type readyOn struct {
	tiers []tier
	ready int
}

// matchedReady counts, for a node in the viewer tiers, the ready endpoints of
// one family in any of its matched tiers, each once.
func (st *serviceTiers) matchedReady(family discoveryv1.AddressType, viewer []tier) int {
	n := 0
	for _, on := range st.ready[family] {
		for k := range st.policy.matching() {
			if on.tiers[k].meets(viewer[k]) {
				n += on.ready
				break
			}
		}
	}
	return n
}

// fallingBack tells whether a node of an any-match Service with "*" gets
// every endpoint of a family: when its matched ready endpoints of it number
// fewer than the least min-ready of the keys that matched, those whose tier
// holds an endpoint of the family; none matched, it has none to keep. Each
// family apart, as kube-proxy routes each apart. A tier's own ready
// endpoints bound the union from below, their sum from above: the union is
// counted only between.
func (st *serviceTiers) fallingBack(family discoveryv1.AddressType, viewer []tier) bool {
	p := st.policy
	counts := st.counts[family]
	least, sum := -1, 0
	for k := range p.matching() {
		c := counts.count(k, viewer[k])
		if c.all == 0 {
			continue
		}
		if least < 0 || p.mins[k] < least {
			least = p.mins[k]
		}
		sum += c.ready
	}
	if least < 0 || sum < least {
		return true
	}
	for k := range p.matching() {
		if c := counts.count(k, viewer[k]); c.all > 0 && c.ready >= least {
			return false
		}
	}
	return st.matchedReady(family, viewer) < least
}

// fallingFamilies returns, for a node of an any-match Service, the families
// it gets every endpoint of; nil when the Service has no "*".
func (st *serviceTiers) fallingFamilies(viewer []tier) map[discoveryv1.AddressType]bool {
	if !st.policy.fallsBack() {
		return nil
	}
	out := make(map[discoveryv1.AddressType]bool, len(st.families))
	for _, family := range st.families {
		if st.fallingBack(family, viewer) {
			out[family] = true
		}
	}
	return out
}

// countReady adds an endpoint to the ready counts of its node, for an
// any-match Service with "*".
func (st *serviceTiers) countReady(family discoveryv1.AddressType, node string, tiers []tier, ready bool) {
	if st.policy.mode != topologyapi.TopologyModeAnyMatch || !st.policy.fallsBack() {
		return
	}
	if st.ready == nil {
		st.ready = map[discoveryv1.AddressType]map[string]*readyOn{}
	}
	byNode := st.ready[family]
	if byNode == nil {
		byNode = map[string]*readyOn{}
		st.ready[family] = byNode
	}
	on := byNode[node]
	if on == nil {
		on = &readyOn{tiers: tiers}
		byNode[node] = on
	}
	if ready {
		on.ready++
	}
}
