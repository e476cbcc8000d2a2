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
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
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
	http := []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}}
	tests := []struct {
		name   string
		slices []topology.NodeEndpointSlice
		want   string
	}{
		{name: "no slices", want: "<none>"},
		{name: "empty slice", slices: []topology.NodeEndpointSlice{{Ports: http}}, want: "<none>"},
		{name: "one endpoint", slices: []topology.NodeEndpointSlice{{Ports: http, Endpoints: endpoints("10.1.0.5")}}, want: "10.1.0.5:8080"},
		{name: "IPv6", slices: []topology.NodeEndpointSlice{{Ports: http, Endpoints: endpoints("fd00::5")}}, want: "[fd00::5]:8080"},
		{name: "no ports", slices: []topology.NodeEndpointSlice{{Endpoints: endpoints("10.1.0.5")}}, want: "10.1.0.5"},
		{name: "port without number", slices: []topology.NodeEndpointSlice{{Ports: []discoveryv1.EndpointPort{{}}, Endpoints: endpoints("10.1.0.5")}}, want: "10.1.0.5"},
		{
			name: "more than three across slices",
			slices: []topology.NodeEndpointSlice{
				{Ports: http, Endpoints: endpoints("10.1.0.1", "10.1.0.2")},
				{Ports: http, Endpoints: endpoints("10.1.0.3", "10.1.0.4", "10.1.0.5")},
			},
			want: "10.1.0.1:8080,10.1.0.2:8080,10.1.0.3:8080 + 2 more...",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatEndpoints(tc.slices); got != tc.want {
				t.Errorf("formatEndpoints = %q, want %q", got, tc.want)
			}
		})
	}
}
