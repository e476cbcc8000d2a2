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
	"maps"
	"sync"
)

// The few fields of NodeEndpoints a watcher decodes; encoding/json skips
// the rest. Watchers share the machine with the control plane they measure,
// so they decode as little as they can.

type wireEndpoint struct {
	Addresses  []string `json:"addresses"`
	Conditions struct {
		Ready *bool `json:"ready"`
	} `json:"conditions"`
}

type wireSlice struct {
	Name      string         `json:"name"`
	Endpoints []wireEndpoint `json:"endpoints"`
}

type wireObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Namespace       string `json:"namespace"`
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Topology struct {
		Mode string `json:"mode"`
	} `json:"topology"`
	Slice *wireSlice `json:"slice"`
	// Slices is the shape before issue 12 (one object per node and
	// Service), read so the harness also measures a server that has not
	// been rebuilt yet. Remove once no such server is measured.
	Slices []wireSlice `json:"slices"`
	// Code and Reason are a Status's, in an ERROR event.
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type wireEvent struct {
	Type   string     `json:"type"`
	Object wireObject `json:"object"`
}

type wireList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []wireObject `json:"items"`
}

// digest is the slice's digest as UnitView computes it; ok is false when the
// node routes to none of its endpoints. An endpoint without a ready
// condition counts as ready, as kube-proxy takes it.
func (s *wireSlice) digest(mode string) (d uint64, ok bool) {
	var sum uint64
	for _, ep := range s.Endpoints {
		if len(ep.Addresses) == 0 {
			continue
		}
		ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
		sum += endpointHash(fnv64a(ep.Addresses[0]), ready)
		ok = true
	}
	return sliceDigest(mode, sum), ok
}

// names numbers slice names as the model does, and names the model does not
// know (which only a wrong server sends) after them.
type names struct {
	known  map[string]int32 // the model's, read-only
	slices []*Slice         // the model's, by ID

	mu      sync.Mutex
	unknown map[string]int32
	byID    []string // unknown names, from len(known)
}

// newNames knows the model's slices as they are now. With Workloads the
// model has none yet: every name is numbered as the watchers first see it,
// and the model takes the same numbers when it reads the slices back.
func newNames(m *Model) *names {
	// A copy: SetSlices changes the model's map while watchers look names up.
	return &names{known: maps.Clone(m.SliceByName), slices: m.SliceByID, unknown: map[string]int32{}}
}

// name is the name of a slice ID.
func (n *names) name(id int32) string {
	if int(id) < len(n.slices) {
		return n.slices[id].Name
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byID[int(id)-len(n.slices)]
}

func (n *names) id(name string) int32 {
	if id, ok := n.known[name]; ok {
		return id
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	id, ok := n.unknown[name]
	if !ok {
		id = int32(len(n.known) + len(n.byID))
		n.unknown[name] = id
		n.byID = append(n.byID, name)
	}
	return id
}
