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

// Package topologytest provides a brute-force reference of the topology
// engine's views, for tests.
package topologytest

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// Oracle is a deliberately simple model of the semantics in DESIGN.md and
// issue 13, a reference for tests of topology.Engine: it keeps the raw
// objects and recomputes every view from scratch, sharing no code with the
// engine but the annotation parsers. It is slow by design; do not use it
// outside tests.
type Oracle struct {
	// Nodes maps a node's name to its labels.
	Nodes    map[string]map[string]string
	Services map[types.NamespacedName]*corev1.Service
	Slices   map[types.NamespacedName]*discoveryv1.EndpointSlice
	// Namespaces maps a Namespace's name to its annotations.
	Namespaces map[string]map[string]string
}

// NewOracle returns an empty Oracle.
func NewOracle() *Oracle {
	return &Oracle{
		Nodes:      map[string]map[string]string{},
		Services:   map[types.NamespacedName]*corev1.Service{},
		Slices:     map[types.NamespacedName]*discoveryv1.EndpointSlice{},
		Namespaces: map[string]map[string]string{},
	}
}

// AllViews returns every view there is: one per known node and Service that
// is not an ExternalName.
func (o *Oracle) AllViews() map[topology.ViewKey]*topology.View {
	out := map[topology.ViewKey]*topology.View{}
	for key, svc := range o.Services {
		if svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		for node := range o.Nodes {
			out[topology.ViewKey{Node: node, Service: key}] = o.View(node, svc)
		}
	}
	return out
}

// View computes node's view of svc.
func (o *Oracle) View(node string, svc *corev1.Service) *topology.View {
	r := o.ruleOf(svc)
	mode, keys := r.mode, r.keys

	var source []*discoveryv1.EndpointSlice
	for _, slice := range o.Slices {
		if slice.Namespace == svc.Namespace && slice.Labels[discoveryv1.LabelServiceName] == svc.Name {
			source = append(source, slice)
		}
	}
	slices.SortFunc(source, func(a, b *discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })

	sameValue := func(key string, ep discoveryv1.Endpoint) bool {
		if ep.NodeName == nil {
			return false
		}
		theirs, known := o.Nodes[*ep.NodeName]
		mine, hasMine := o.Nodes[node][key]
		theirValue, hasTheirs := theirs[key]
		return known && hasMine && hasTheirs && mine == theirValue && (mine != "" || !r.emptyIsNone)
	}
	inTier := func(key string, ep discoveryv1.Endpoint) bool {
		switch key {
		case topology.KeyAny:
			return true
		case topology.KeyHostname:
			_, known := o.Nodes[node]
			return known && ep.NodeName != nil && *ep.NodeName == node
		}
		return sameValue(key, ep)
	}
	isReady := func(ep discoveryv1.Endpoint) bool { return ep.Conditions.Ready == nil || *ep.Conditions.Ready }
	tierHolds := func(key string, family discoveryv1.AddressType, want func(discoveryv1.Endpoint) bool) int {
		n := 0
		for _, slice := range source {
			if family != "" && slice.AddressType != family {
				continue
			}
			for _, ep := range slice.Endpoints {
				if inTier(key, ep) && want(ep) {
					n++
				}
			}
		}
		return n
	}
	tierHas := func(key string, family discoveryv1.AddressType, want func(discoveryv1.Endpoint) bool) bool {
		return tierHolds(key, family, want) > 0
	}
	anyEndpoint := func(discoveryv1.Endpoint) bool { return true }
	firstKey := func(family discoveryv1.AddressType, want func(discoveryv1.Endpoint) bool) int {
		return slices.IndexFunc(keys, func(key string) bool { return tierHas(key, family, want) })
	}

	keep := func(discoveryv1.Endpoint, discoveryv1.AddressType) bool { return true }
	matched := ""
	switch {
	case r.openYurt != "":
		// A hard filter, as yurthub's: the node itself, or its pool, or
		// itself when it is in no pool, or its zone.
		filter := r.keys[0]
		if mine := o.Nodes[node][poolLabel]; filter == poolLabel && mine == "" {
			filter = "kubernetes.io/hostname"
		}
		keep = func(ep discoveryv1.Endpoint, _ discoveryv1.AddressType) bool { return inTier(filter, ep) }
		if tierHas(filter, "", anyEndpoint) {
			matched = filter
		}
	case mode == topologyapi.TopologyModeAnyMatch:
		// Issue 13: a node keeps its matched endpoints only when they number
		// at least the minimum of the keys that matched, else it gets the
		// "*" set if the Service lists "*" (last), else its matched
		// endpoints. Counted as min-ready counts, ready endpoints, and per
		// address family, as ordered mode chooses; a key matched when the
		// node's tier of it holds an endpoint of the family. No key
		// matched: no matched endpoint, fewer than any minimum.
		labelled := keys
		wild := len(keys) > 0 && keys[len(keys)-1] == topology.KeyAny
		if wild {
			labelled = keys[:len(keys)-1]
		}
		matches := func(ep discoveryv1.Endpoint) bool {
			return slices.ContainsFunc(labelled, func(key string) bool { return sameValue(key, ep) })
		}
		fallback := map[discoveryv1.AddressType]bool{}
		for _, slice := range source {
			family := slice.AddressType
			// A family without endpoints has no "*" set to fall back on.
			if _, done := fallback[family]; done || !wild || !tierHas(topology.KeyAny, family, anyEndpoint) {
				continue
			}
			least := -1
			for _, key := range labelled {
				if tierHolds(topology.KeyAny, family, func(ep discoveryv1.Endpoint) bool { return sameValue(key, ep) }) > 0 && (least < 0 || r.minimum(key) < least) {
					least = r.minimum(key)
				}
			}
			ready := tierHolds(topology.KeyAny, family, func(ep discoveryv1.Endpoint) bool { return matches(ep) && isReady(ep) })
			fallback[family] = least < 0 || ready < least
			if fallback[family] {
				matched = topology.KeyAny
			}
		}
		keep = func(ep discoveryv1.Endpoint, family discoveryv1.AddressType) bool {
			return fallback[family] || matches(ep)
		}
		for _, key := range labelled {
			if matched != "" {
				break
			}
			// Every endpoint, as the node's label matches: the hostname is a
			// label here, not the node itself.
			if tierHas(topology.KeyAny, "", func(ep discoveryv1.Endpoint) bool { return sameValue(key, ep) }) {
				matched = key
			}
		}
	case mode == topologyapi.TopologyModeOrdered:
		// Each address family chooses its own tier: the first with the ready
		// endpoints min-ready asks, else the first with one, else the first
		// with any; matchedKey shows the widest choice.
		chosen := map[discoveryv1.AddressType]int{}
		widest := -1
		for _, slice := range source {
			family := slice.AddressType
			if _, done := chosen[family]; done {
				continue
			}
			k := slices.IndexFunc(keys, func(key string) bool { return tierHolds(key, family, isReady) >= r.minimum(key) })
			if k < 0 {
				k = firstKey(family, isReady)
			}
			if k < 0 {
				k = firstKey(family, anyEndpoint)
			}
			chosen[family] = k
			widest = max(widest, k)
		}
		if widest >= 0 {
			matched = keys[widest]
		}
		keep = func(ep discoveryv1.Endpoint, family discoveryv1.AddressType) bool {
			return chosen[family] >= 0 && inTier(keys[chosen[family]], ep)
		}
	}

	view := &topology.View{Labels: svc.Labels, Topology: topologyapi.TopologyInfo{Mode: mode, Keys: keys, MatchedKey: matched, Rule: r.name}}
	for _, slice := range source {
		out := topologyapi.NodeEndpointSlice{Name: slice.Name, Labels: slice.Labels, AddressType: slice.AddressType, Ports: slice.Ports}
		for _, ep := range slice.Endpoints {
			if keep(ep, slice.AddressType) {
				// Pruned endpoints lose their hints; unpruned ones keep them.
				if mode != topologyapi.TopologyModeNone {
					ep.Hints = nil
				}
				out.Endpoints = append(out.Endpoints, ep)
			}
		}
		view.Slices = append(view.Slices, out)
	}
	return view
}

// SliceKey names one node's view of one source EndpointSlice: one
// NodeEndpoints object.
type SliceKey struct {
	Node  string
	Slice types.NamespacedName
}

// AllSliceViews returns every NodeEndpoints there is: for each view, each
// slice the node routes to at least one endpoint of.
func (o *Oracle) AllSliceViews() map[SliceKey]*topology.SliceView {
	out := map[SliceKey]*topology.SliceView{}
	for key, view := range o.AllViews() {
		for _, slice := range view.Slices {
			if len(slice.Endpoints) == 0 {
				continue
			}
			out[SliceKey{Node: key.Node, Slice: types.NamespacedName{Namespace: key.Service.Namespace, Name: slice.Name}}] = &topology.SliceView{
				Service: key.Service, Labels: view.Labels, Topology: view.Topology, Slice: slice,
			}
		}
	}
	return out
}
