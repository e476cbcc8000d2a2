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

package nodeendpoints

import (
	"context"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology"
)

func TestFormatTopology(t *testing.T) {
	tests := []struct {
		name string
		in   topology.TopologyInfo
		want string
	}{
		{name: "unset", in: topology.TopologyInfo{}, want: "None"},
		{name: "none", in: topology.TopologyInfo{Mode: topology.TopologyModeNone}, want: "None"},
		{name: "any-match", in: topology.TopologyInfo{Mode: topology.TopologyModeAnyMatch, MatchedKey: "superedge.io/nodeunit"}, want: "AnyMatch(superedge.io/nodeunit)"},
		{name: "ordered fell back to every endpoint", in: topology.TopologyInfo{Mode: topology.TopologyModeOrdered, MatchedKey: "*"}, want: "Ordered(*)"},
		{name: "nothing matched", in: topology.TopologyInfo{Mode: topology.TopologyModeAnyMatch}, want: "AnyMatch(<none>)"},
		{name: "gridview keys are what ordered means", in: topology.TopologyInfo{Mode: topology.TopologyModeOrdered, MatchedKey: "superedge.io/nodeunit", Rule: "Gridview"},
			want: "Ordered(superedge.io/nodeunit)"},
		{name: "SuperEdge keys are what any-match means", in: topology.TopologyInfo{Mode: topology.TopologyModeAnyMatch, MatchedKey: "superedge.io/nodeunit", Rule: "SuperEdge"},
			want: "AnyMatch(superedge.io/nodeunit)"},
		{name: "namespace default", in: topology.TopologyInfo{Mode: topology.TopologyModeOrdered, MatchedKey: "superedge.io/nodeunit", Rule: "Namespace"},
			want: "Ordered(superedge.io/nodeunit) Namespace"},
		{name: "trafficDistribution", in: topology.TopologyInfo{Mode: topology.TopologyModeOrdered, MatchedKey: "topology.kubernetes.io/zone", Rule: "Native(PreferSameZone)"},
			want: "Ordered(topology.kubernetes.io/zone) Native(PreferSameZone)"},
		{name: "OpenYurt", in: topology.TopologyInfo{Mode: topology.TopologyModeOrdered, MatchedKey: "apps.openyurt.io/nodepool", Rule: "OpenYurt"},
			want: "Ordered(apps.openyurt.io/nodepool) OpenYurt"},
		{name: "hints kept for kube-proxy", in: topology.TopologyInfo{Mode: topology.TopologyModeNone, Rule: "Hints"}, want: "Hints"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatTopology(tc.in); got != tc.want {
				t.Errorf("formatTopology = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFormatEndpoints(t *testing.T) {
	endpoints := func(addrs ...string) []discoveryv1.Endpoint {
		var eps []discoveryv1.Endpoint
		for _, a := range addrs {
			eps = append(eps, discoveryv1.Endpoint{Addresses: []string{a}})
		}
		return eps
	}
	withConditions := func(addr string, ready, terminating *bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready, Terminating: terminating}}
	}
	http := []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}}
	tests := []struct {
		name         string
		slice        topology.NodeEndpointSlice
		want         string
		wantNotReady int
	}{
		{name: "empty slice", slice: topology.NodeEndpointSlice{Ports: http}, want: "<none>"},
		{name: "one endpoint", slice: topology.NodeEndpointSlice{Ports: http, Endpoints: endpoints("10.1.0.5")}, want: "10.1.0.5:8080"},
		{name: "IPv6", slice: topology.NodeEndpointSlice{Ports: http, Endpoints: endpoints("fd00::5")}, want: "[fd00::5]:8080"},
		{name: "no ports", slice: topology.NodeEndpointSlice{Endpoints: endpoints("10.1.0.5")}, want: "10.1.0.5"},
		{name: "port without number", slice: topology.NodeEndpointSlice{Ports: []discoveryv1.EndpointPort{{}}, Endpoints: endpoints("10.1.0.5")}, want: "10.1.0.5"},
		{
			name: "ready only: unset ready is ready, not ready and terminating are not",
			slice: topology.NodeEndpointSlice{Ports: http, Endpoints: []discoveryv1.Endpoint{
				withConditions("10.1.0.1", ptr.To(false), nil),
				withConditions("10.1.0.2", nil, nil),
				withConditions("10.1.0.3", ptr.To(false), ptr.To(true)),
				withConditions("10.1.0.4", ptr.To(true), nil),
			}},
			want: "10.1.0.2:8080,10.1.0.4:8080", wantNotReady: 2,
		},
		{
			// publishNotReadyAddresses: the controllers mark terminating
			// endpoints ready, and kube-proxy and kubectl take them as such.
			name:  "terminating but marked ready",
			slice: topology.NodeEndpointSlice{Ports: http, Endpoints: []discoveryv1.Endpoint{withConditions("10.1.0.1", ptr.To(true), ptr.To(true))}},
			want:  "10.1.0.1:8080",
		},
		{
			name:  "none ready",
			slice: topology.NodeEndpointSlice{Ports: http, Endpoints: []discoveryv1.Endpoint{withConditions("10.1.0.1", ptr.To(false), ptr.To(true))}},
			want:  "<none>", wantNotReady: 1,
		},
		{
			name:  "more than three counts ready ones only",
			slice: topology.NodeEndpointSlice{Ports: http, Endpoints: append(endpoints("10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"), withConditions("10.1.0.5", ptr.To(false), nil))},
			want:  "10.1.0.1:8080,10.1.0.2:8080,10.1.0.3:8080 + 1 more...", wantNotReady: 1,
		},
		{
			name:  "ports then addresses, as kubectl prints an Endpoints subset",
			slice: topology.NodeEndpointSlice{Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}, {Port: ptr.To[int32](443)}}, Endpoints: endpoints("10.1.0.1", "10.1.0.2")},
			want:  "10.1.0.1:80,10.1.0.2:80,10.1.0.1:443 + 1 more...",
		},
		{
			name:  "the first address of an endpoint, the one kube-proxy uses",
			slice: topology.NodeEndpointSlice{Ports: http, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1", "10.1.0.9"}}}},
			want:  "10.1.0.1:8080",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatEndpoints(&tc.slice); got != tc.want {
				t.Errorf("formatEndpoints = %q, want %q", got, tc.want)
			}
			if got := notReady(&tc.slice); got != tc.wantNotReady {
				t.Errorf("notReady = %d, want %d", got, tc.wantNotReady)
			}
		})
	}
}

// The not-ready count and the source slice are wide columns, after AGE, as
// kubectl's own wide columns are.
func TestTableColumns(t *testing.T) {
	ne := &topology.NodeEndpoints{
		ObjectMeta:  metav1.ObjectMeta{Name: "edge-1..echo-svc-x", Namespace: "demo", ResourceVersion: "7"},
		NodeName:    "edge-1",
		ServiceName: "echo-svc",
		Topology:    topology.TopologyInfo{Mode: topology.TopologyModeOrdered, MatchedKey: "unit"},
		Slice: topology.NodeEndpointSlice{
			Name:  "echo-svc-x",
			Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.1.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
				{Addresses: []string{"10.1.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false), Terminating: ptr.To(true)}},
			},
		},
	}
	got, err := tableConvertor.ConvertToTable(context.Background(), ne, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name     string
		priority int32
		cell     interface{}
	}{
		{name: "Name", cell: "edge-1..echo-svc-x"},
		{name: "Node", cell: "edge-1"},
		{name: "Service", cell: "echo-svc"},
		{name: "Topology", cell: "Ordered(unit)"},
		{name: "Endpoints", cell: "10.1.0.1:8080"},
		{name: "Age", cell: "<unknown>"},
		{name: "Not Ready", priority: 1, cell: 1},
		{name: "Slice", priority: 1, cell: "echo-svc-x"},
	}
	if len(got.ColumnDefinitions) != len(want) || len(got.Rows) != 1 || len(got.Rows[0].Cells) != len(want) {
		t.Fatalf("table: %d columns, rows %+v; want %d columns, one row", len(got.ColumnDefinitions), got.Rows, len(want))
	}
	for i, w := range want {
		column := got.ColumnDefinitions[i]
		if column.Name != w.name || column.Priority != w.priority || got.Rows[0].Cells[i] != w.cell {
			t.Errorf("column %d: %s (priority %d) = %v, want %s (priority %d) = %v", i, column.Name, column.Priority, got.Rows[0].Cells[i], w.name, w.priority, w.cell)
		}
	}
}
