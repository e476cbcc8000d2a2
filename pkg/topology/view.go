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

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// View is what one node routes to for one Service. Views are shared between
// nodes and changes: never modify one.
type View struct {
	// Labels are the Service's labels.
	Labels   map[string]string
	Topology topologyapi.TopologyInfo
	Slices   []topologyapi.NodeEndpointSlice
}

// SliceView is what a node routes to of one source EndpointSlice: a
// NodeEndpoints without its node. Shared between nodes: never modify one.
type SliceView struct {
	Service types.NamespacedName
	// Labels are the Service's labels.
	Labels   map[string]string
	Topology topologyapi.TopologyInfo
	Slice    topologyapi.NodeEndpointSlice
}

// SliceViews returns the slices of a view a node routes to, those with an
// endpoint, sorted by name.
func (v *View) SliceViews(svc types.NamespacedName) []*SliceView {
	var out []*SliceView
	for i := range v.Slices {
		if sv, ok := v.SliceView(svc, i); ok {
			out = append(out, &sv)
		}
	}
	return out
}

// SliceView returns the view of the i-th slice, unless the node routes to
// none of its endpoints: SliceViews one at a time, for a reader that keeps
// none, as a page of a list that builds its objects from them, and need not
// allocate them.
func (v *View) SliceView(svc types.NamespacedName, i int) (SliceView, bool) {
	slice := v.Slices[i]
	return SliceView{Service: svc, Labels: v.Labels, Topology: v.Topology, Slice: slice}, len(slice.Endpoints) > 0
}

// policy is how a Service's endpoints are pruned.
type policy struct {
	labels map[string]string
	mode   topologyapi.TopologyMode
	keys   []string
	// rule names where mode and keys came from.
	rule string
	// minReady is the Service's min-ready; mins holds, per key, the ready
	// endpoints its tier needs to be chosen in ordered mode.
	minReady MinReady
	mins     []int
	// emptyIsNone says that a node whose label is empty is in no tier of it.
	emptyIsNone bool
	// inherited is set when the Service carries no rule of its own and
	// follows its Namespace's default.
	inherited bool
	// malformed holds why the Service's annotations could not be parsed: a
	// malformed rule leaves it unpruned, a malformed min-ready is ignored.
	malformed error
}

// endpointSlice is what the engine keeps of an EndpointSlice.
type endpointSlice struct {
	name        string
	labels      map[string]string
	addressType discoveryv1.AddressType
	ports       []discoveryv1.EndpointPort
	endpoints   []discoveryv1.Endpoint
}

// computeView prunes the slices of a Service (sorted by name) for a node in
// the viewer tiers.
func computeView(p policy, source []*endpointSlice, st *serviceTiers, viewer []tier) *View {
	view := &View{Labels: p.labels, Topology: topologyapi.TopologyInfo{Mode: p.mode, Keys: p.keys, Rule: p.rule}}
	switch p.mode {
	case topologyapi.TopologyModeAnyMatch:
		falling := st.fallingFamilies(viewer)
		view.Topology.MatchedKey = st.anyMatched(falling, viewer)
		view.Slices = prune(source, st, func(family discoveryv1.AddressType, tiers []tier) bool {
			if falling[family] {
				return true
			}
			for k := range p.matching() {
				if tiers[k].meets(viewer[k]) {
					return true
				}
			}
			return false
		})
	case topologyapi.TopologyModeOrdered:
		chosen, widest := st.chosenTiers(viewer)
		view.Topology.MatchedKey = keyAt(p, widest)
		view.Slices = prune(source, st, func(family discoveryv1.AddressType, tiers []tier) bool {
			k, ok := chosen[family]
			return ok && k >= 0 && tiers[k].meets(viewer[k])
		})
	default:
		view.Slices = unpruned(source)
	}
	return view
}

// anyMatched is the key an any-match node's view shows matched: "*" when it
// falls back in a family, else its first tier holding an endpoint; "" for
// none.
func (st *serviceTiers) anyMatched(falling map[discoveryv1.AddressType]bool, viewer []tier) string {
	if len(falling) > 0 {
		return KeyAny
	}
	return keyAt(st.policy, st.firstHeld(viewer))
}

// keyAt is a policy's k-th key, "" for k < 0.
func keyAt(p policy, k int) string {
	if k < 0 {
		return ""
	}
	return p.keys[k]
}

// Ready reads an unset ready condition as ready, as discovery/v1 says to.
func Ready(ep *discoveryv1.Endpoint) bool {
	return ep.Conditions.Ready == nil || *ep.Conditions.Ready
}

// prune keeps the endpoints that keep accepts by their slice's address family
// and their tiers, without topology hints: the set is already pruned, and
// hints computed for the whole set would make kube-proxy prune it again.
// Every source slice stays, so its identity is kept.
func prune(source []*endpointSlice, st *serviceTiers, keep func(family discoveryv1.AddressType, tiers []tier) bool) []topologyapi.NodeEndpointSlice {
	out := make([]topologyapi.NodeEndpointSlice, 0, len(source))
	for _, slice := range source {
		tiers := st.endpoints[slice.name]
		var kept []discoveryv1.Endpoint
		for i := range slice.endpoints {
			if keep(slice.addressType, tiers[i]) {
				ep := slice.endpoints[i]
				ep.Hints = nil
				kept = append(kept, ep)
			}
		}
		out = append(out, viewSlice(slice, slices.Clip(kept)))
	}
	return out
}

// unpruned keeps every endpoint as it is, hints included: kube-proxy then
// applies trafficDistribution and topology-mode: Auto to a Service gridview
// does not prune exactly as it would without gridview.
func unpruned(source []*endpointSlice) []topologyapi.NodeEndpointSlice {
	out := make([]topologyapi.NodeEndpointSlice, 0, len(source))
	for _, slice := range source {
		out = append(out, viewSlice(slice, slices.Clip(slice.endpoints)))
	}
	return out
}

func viewSlice(slice *endpointSlice, endpoints []discoveryv1.Endpoint) topologyapi.NodeEndpointSlice {
	return topologyapi.NodeEndpointSlice{
		Name: slice.name, Labels: slice.labels, AddressType: slice.addressType,
		Ports: slice.ports, Endpoints: endpoints,
	}
}
