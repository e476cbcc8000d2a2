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

package viewstore

import (
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

var resource = topologyapi.Resource("nodeendpoints")

// Get returns the view named <node>.<service> in a namespace.
func (s *Store) Get(namespace, name string) (*topologyapi.NodeEndpoints, error) {
	node, service, err := topology.ParseName(name)
	if err != nil {
		return nil, apierrors.NewNotFound(resource, name)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stream == nil {
		return nil, errNotLoaded
	}
	key := topology.ViewKey{Node: node, Service: types.NamespacedName{Namespace: namespace, Name: service}}
	view, ok := s.engine.View(key.Node, key.Service)
	if !ok {
		return nil, apierrors.NewNotFound(resource, name)
	}
	return s.object(key, view, s.viewRV(key)), nil
}

var errNotLoaded = apierrors.NewServiceUnavailable("the node views are not loaded yet: gridview-apiserver is still reading Nodes, Services and EndpointSlices")

// forEach visits the views the filter selects in the order lists and
// continue tokens use: by namespace, node, then Service, starting after
// position (nil: from the start). visit returns false to stop.
func (s *Store) forEach(f Filter, after *position, visit func(topology.ViewKey) bool) {
	nodes, services := f.candidates(s.engine.Nodes, s.engine.Services(f.Namespace))
	for len(services) > 0 {
		namespace := services[0].Namespace
		end := slices.IndexFunc(services, func(svc types.NamespacedName) bool { return svc.Namespace != namespace })
		if end < 0 {
			end = len(services)
		}
		inNamespace := services[:end]
		services = services[end:]
		if after != nil && namespace < after.Namespace {
			continue
		}
		for _, node := range nodes {
			if _, known := s.nodeCreated[node]; !known {
				continue
			}
			if after != nil && namespace == after.Namespace && node < after.Node {
				continue
			}
			for _, svc := range inNamespace {
				key := topology.ViewKey{Node: node, Service: svc}
				if after != nil && !after.before(key) {
					continue
				}
				if !f.matches(key, s.services[svc].labels) {
					continue
				}
				if !visit(key) {
					return
				}
			}
		}
	}
}
