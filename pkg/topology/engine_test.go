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
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

var echo = types.NamespacedName{Namespace: "demo", Name: "echo-svc"}

// endpoint is an endpoint at 10.0.0.<n> on node (or none when ""), ready or not.
func endpoint(address, node string, isReady bool) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{Addresses: []string{address}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(isReady)}}
	if node != "" {
		ep.NodeName = ptr.To(node)
	}
	return ep
}

// twoUnits: edge-1 and edge-2 in unit a (zone 1), edge-3 in unit b (zone 1),
// edge-4 in unit c (zone 2), edge-5 without labels.
func twoUnits(annotations map[string]string, endpoints ...discoveryv1.Endpoint) *topology.Engine {
	e := topology.NewEngine()
	e.SetNode("edge-1", map[string]string{"unit": "a", "zone": "1"})
	e.SetNode("edge-2", map[string]string{"unit": "a", "zone": "1"})
	e.SetNode("edge-3", map[string]string{"unit": "b", "zone": "1"})
	e.SetNode("edge-4", map[string]string{"unit": "c", "zone": "2"})
	e.SetNode("edge-5", nil)
	e.SetService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo-svc", Annotations: annotations}})
	e.SetEndpointSlice(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "echo-svc-1", Labels: map[string]string{discoveryv1.LabelServiceName: "echo-svc"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   endpoints,
	})
	return e
}

func TestViews(t *testing.T) {
	anyMatch := map[string]string{topology.AnnotationTopologyKeys: `["unit"]`}
	ordered := map[string]string{topology.AnnotationGridviewKeys: "unit,zone,*"}
	tests := []struct {
		name        string
		annotations map[string]string
		endpoints   []discoveryv1.Endpoint
		node        string
		wantMode    topologyapi.TopologyMode
		wantMatched string
		wantAddrs   []string
	}{
		{name: "no annotation: every endpoint", node: "edge-1", wantMode: topologyapi.TopologyModeNone,
			endpoints: []discoveryv1.Endpoint{endpoint("a1", "edge-1", true), endpoint("b1", "edge-3", true)}, wantAddrs: []string{"a1", "b1"}},
		{name: "any-match keeps the unit", annotations: anyMatch, node: "edge-2", wantMode: topologyapi.TopologyModeAnyMatch, wantMatched: "unit",
			endpoints: []discoveryv1.Endpoint{endpoint("a1", "edge-1", true), endpoint("b1", "edge-3", true)}, wantAddrs: []string{"a1"}},
		{name: "any-match, nothing in the unit: empty", annotations: anyMatch, node: "edge-4", wantMode: topologyapi.TopologyModeAnyMatch,
			endpoints: []discoveryv1.Endpoint{endpoint("a1", "edge-1", true)}},
		{name: "any-match, node without the label: empty", annotations: anyMatch, node: "edge-5", wantMode: topologyapi.TopologyModeAnyMatch,
			endpoints: []discoveryv1.Endpoint{endpoint("a1", "edge-1", true)}},
		{name: "any-match ignores endpoints without or with unknown nodes", annotations: anyMatch, node: "edge-1", wantMode: topologyapi.TopologyModeAnyMatch,
			endpoints: []discoveryv1.Endpoint{endpoint("x", "", true), endpoint("y", "ghost", true)}},
		{name: "ordered: the unit tier wins", annotations: ordered, node: "edge-1", wantMode: topologyapi.TopologyModeOrdered, wantMatched: "unit",
			endpoints: []discoveryv1.Endpoint{endpoint("a2", "edge-2", true), endpoint("b1", "edge-3", true)}, wantAddrs: []string{"a2"}},
		{name: "ordered: a unit without ready endpoints falls to the zone", annotations: ordered, node: "edge-1", wantMode: topologyapi.TopologyModeOrdered, wantMatched: "zone",
			endpoints: []discoveryv1.Endpoint{endpoint("a2", "edge-2", false), endpoint("b1", "edge-3", true)}, wantAddrs: []string{"a2", "b1"}},
		{name: "ordered: * takes every endpoint", annotations: ordered, node: "edge-4", wantMode: topologyapi.TopologyModeOrdered, wantMatched: "*",
			endpoints: []discoveryv1.Endpoint{endpoint("a2", "edge-2", true), endpoint("x", "", true)}, wantAddrs: []string{"a2", "x"}},
		{name: "ordered: no ready tier, the first non-empty one", annotations: map[string]string{topology.AnnotationGridviewKeys: "unit,zone"}, node: "edge-1",
			wantMode: topologyapi.TopologyModeOrdered, wantMatched: "unit",
			endpoints: []discoveryv1.Endpoint{endpoint("a2", "edge-2", false), endpoint("b1", "edge-3", false)}, wantAddrs: []string{"a2"}},
		{name: "ordered: hostname is the same node", annotations: map[string]string{topology.AnnotationGridviewKeys: "kubernetes.io/hostname,unit"}, node: "edge-1",
			wantMode: topologyapi.TopologyModeOrdered, wantMatched: topology.KeyHostname,
			endpoints: []discoveryv1.Endpoint{endpoint("a1", "edge-1", true), endpoint("a2", "edge-2", true)}, wantAddrs: []string{"a1"}},
		{name: "the gridview key wins", annotations: map[string]string{topology.AnnotationGridviewKeys: "zone", topology.AnnotationTopologyKeys: `["unit"]`}, node: "edge-1",
			wantMode: topologyapi.TopologyModeOrdered, wantMatched: "zone",
			endpoints: []discoveryv1.Endpoint{endpoint("b1", "edge-3", true)}, wantAddrs: []string{"b1"}},
		{name: "any-match: a repeated key is one key", annotations: map[string]string{topology.AnnotationTopologyKeys: `["unit","unit"]`}, node: "edge-2",
			wantMode: topologyapi.TopologyModeAnyMatch, wantMatched: "unit",
			endpoints: []discoveryv1.Endpoint{endpoint("a1", "edge-1", true), endpoint("b1", "edge-3", true)}, wantAddrs: []string{"a1"}},
		{name: "ordered: a repeated key keeps its first place", annotations: map[string]string{topology.AnnotationGridviewKeys: "unit,zone,unit,*,*"}, node: "edge-1",
			wantMode: topologyapi.TopologyModeOrdered, wantMatched: "zone",
			endpoints: []discoveryv1.Endpoint{endpoint("a2", "edge-2", false), endpoint("b1", "edge-3", true), endpoint("c1", "edge-4", true)}, wantAddrs: []string{"a2", "b1"}},
		{name: "malformed: unpruned", annotations: map[string]string{topology.AnnotationTopologyKeys: "[unit"}, node: "edge-1", wantMode: topologyapi.TopologyModeNone,
			endpoints: []discoveryv1.Endpoint{endpoint("b1", "edge-3", true)}, wantAddrs: []string{"b1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			view, ok := twoUnits(tc.annotations, tc.endpoints...).View(tc.node, echo)
			if !ok {
				t.Fatal("no view")
			}
			var addrs []string
			for _, slice := range view.Slices {
				for _, ep := range slice.Endpoints {
					addrs = append(addrs, ep.Addresses...)
				}
			}
			if view.Topology.Mode != tc.wantMode || view.Topology.MatchedKey != tc.wantMatched || !slices.Equal(addrs, tc.wantAddrs) {
				t.Errorf("view = %s matched %q %v; want %s matched %q %v", view.Topology.Mode, view.Topology.MatchedKey, addrs, tc.wantMode, tc.wantMatched, tc.wantAddrs)
			}
			if len(view.Slices) != 1 || view.Slices[0].Name != "echo-svc-1" {
				t.Errorf("slices = %+v, want the source slice, even when empty", view.Slices)
			}
		})
	}
}

func TestChangedViews(t *testing.T) {
	e := twoUnits(map[string]string{topology.AnnotationTopologyKeys: `["unit"]`}, endpoint("a1", "edge-1", true), endpoint("b1", "edge-3", true))
	key := func(node string) topology.ViewKey { return topology.ViewKey{Node: node, Service: echo} }

	// edge-3 moves to unit a: its own view changes, and so does every unit-a
	// node's, which now sees b1; unit c and the unlabelled node see nothing new.
	got := e.SetNode("edge-3", map[string]string{"unit": "a", "zone": "1"})
	if want := []topology.ViewKey{key("edge-1"), key("edge-2"), key("edge-3")}; !slices.Equal(changedKeys(got, e.Nodes()), want) {
		t.Errorf("node move changed %v, want %v", changedKeys(got, e.Nodes()), want)
	}
	if i := slices.IndexFunc(got, func(c topology.SliceChange) bool { return slices.Equal(c.Nodes, []string{"edge-3"}) }); i < 0 || got[i].Old == nil || got[i].New == nil || len(got[i].New.Slice.Endpoints) != 2 {
		t.Errorf("the changes are %+v, want one of edge-3 alone from its old view to a new one with both endpoints", got)
	}
	if got := e.SetNode("edge-3", map[string]string{"unit": "a", "zone": "1"}); len(got) != 0 {
		t.Errorf("a no-op changed %v", got)
	}
	if malformed := e.Malformed(echo); malformed != nil {
		t.Errorf("Malformed = %v", malformed)
	}
	got = e.SetService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo-svc", Annotations: map[string]string{topology.AnnotationTopologyKeys: "["}}})
	if len(changedKeys(got, e.Nodes())) != 5 || e.Malformed(echo) == nil {
		t.Errorf("a malformed annotation changed %v (want every node's view) and reported %v", got, e.Malformed(echo))
	}
	got = e.SetService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo-svc"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}})
	if _, ok := e.View("edge-1", echo); ok || len(changedKeys(got, e.Nodes())) != 5 {
		t.Errorf("ExternalName: view kept (%v) or changed set %v is not every node", ok, got)
	}
}

// Hints are the source's in a view of every endpoint, so that kube-proxy
// still applies trafficDistribution and topology-mode: Auto; a pruned view
// carries none, since kube-proxy would prune the pruned set again.
func TestViewsKeepHintsOnlyUnpruned(t *testing.T) {
	hinted := func(address, node, zone string) discoveryv1.Endpoint {
		ep := endpoint(address, node, true)
		ep.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: zone}}, ForNodes: []discoveryv1.ForNode{{Name: node}}}
		return ep
	}
	source := []discoveryv1.Endpoint{hinted("a1", "edge-1", "1"), hinted("b1", "edge-3", "1"), hinted("c1", "edge-4", "2")}
	tests := []struct {
		name        string
		annotations map[string]string
		wantHints   bool
	}{
		{name: "no annotation", wantHints: true},
		{name: "malformed annotation", annotations: map[string]string{topology.AnnotationGridviewKeys: "*,unit"}, wantHints: true},
		{name: "any-match", annotations: map[string]string{topology.AnnotationTopologyKeys: `["zone"]`}},
		{name: "ordered", annotations: map[string]string{topology.AnnotationGridviewKeys: "zone,*"}},
		{name: "ordered through *", annotations: map[string]string{topology.AnnotationGridviewKeys: "unit,*"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := twoUnits(tc.annotations, source...)
			for _, node := range []string{"edge-1", "edge-4", "edge-5"} {
				view, ok := e.View(node, echo)
				if !ok {
					t.Fatalf("%s has no view", node)
				}
				got := view.Slices[0].Endpoints
				if tc.wantHints {
					if want, _ := json.Marshal(source); !bytes.Equal(mustJSON(t, got), want) {
						t.Errorf("%s's unpruned view\n got %s\nwant %s", node, mustJSON(t, got), want)
					}
					continue
				}
				for _, ep := range got {
					if ep.Hints != nil {
						t.Errorf("%s's pruned view keeps the hints of %v: %+v", node, ep.Addresses, ep.Hints)
					}
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// changedKeys returns the views of a Service by a node that changes touch,
// sorted, for an engine whose known nodes are nodes.
func changedKeys(changes []topology.SliceChange, nodes []string) []topology.ViewKey {
	touched := map[topology.ViewKey]bool{}
	for _, c := range changes {
		view := c.New
		if view == nil {
			view = c.Old
		}
		recipients := c.Nodes
		if c.AllNodes {
			recipients = nodes
		}
		for _, node := range recipients {
			touched[topology.ViewKey{Node: node, Service: view.Service}] = true
		}
	}
	return slices.SortedFunc(maps.Keys(touched), compareViewKeys)
}

// applyChanges applies changes to the NodeEndpoints of an engine whose known
// nodes are nodes, checking that each finds what it says it replaces and
// changes what it touches.
func applyChanges(state map[topologytest.SliceKey]*topology.SliceView, changes []topology.SliceChange, nodes []string) error {
	before := maps.Clone(state)
	touched := map[topologytest.SliceKey]bool{}
	for _, c := range changes {
		recipients := c.Nodes
		if c.AllNodes {
			recipients = nodes
		}
		if len(recipients) == 0 {
			return fmt.Errorf("change of %s is for no node", c.Slice)
		}
		for _, node := range recipients {
			key := topologytest.SliceKey{Node: node, Slice: c.Slice}
			if !apiequality.Semantic.DeepEqual(state[key], c.Old) {
				return fmt.Errorf("change of %v: old\n got %+v\nhave %+v", key, c.Old, state[key])
			}
			if c.New == nil {
				delete(state, key)
			} else {
				state[key] = c.New
			}
			touched[key] = true
		}
	}
	for key := range touched {
		if apiequality.Semantic.DeepEqual(before[key], state[key]) {
			return fmt.Errorf("%v did not change, but a change was sent for it", key)
		}
	}
	return nil
}
