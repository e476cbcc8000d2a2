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

package scale

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

// With Model.Workloads the scheduler places the Pods and the EndpointSlice
// controller groups them into slices, so the model's slices are read back
// from the controller's rather than chosen by Generate. The rules of what a
// node sees (expect.go) are the same either way.

// UseWorkloads makes the model's Services select the Pods of workloads and
// drops the slices Generate chose: SetSlices gives the model the slices the
// EndpointSlice controller wrote once it has.
func (m *Model) UseWorkloads() {
	m.Workloads = true
	m.SliceByID, m.SliceByName = nil, map[string]int32{}
	for _, svc := range m.Services {
		svc.Slices = nil
	}
}

// nodeIndex is the index of the model's node named name.
func (m *Model) nodeIndex(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "edge-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || i < 0 || i >= len(m.Nodes) || m.Nodes[i].Name != name {
		return 0, false
	}
	return i, true
}

// SlicesFromObjects builds one Service's slices from the EndpointSlices
// written for it, ordered by name: each endpoint's first address, its
// node, its readiness (unset is ready, as consumers and the watchers read
// it) and the Pod it stands for. id numbers a slice by its name, as the
// watchers number the views they receive (names.id), so that a slice read
// back again keeps its ID.
func (m *Model) SlicesFromObjects(objs []discoveryv1.EndpointSlice, id func(name string) int32) ([]*Slice, error) {
	sorted := make([]*discoveryv1.EndpointSlice, len(objs))
	for i := range objs {
		sorted[i] = &objs[i]
	}
	slices.SortFunc(sorted, func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(a.Name, b.Name) })
	out := make([]*Slice, 0, len(sorted))
	for _, obj := range sorted {
		sl := &Slice{Name: obj.Name, ID: id(obj.Name)}
		for _, ep := range obj.Endpoints {
			if len(ep.Addresses) == 0 {
				return nil, fmt.Errorf("EndpointSlice %s: an endpoint without an address", obj.Name)
			}
			nodeName := ptr.Deref(ep.NodeName, "")
			node, ok := m.nodeIndex(nodeName)
			if !ok {
				return nil, fmt.Errorf("EndpointSlice %s: endpoint %s on node %q, not one of the scenario's", obj.Name, ep.Addresses[0], nodeName)
			}
			e := newEndpoint(ep.Addresses[0], node)
			e.Ready = ptr.Deref(ep.Conditions.Ready, true)
			if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" {
				e.Pod = ep.TargetRef.Name
			}
			sl.Endpoints = append(sl.Endpoints, e)
		}
		out = append(out, sl)
	}
	return out, nil
}

// SetSlices replaces svc's slices with those read.
func (m *Model) SetSlices(svc *Service, read []*Slice) {
	for _, sl := range svc.Slices {
		m.SliceByID[sl.ID] = nil
		delete(m.SliceByName, sl.Name)
	}
	for _, sl := range read {
		if grow := int(sl.ID) + 1 - len(m.SliceByID); grow > 0 {
			m.SliceByID = append(m.SliceByID, make([]*Slice, grow)...)
		}
		m.SliceByID[sl.ID] = sl
		m.SliceByName[sl.Name] = sl.ID
	}
	svc.Slices = read
}

// sameSlices reports whether a and b are the same slices, by ID, each with
// the same endpoints in any order.
func sameSlices(a, b []*Slice) bool {
	if len(a) != len(b) {
		return false
	}
	byID := make(map[int32]*Slice, len(a))
	for _, sl := range a {
		byID[sl.ID] = sl
	}
	for _, sl := range b {
		other, ok := byID[sl.ID]
		if !ok || len(other.Endpoints) != len(sl.Endpoints) {
			return false
		}
		endpoints := make(map[Endpoint]bool, len(sl.Endpoints))
		for _, ep := range sl.Endpoints {
			endpoints[ep] = true
		}
		for _, ep := range other.Endpoints {
			if !endpoints[ep] {
				return false
			}
		}
	}
	return true
}
