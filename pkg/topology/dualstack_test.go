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

package topology_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

// dualStack loads the nodes of twoUnits, an ordered Service and its IPv4 and
// IPv6 slices into an engine and the oracle.
func dualStack(keys string, ipv4, ipv6 []discoveryv1.Endpoint) (*topology.Engine, *topologytest.Oracle) {
	e, o := topology.NewEngine(), topologytest.NewOracle()
	for node, labels := range map[string]map[string]string{
		"edge-1": {"unit": "a", "zone": "1"}, "edge-2": {"unit": "a", "zone": "1"},
		"edge-3": {"unit": "b", "zone": "1"}, "edge-4": {"unit": "c", "zone": "2"}, "edge-5": nil,
	} {
		e.SetNode(node, labels)
		o.Nodes[node] = labels
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: echo.Namespace, Name: echo.Name, Annotations: map[string]string{topology.AnnotationGridviewKeys: keys}}}
	e.SetService(svc)
	o.Services[echo] = svc
	for _, slice := range []*discoveryv1.EndpointSlice{familySlice(discoveryv1.AddressTypeIPv4, ipv4), familySlice(discoveryv1.AddressTypeIPv6, ipv6)} {
		e.SetEndpointSlice(slice)
		o.Slices[types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}] = slice
	}
	return e, o
}

func familySlice(family discoveryv1.AddressType, endpoints []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: echo.Namespace, Name: echo.Name + "-" + string(family), Labels: map[string]string{discoveryv1.LabelServiceName: echo.Name}},
		AddressType: family,
		Endpoints:   endpoints,
	}
}

// An ordered dual-stack Service chooses its tier for each address family
// apart: IPv6 slices that lag their IPv4 twins never route a node to a tier
// without a ready IPv6 endpoint. matchedKey shows the widest choice.
func TestOrderedTierIsChosenPerAddressFamily(t *testing.T) {
	tests := []struct {
		name        string
		keys        string
		ipv4, ipv6  []discoveryv1.Endpoint
		node        string
		wantMatched string
		wantIPv4    []string
		wantIPv6    []string
	}{
		{
			name: "IPv6 lags in the unit: IPv6 falls to the zone, IPv4 stays", keys: "unit,zone,*", node: "edge-1", wantMatched: "zone",
			ipv4:     []discoveryv1.Endpoint{endpoint("10.0.0.2", "edge-2", true), endpoint("10.0.0.3", "edge-3", true)},
			ipv6:     []discoveryv1.Endpoint{endpoint("fd00::2", "edge-2", false), endpoint("fd00::3", "edge-3", true)},
			wantIPv4: []string{"10.0.0.2"}, wantIPv6: []string{"fd00::2", "fd00::3"},
		},
		{
			name: "IPv4 lags in the unit: IPv4 falls to *, IPv6 stays", keys: "unit,*", node: "edge-2", wantMatched: "*",
			ipv4:     []discoveryv1.Endpoint{endpoint("10.0.0.1", "edge-1", false), endpoint("10.0.0.4", "edge-4", true)},
			ipv6:     []discoveryv1.Endpoint{endpoint("fd00::1", "edge-1", true), endpoint("fd00::4", "edge-4", true)},
			wantIPv4: []string{"10.0.0.1", "10.0.0.4"}, wantIPv6: []string{"fd00::1"},
		},
		{
			name: "both ready in the unit", keys: "unit,zone,*", node: "edge-1", wantMatched: "unit",
			ipv4:     []discoveryv1.Endpoint{endpoint("10.0.0.2", "edge-2", true), endpoint("10.0.0.3", "edge-3", true)},
			ipv6:     []discoveryv1.Endpoint{endpoint("fd00::2", "edge-2", true), endpoint("fd00::3", "edge-3", true)},
			wantIPv4: []string{"10.0.0.2"}, wantIPv6: []string{"fd00::2"},
		},
		{
			name: "no IPv6 endpoint yet: IPv4 keeps its choice", keys: "unit,*", node: "edge-1", wantMatched: "unit",
			ipv4:     []discoveryv1.Endpoint{endpoint("10.0.0.2", "edge-2", true), endpoint("10.0.0.3", "edge-3", true)},
			wantIPv4: []string{"10.0.0.2"},
		},
		{
			name: "no ready IPv6 endpoint anywhere: the first non-empty IPv6 tier", keys: "unit,zone", node: "edge-1", wantMatched: "zone",
			ipv4:     []discoveryv1.Endpoint{endpoint("10.0.0.2", "edge-2", true)},
			ipv6:     []discoveryv1.Endpoint{endpoint("fd00::3", "edge-3", false), endpoint("fd00::4", "edge-4", false)},
			wantIPv4: []string{"10.0.0.2"}, wantIPv6: []string{"fd00::3"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, o := dualStack(tc.keys, tc.ipv4, tc.ipv6)
			view, ok := e.View(tc.node, echo)
			if !ok {
				t.Fatal("no view")
			}
			got := map[discoveryv1.AddressType][]string{}
			for _, slice := range view.Slices {
				for _, ep := range slice.Endpoints {
					got[slice.AddressType] = append(got[slice.AddressType], ep.Addresses...)
				}
			}
			if view.Topology.MatchedKey != tc.wantMatched || !slices.Equal(got[discoveryv1.AddressTypeIPv4], tc.wantIPv4) || !slices.Equal(got[discoveryv1.AddressTypeIPv6], tc.wantIPv6) {
				t.Errorf("matched %q, IPv4 %v, IPv6 %v; want matched %q, IPv4 %v, IPv6 %v",
					view.Topology.MatchedKey, got[discoveryv1.AddressTypeIPv4], got[discoveryv1.AddressTypeIPv6], tc.wantMatched, tc.wantIPv4, tc.wantIPv6)
			}
			for key, want := range o.AllViews() {
				if got, _ := e.View(key.Node, key.Service); !apiequality.Semantic.DeepEqual(got, want) {
					t.Errorf("%v: the engine and the oracle differ\n got %+v\nwant %+v", key, got, want)
				}
			}
		})
	}
}

// When the lagging IPv6 endpoint becomes ready, the nodes of its unit move
// their IPv6 choice to it; the nodes routed through "*" see it change; unit
// b's node, which never saw it, keeps its view.
func TestReadyIPv6EndpointMovesItsUnitsViews(t *testing.T) {
	ipv4 := []discoveryv1.Endpoint{endpoint("10.0.0.2", "edge-2", true), endpoint("10.0.0.3", "edge-3", true)}
	e, _ := dualStack("unit,zone,*", ipv4, []discoveryv1.Endpoint{endpoint("fd00::2", "edge-2", false), endpoint("fd00::3", "edge-3", true)})
	changes := e.SetEndpointSlice(familySlice(discoveryv1.AddressTypeIPv6, []discoveryv1.Endpoint{endpoint("fd00::2", "edge-2", true), endpoint("fd00::3", "edge-3", true)}))
	key := func(node string) topology.ViewKey { return topology.ViewKey{Node: node, Service: echo} }
	if want := []topology.ViewKey{key("edge-1"), key("edge-2"), key("edge-4"), key("edge-5")}; !slices.Equal(changedKeys(changes, e.Nodes()), want) {
		t.Fatalf("changed %v, want %v", changedKeys(changes, e.Nodes()), want)
	}
	for _, c := range changes {
		if !slices.Contains(c.Nodes, "edge-1") || c.New.Slice.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		if !slices.Equal(c.Nodes, []string{"edge-1", "edge-2"}) || c.New.Topology.MatchedKey != "unit" || len(c.New.Slice.Endpoints) != 1 || c.New.Slice.Endpoints[0].Addresses[0] != "fd00::2" {
			t.Errorf("%v's new IPv6 slice: %+v, want unit a's IPv6 endpoint only", c.Nodes, c.New)
		}
	}
}
