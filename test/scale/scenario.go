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

// Package scale is the `make scale` harness of issue 12: it writes an edge
// fleet (edge-10k, or edge-1k inside `make test-all`) into a local control
// plane at full speed while node watchers follow gridview through the
// aggregator, and measures what the fleet would feel: time until every
// watched node's views are current, gridview-apiserver's memory and CPU,
// delivery of each kind of change, a resume after many changes, a restart
// and one node's wrapper. Expected views come from the scenario itself
// (Model), never from gridview.
package scale

import (
	"fmt"
	"math/rand/v2"
)

// Scale sizes a scenario.
type Scale struct {
	Name     string
	Nodes    int
	UnitSize int // nodes per unit
	Zones    int // units are spread evenly over zones
	Services int // 20-endpoint Services; the big one comes on top
	// Endpoints per Service, in 1 to 3 slices.
	Endpoints int
	// BigSliceSize splits the big Service, one endpoint on each node, into
	// Nodes/BigSliceSize slices.
	BigSliceSize int
}

// Scales are the scenarios of issue 12.
var Scales = map[string]Scale{
	"edge-10k": {Name: "edge-10k", Nodes: 10000, UnitSize: 10, Zones: 10, Services: 5000, Endpoints: 20, BigSliceSize: 100},
	"edge-1k":  {Name: "edge-1k", Nodes: 1000, UnitSize: 10, Zones: 10, Services: 500, Endpoints: 20, BigSliceSize: 100},
	// tiny is for unit tests of the harness itself.
	"tiny": {Name: "tiny", Nodes: 60, UnitSize: 3, Zones: 4, Services: 24, Endpoints: 6, BigSliceSize: 20},
}

// Units is how many units the scenario has.
func (s Scale) Units() int { return s.Nodes / s.UnitSize }

// ZoneOf is the zone of a unit: zones hold consecutive units.
func (s Scale) ZoneOf(unit int) int { return unit / (s.Units() / s.Zones) }

// StatusUpdates is how many Nodes a status-update change patches: a tenth,
// what their kubelets send in 30 s at one update every 5 minutes.
func (s Scale) StatusUpdates() int { return s.Nodes / 10 }

// Mode is a Service's topology as the scenario writes it.
type Mode int

const (
	ModeNone Mode = iota
	ModeAnyMatch
	ModeOrdered
)

// String is the name NodeEndpoints' topology.mode carries.
func (m Mode) String() string {
	switch m {
	case ModeAnyMatch:
		return "AnyMatch"
	case ModeOrdered:
		return "Ordered"
	}
	return "None"
}

// Node is a scenario node; its zone is its unit's.
type Node struct {
	Name string
	Unit int
}

// Endpoint is one ready or unready address on a node.
type Endpoint struct {
	Addr  string
	Node  int
	Ready bool
	// Pod is the Pod behind the address, with Model.Workloads.
	Pod string

	addrHash uint64 // fnv64a(Addr), computed once
}

// Slice is one EndpointSlice of a Service; ID numbers slices in the model.
type Slice struct {
	Name      string
	ID        int32
	Endpoints []Endpoint
}

// Service is one Service with its slices.
type Service struct {
	Name   string
	Mode   Mode
	Big    bool
	Slices []*Slice
}

// Model is the whole scenario: what was (or is to be) written, and the
// state every change moves it to.
type Model struct {
	Scale
	Namespace string
	Nodes     []Node
	Services  []*Service
	// SliceByID indexes every slice; SliceByName maps a slice's name to its
	// ID. With Workloads an ID may be nil: a slice the EndpointSlice
	// controller wrote and removed again.
	SliceByID   []*Slice
	SliceByName map[string]int32
	// Workloads: the Services select the Pods of a Deployment each, the big
	// one a DaemonSet's, and the slices are read back from the EndpointSlice
	// controller's (UseWorkloads).
	Workloads bool
}

// NodeName names node i as issue 12 does: edge-00000, edge-00001, ...
func NodeName(i int) string { return fmt.Sprintf("edge-%05d", i) }

// Generate builds the scenario from seed: the same seed, the same fleet.
// Services alternate any-match, any-match, ordered and none, so half are
// any-match and a quarter each ordered and unannotated; each has its
// endpoints, ready, on random distinct nodes in 1 to 3 slices. The big
// Service, unannotated, has one endpoint on every node.
func Generate(sc Scale, seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	m := &Model{Scale: sc, Namespace: "scale", SliceByName: map[string]int32{}}
	for i := range sc.Nodes {
		m.Nodes = append(m.Nodes, Node{Name: NodeName(i), Unit: i / sc.UnitSize})
	}
	addr := 0
	nextAddr := func() string {
		addr++
		return fmt.Sprintf("10.%d.%d.%d", 100+addr>>16, addr>>8&0xff, addr&0xff)
	}
	for i := range sc.Services {
		svc := &Service{Name: fmt.Sprintf("svc-%05d", i), Mode: [4]Mode{ModeAnyMatch, ModeAnyMatch, ModeOrdered, ModeNone}[i%4]}
		nodes := distinct(rng, sc.Endpoints, sc.Nodes)
		count := 1 + rng.IntN(3)
		for k := range count {
			sl := m.addSlice(svc, fmt.Sprintf("%s-%d", svc.Name, k))
			// Slice k takes every count-th endpoint: sizes differ by one at most.
			for e := k; e < len(nodes); e += count {
				sl.Endpoints = append(sl.Endpoints, newEndpoint(nextAddr(), nodes[e]))
			}
		}
		m.Services = append(m.Services, svc)
	}
	big := &Service{Name: "daemon", Mode: ModeNone, Big: true}
	for k := 0; k*sc.BigSliceSize < sc.Nodes; k++ {
		sl := m.addSlice(big, fmt.Sprintf("daemon-%03d", k))
		for n := k * sc.BigSliceSize; n < min((k+1)*sc.BigSliceSize, sc.Nodes); n++ {
			sl.Endpoints = append(sl.Endpoints, newEndpoint(nextAddr(), n))
		}
	}
	m.Services = append(m.Services, big)
	return m
}

// distinct draws n distinct numbers below limit.
func distinct(rng *rand.Rand, n, limit int) []int {
	out := make([]int, 0, n)
	seen := make(map[int]bool, n)
	for len(out) < n {
		if i := rng.IntN(limit); !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

func newEndpoint(addr string, node int) Endpoint {
	return Endpoint{Addr: addr, Node: node, Ready: true, addrHash: fnv64a(addr)}
}

func (m *Model) addSlice(svc *Service, name string) *Slice {
	sl := &Slice{Name: name, ID: int32(len(m.SliceByID))}
	m.SliceByID = append(m.SliceByID, sl)
	m.SliceByName[name] = sl.ID
	svc.Slices = append(svc.Slices, sl)
	return sl
}

// Endpoints counts every endpoint of the scenario.
func (m *Model) Endpoints() int {
	n := 0
	for _, svc := range m.Services {
		for _, sl := range svc.Slices {
			n += len(sl.Endpoints)
		}
	}
	return n
}

// SliceCount counts every slice of the scenario.
func (m *Model) SliceCount() int {
	n := 0
	for _, svc := range m.Services {
		n += len(svc.Slices)
	}
	return n
}

// ServicesOf returns the Services of a mode; big ones only when big is set.
func (m *Model) ServicesOf(mode Mode, big bool) []*Service {
	var out []*Service
	for _, svc := range m.Services {
		if svc.Mode == mode && svc.Big == big {
			out = append(out, svc)
		}
	}
	return out
}

// ServicesOnNode returns the Services with an endpoint on node.
func (m *Model) ServicesOnNode(node int) []*Service {
	var out []*Service
	for _, svc := range m.Services {
		if svc.hasEndpointOn(node) {
			out = append(out, svc)
		}
	}
	return out
}

func (svc *Service) hasEndpointOn(node int) bool {
	for _, sl := range svc.Slices {
		for _, ep := range sl.Endpoints {
			if ep.Node == node {
				return true
			}
		}
	}
	return false
}
