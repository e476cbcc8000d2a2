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
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

// oracleOf loads the model's current state into the brute-force oracle, as
// kube-apiserver would hold it after the harness wrote it.
func oracleOf(m *Model) *topologytest.Oracle {
	o := topologytest.NewOracle()
	for i, node := range m.Nodes {
		o.Nodes[node.Name] = m.NodeLabels(i)
	}
	for _, svc := range m.Services {
		o.Services[types.NamespacedName{Namespace: m.Namespace, Name: svc.Name}] = m.ServiceObject(svc)
		for _, sl := range svc.Slices {
			o.Slices[types.NamespacedName{Namespace: m.Namespace, Name: sl.Name}] = m.SliceObject(svc, sl)
		}
	}
	return o
}

// oracleObjects returns what the oracle says node sees of svc, as the
// NodeEndpoints objects gridview would serve: one per slice with at least
// one endpoint.
func oracleObjects(o *topologytest.Oracle, node string, svc *corev1.Service) []*v1alpha1.NodeEndpoints {
	view := o.View(node, svc)
	var out []*v1alpha1.NodeEndpoints
	for _, s := range view.Slices {
		if len(s.Endpoints) == 0 {
			continue
		}
		obj := v1alpha1.NodeEndpoints{
			NodeName: node, ServiceName: svc.Name,
			Topology: v1alpha1.TopologyInfo{Mode: v1alpha1.TopologyMode(view.Topology.Mode), Keys: view.Topology.Keys, MatchedKey: view.Topology.MatchedKey},
			Slice:    v1alpha1.NodeEndpointSlice{Name: s.Name, Labels: s.Labels, AddressType: s.AddressType, Ports: s.Ports, Endpoints: s.Endpoints},
		}
		obj.Name, obj.Namespace = node+".."+s.Name, svc.Namespace
		obj.APIVersion, obj.Kind = v1alpha1.SchemeGroupVersion.String(), "NodeEndpoints"
		out = append(out, &obj)
	}
	return out
}

// decoders read an object as a watcher does, in each encoding.
var decoders = map[string]func(*testing.T, *v1alpha1.NodeEndpoints) wireObject{
	EncodingJSON: func(t *testing.T, obj *v1alpha1.NodeEndpoints) wireObject {
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var out wireObject
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		return out
	},
	EncodingProtobuf: func(t *testing.T, obj *v1alpha1.NodeEndpoints) wireObject {
		data, err := runtime.Encode(protobufInfo.Serializer, obj)
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := runtime.Decode(protobufInfo.Serializer, data)
		if err != nil {
			t.Fatal(err)
		}
		var out wireObject
		fromProto(&out, decoded.(*v1alpha1.NodeEndpoints))
		return out
	},
}

// churn applies every kind of change the harness makes, and makes some
// ordered Services' tiers fall back: all endpoints unready in a unit, in a
// zone, everywhere.
func churn(m *Model, rng *rand.Rand) {
	for range 40 {
		m.FlipEndpoint(m.Services[rng.IntN(len(m.Services))], rng)
	}
	for range 5 {
		m.MoveNode(rng.IntN(len(m.Nodes)), rng)
	}
	m.SetMode(m.Services[0], ModeOrdered)
	m.SetMode(m.Services[2], ModeNone)
	m.SetMode(m.Services[3], ModeAnyMatch)
	ordered := m.ServicesOf(ModeOrdered, false)
	for i, svc := range ordered[:3] {
		for _, sl := range svc.Slices {
			for e := range sl.Endpoints {
				if i == 0 || e%2 == 0 {
					sl.Endpoints[e].Ready = false
				}
			}
		}
	}
}

// TestModelAgreesWithOracle checks the harness's expectation, and the
// watcher's reading of NodeEndpoints, against pkg/topology/topologytest:
// for every node, the state a watcher builds from the oracle's objects
// must equal the model's, entry by entry and in total.
func TestModelAgreesWithOracle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		churn    bool
		readBack bool // the slices read back from their objects, as with Workloads
		encoding string
	}{
		{name: "as generated, json", encoding: EncodingJSON},
		{name: "after churn, json", churn: true, encoding: EncodingJSON},
		{name: "after churn, protobuf", churn: true, encoding: EncodingProtobuf},
		{name: "after churn, read back, protobuf", churn: true, readBack: true, encoding: EncodingProtobuf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Generate(Scales["tiny"], 7)
			if tc.churn {
				churn(m, rand.New(rand.NewPCG(7, 7)))
			}
			c := &client{names: newNames(m), namespace: m.Namespace}
			if tc.readBack {
				c.names = readBackSlices(t, m)
			}
			o := oracleOf(m)
			units := make([]int, m.Units())
			for u := range units {
				units[u] = u
			}
			totals := m.UnitTotals(units)
			for i, node := range m.Nodes {
				w := newWatcher(c, node.Name, i)
				for _, svc := range m.Services {
					for _, obj := range oracleObjects(o, node.Name, m.ServiceObject(svc)) {
						wire := decoders[tc.encoding](t, obj)
						if !c.ours(&wire) {
							t.Fatalf("%s/%s is not taken for the scenario's", wire.Metadata.Namespace, wire.Metadata.Name)
						}
						w.upsert(&wire)
					}
				}
				want := m.UnitViews([]int{node.Unit}, m.Services)[node.Unit]
				if len(want) == 0 {
					t.Errorf("node %s sees nothing: the scenario is too thin to test", node.Name)
				}
				if diff := diffViews(want, w.entries); diff != nil {
					t.Errorf("node %s: %d entries differ from the oracle's: %v", node.Name, len(diff), diff)
				}
				if w.total != totals[node.Unit] {
					t.Errorf("node %s: total %x, model %x", node.Name, w.total, totals[node.Unit])
				}
			}
		})
	}
}

// readBackSlices turns m into a model of Workloads whose slices are read
// back from the objects of its own, the last Service first so that the IDs
// differ from Generate's, and returns the names that numbered them.
func readBackSlices(t *testing.T, m *Model) *names {
	t.Helper()
	objects := map[*Service][]discoveryv1.EndpointSlice{}
	for _, svc := range m.Services {
		for _, sl := range svc.Slices {
			objects[svc] = append(objects[svc], *m.SliceObject(svc, sl))
		}
	}
	m.UseWorkloads()
	n := newNames(m)
	for _, svc := range slices.Backward(m.Services) {
		read, err := m.SlicesFromObjects(objects[svc], n.id)
		if err != nil {
			t.Fatal(err)
		}
		m.SetSlices(svc, read)
	}
	return n
}

// TestWatcherEvents checks that deletes and updates keep the total equal to
// the sum of the entries, in both shapes.
func TestWatcherEvents(t *testing.T) {
	m := Generate(Scales["tiny"], 1)
	c := &client{names: newNames(m)}
	ready := true
	ep := wireEndpoint{Addresses: []string{"10.0.0.1"}}
	ep.Conditions.Ready = &ready
	newObj := func(name, slice string) wireObject {
		var obj wireObject
		obj.Metadata.Name = name
		obj.Topology.Mode = "None"
		obj.Slice = &wireSlice{Name: slice, Endpoints: []wireEndpoint{ep}}
		return obj
	}
	oldObj := func(name string, slices ...string) wireObject {
		var obj wireObject
		obj.Metadata.Name = name
		obj.Topology.Mode = "None"
		for _, s := range slices {
			obj.Slices = append(obj.Slices, wireSlice{Name: s, Endpoints: []wireEndpoint{ep}})
		}
		return obj
	}
	for _, tc := range []struct {
		name   string
		events []wireEvent
		want   int
	}{
		{name: "added then deleted", events: []wireEvent{
			{Type: "ADDED", Object: newObj("n..a", "a")}, {Type: "DELETED", Object: newObj("n..a", "a")}}, want: 0},
		{name: "modified twice", events: []wireEvent{
			{Type: "ADDED", Object: newObj("n..a", "a")}, {Type: "MODIFIED", Object: newObj("n..a", "a")},
			{Type: "ADDED", Object: newObj("n..b", "b")}}, want: 2},
		{name: "old shape", events: []wireEvent{
			{Type: "ADDED", Object: oldObj("n.s", "a", "b")}, {Type: "MODIFIED", Object: oldObj("n.s", "b")}}, want: 1},
		{name: "old shape deleted", events: []wireEvent{
			{Type: "ADDED", Object: oldObj("n.s", "a", "b")}, {Type: "DELETED", Object: oldObj("n.s", "a", "b")}}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatcher(c, "n", 0)
			for i := range tc.events {
				if err := w.apply(&tc.events[i]); err != nil {
					t.Fatal(err)
				}
			}
			if len(w.entries) != tc.want {
				t.Errorf("%d entries, want %d", len(w.entries), tc.want)
			}
			var sum uint64
			for id, d := range w.entries {
				sum += entryHash(id, d)
			}
			if sum != w.total {
				t.Errorf("total %x, sum of entries %x", w.total, sum)
			}
		})
	}
}

// TestGenerateIsReproducible pins the scenario to its seed and its shape
// to issue 12's.
func TestGenerateIsReproducible(t *testing.T) {
	a, b := Generate(Scales["edge-1k"], 3), Generate(Scales["edge-1k"], 3)
	if got, want := a.SliceObject(a.Services[42], a.Services[42].Slices[0]), b.SliceObject(b.Services[42], b.Services[42].Slices[0]); got.Endpoints[0].Addresses[0] != want.Endpoints[0].Addresses[0] || *got.Endpoints[0].NodeName != *want.Endpoints[0].NodeName {
		t.Errorf("same seed, different scenario")
	}
	modes := map[Mode]int{}
	for _, svc := range a.Services {
		if svc.Big {
			if len(svc.Slices) != 10 || a.SliceObject(svc, svc.Slices[0]).AddressType != discoveryv1.AddressTypeIPv4 {
				t.Errorf("big Service: %d slices, want 10", len(svc.Slices))
			}
			continue
		}
		modes[svc.Mode]++
		n := 0
		for _, sl := range svc.Slices {
			n += len(sl.Endpoints)
		}
		if n != 20 || len(svc.Slices) < 1 || len(svc.Slices) > 3 {
			t.Errorf("%s: %d endpoints in %d slices", svc.Name, n, len(svc.Slices))
		}
	}
	if modes[ModeAnyMatch] != 250 || modes[ModeOrdered] != 125 || modes[ModeNone] != 125 {
		t.Errorf("modes %v, want 250 any-match, 125 ordered, 125 none", modes)
	}
	if got := a.Endpoints(); got != 500*20+1000 {
		t.Errorf("%d endpoints, want %d", got, 500*20+1000)
	}
}

// BenchmarkUnitTotalsEdge10k is what each wait for current views costs the
// harness at edge-10k with 2,000 watchers (every unit watched).
func BenchmarkUnitTotalsEdge10k(b *testing.B) {
	m := Generate(Scales["edge-10k"], 1)
	units := make([]int, m.Units())
	for u := range units {
		units[u] = u
	}
	for b.Loop() {
		m.UnitTotals(units)
	}
}
