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
)

// SetEndpointSlice adds or updates an EndpointSlice of a Service.
func (e *Engine) SetEndpointSlice(slice *discoveryv1.EndpointSlice) []SliceChange {
	return e.change(e.sliceScope(slice), func() { e.setEndpointSlice(slice) })
}

func (e *Engine) setEndpointSlice(slice *discoveryv1.EndpointSlice) {
	sliceKey := types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}
	e.removeSlice(sliceKey)
	svcName, owned := slice.Labels[discoveryv1.LabelServiceName]
	if !owned {
		return
	}
	svcKey := types.NamespacedName{Namespace: slice.Namespace, Name: svcName}
	if e.slices[svcKey] == nil {
		e.slices[svcKey] = map[string]*endpointSlice{}
	}
	e.slices[svcKey][slice.Name] = &endpointSlice{
		name: slice.Name, labels: maps.Clone(slice.Labels), addressType: slice.AddressType,
		ports: slices.Clone(slice.Ports), endpoints: slices.Clone(slice.Endpoints),
	}
	e.sliceService[sliceKey] = svcKey
	e.reindexService(svcKey)
}

// DeleteEndpointSlice removes an EndpointSlice.
func (e *Engine) DeleteEndpointSlice(key types.NamespacedName) []SliceChange {
	s := scope{}
	if svc, ok := e.sliceService[key]; ok {
		old := e.slices[svc][key.Name]
		e.addEndpointScope(s, svc, old.addressType, old.endpoints)
	}
	return e.change(s, func() { e.removeSlice(key) })
}

func (e *Engine) removeSlice(key types.NamespacedName) {
	svcKey, ok := e.sliceService[key]
	if !ok {
		return
	}
	delete(e.sliceService, key)
	delete(e.slices[svcKey], key.Name)
	if len(e.slices[svcKey]) == 0 {
		delete(e.slices, svcKey)
	}
	e.reindexService(svcKey)
}

// reindexService records which nodes a Service has endpoints on, and
// recounts its tiers.
func (e *Engine) reindexService(svc types.NamespacedName) {
	for node := range e.serviceNodes[svc] {
		if e.nodeServices[node].Delete(svc).Len() == 0 {
			delete(e.nodeServices, node)
		}
	}
	nodes := sets.New[string]()
	for _, slice := range e.slices[svc] {
		for _, ep := range slice.endpoints {
			if ep.NodeName != nil {
				nodes.Insert(*ep.NodeName)
			}
		}
	}
	if nodes.Len() == 0 {
		delete(e.serviceNodes, svc)
	} else {
		e.serviceNodes[svc] = nodes
	}
	for node := range nodes {
		if e.nodeServices[node] == nil {
			e.nodeServices[node] = sets.New[types.NamespacedName]()
		}
		e.nodeServices[node].Insert(svc)
	}
	e.countTiers(svc)
}

// SliceService returns the Service an EndpointSlice belongs to, if known.
func (e *Engine) SliceService(slice types.NamespacedName) (types.NamespacedName, bool) {
	svc, ok := e.sliceService[slice]
	return svc, ok
}

func (e *Engine) sortedSlices(svc types.NamespacedName) []*endpointSlice {
	byName := e.slices[svc]
	out := make([]*endpointSlice, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out
}
