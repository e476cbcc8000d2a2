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

// policy is how a Service's endpoints are pruned.
type policy struct {
	labels map[string]string
	mode   topologyapi.TopologyMode
	keys   []string
	// malformed holds why the annotation could not be parsed: the Service is
	// then not pruned.
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

// matcher decides for the viewing node whether an endpoint falls in a key's tier.
type matcher struct {
	node   string
	labels map[string]string // nil: the viewing node is unknown
	nodes  map[string]map[string]string
}

func (m matcher) matches(key string, ep *discoveryv1.Endpoint, hostnameIsSameNode bool) bool {
	if key == KeyAny {
		return true
	}
	if ep.NodeName == nil || m.labels == nil {
		return false
	}
	epLabels, known := m.nodes[*ep.NodeName]
	if !known {
		return false
	}
	if key == KeyHostname && hostnameIsSameNode {
		return *ep.NodeName == m.node
	}
	mine, ok := m.labels[key]
	if !ok {
		return false
	}
	theirs, ok := epLabels[key]
	return ok && theirs == mine
}

// computeView prunes the slices of a Service (sorted by name) for a node.
func computeView(p policy, source []*endpointSlice, m matcher) *View {
	view := &View{Labels: p.labels, Topology: topologyapi.TopologyInfo{Mode: p.mode, Keys: p.keys}}
	switch p.mode {
	case topologyapi.TopologyModeAnyMatch:
		view.Topology.MatchedKey = firstKey(p.keys, source, m, false, anyEndpoint)
		view.Slices = prune(source, func(ep *discoveryv1.Endpoint) bool {
			return slices.ContainsFunc(p.keys, func(key string) bool { return m.matches(key, ep, false) })
		})
	case topologyapi.TopologyModeOrdered:
		// The first tier with a ready endpoint wins; else the first that is not
		// empty, so that kube-proxy can still fall back to serving or
		// terminating endpoints; else nothing.
		key := firstKey(p.keys, source, m, true, ready)
		if key == "" {
			key = firstKey(p.keys, source, m, true, anyEndpoint)
		}
		view.Topology.MatchedKey = key
		view.Slices = prune(source, func(ep *discoveryv1.Endpoint) bool { return key != "" && m.matches(key, ep, true) })
	default:
		view.Slices = prune(source, func(*discoveryv1.Endpoint) bool { return true })
	}
	return view
}

// firstKey returns the first key whose tier holds an endpoint that accept
// takes, or "".
func firstKey(keys []string, slices []*endpointSlice, m matcher, hostnameIsSameNode bool, accept func(*discoveryv1.Endpoint) bool) string {
	for _, key := range keys {
		for _, slice := range slices {
			for i := range slice.endpoints {
				if ep := &slice.endpoints[i]; accept(ep) && m.matches(key, ep, hostnameIsSameNode) {
					return key
				}
			}
		}
	}
	return ""
}

func anyEndpoint(*discoveryv1.Endpoint) bool { return true }

// ready reads an unset ready condition as ready, as discovery/v1 says to.
func ready(ep *discoveryv1.Endpoint) bool {
	return ep.Conditions.Ready == nil || *ep.Conditions.Ready
}

// prune keeps the endpoints keep accepts, without topology hints: the set is
// already pruned. Every source slice stays, so its identity is kept.
func prune(source []*endpointSlice, keep func(*discoveryv1.Endpoint) bool) []topologyapi.NodeEndpointSlice {
	out := make([]topologyapi.NodeEndpointSlice, 0, len(source))
	for _, slice := range source {
		var kept []discoveryv1.Endpoint
		for i := range slice.endpoints {
			if keep(&slice.endpoints[i]) {
				ep := slice.endpoints[i]
				ep.Hints = nil
				kept = append(kept, ep)
			}
		}
		out = append(out, topologyapi.NodeEndpointSlice{
			Name: slice.name, Labels: slice.labels, AddressType: slice.addressType,
			Ports: slice.ports, Endpoints: slices.Clip(kept),
		})
	}
	return out
}
