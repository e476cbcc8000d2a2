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
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

const (
	keyUnit = "superedge.io/nodeunit"
	// unitZoneAny is the ordered rule of the examples: the unit, else the
	// zone, else every endpoint.
	unitZoneAny = keyUnit + "," + topology.KeyZone + ",*"
)

// reviewNodes: sh-1 and sh-2 in unit shanghai-01, hz-1 in unit hangzhou-01,
// all three in zone east-1 and in pools; bj-1 in unit beijing-01, zone
// north-1 and no pool; bare without labels; blank in an empty pool.
var reviewNodes = map[string]map[string]string{
	"sh-1":  {keyUnit: "shanghai-01", topology.KeyZone: "east-1", topology.KeyNodePool: "p1"},
	"sh-2":  {keyUnit: "shanghai-01", topology.KeyZone: "east-1", topology.KeyNodePool: "p1"},
	"hz-1":  {keyUnit: "hangzhou-01", topology.KeyZone: "east-1", topology.KeyNodePool: "p2"},
	"bj-1":  {keyUnit: "beijing-01", topology.KeyZone: "north-1"},
	"bare":  nil,
	"blank": {topology.KeyNodePool: ""},
}

// shanghai is three endpoints in unit shanghai-01, the first ready or not,
// the others as rest says.
func shanghai(first, rest bool) []discoveryv1.Endpoint {
	return []discoveryv1.Endpoint{endpoint("a1", "sh-1", first), endpoint("a2", "sh-2", rest), endpoint("a3", "sh-1", rest)}
}

// hangzhou is four ready endpoints on hz-1; beijing one on bj-1.
var (
	hangzhou = []discoveryv1.Endpoint{endpoint("b1", "hz-1", true), endpoint("b2", "hz-1", true), endpoint("b3", "hz-1", true), endpoint("b4", "hz-1", true)}
	beijing  = []discoveryv1.Endpoint{endpoint("c1", "bj-1", true)}
)

// reviewCluster loads reviewNodes, Namespace demo with its annotations, the
// Service echo-svc and one slice of its endpoints.
func reviewCluster(namespace map[string]string, svc *corev1.Service, endpoints ...discoveryv1.Endpoint) *topology.Engine {
	e := topology.NewEngine()
	for name, labels := range reviewNodes {
		e.SetNode(name, labels)
	}
	e.SetNamespace("demo", namespace)
	svc.Namespace, svc.Name = echo.Namespace, echo.Name
	e.SetService(svc)
	e.SetEndpointSlice(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: echo.Namespace, Name: "echo-svc-1", Labels: map[string]string{discoveryv1.LabelServiceName: echo.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   endpoints,
	})
	return e
}

func TestReviewReasons(t *testing.T) {
	ordered := withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny})
	all := slices.Concat(shanghai(true, true), hangzhou, beijing)
	tests := []struct {
		name      string
		namespace map[string]string
		svc       *corev1.Service
		endpoints []discoveryv1.Endpoint
		node      string
		position  string
		// reason is the whole reason, or, with contains, a part of it.
		reason   string
		contains bool
	}{
		{
			name: "ordered: the unit holds ready endpoints", svc: ordered, endpoints: all, node: "sh-1", position: topology.PositionLocal,
			reason: "superedge.io/nodeunit=shanghai-01 has 3 ready endpoints of 3; traffic stays there",
		},
		{
			name: "ordered: the unit has none ready", svc: ordered, endpoints: slices.Concat(shanghai(false, false), hangzhou, beijing), node: "sh-1",
			position: topology.FallbackPosition(1),
			reason:   "superedge.io/nodeunit=shanghai-01 has 0 ready endpoints of 3; fell back to topology.kubernetes.io/zone=east-1 (4 ready)",
		},
		{
			name: "ordered: the unit is short of min-ready", endpoints: slices.Concat(shanghai(true, false), hangzhou, beijing), node: "sh-2",
			svc:      withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny, topology.AnnotationMinReady: "2"}),
			position: topology.FallbackPosition(1),
			reason:   "superedge.io/nodeunit=shanghai-01 has 1 ready endpoint of 3, fewer than the 2 min-ready asks; fell back to topology.kubernetes.io/zone=east-1 (5 ready)",
		},
		{
			name: "ordered: a node without the labels", svc: ordered, endpoints: all, node: "bare", position: topology.FallbackPosition(2),
			reason: `the node has no superedge.io/nodeunit label, so it is in no tier of it; the node has no topology.kubernetes.io/zone label, so it is in no tier of it; fell back to every endpoint ("*", 8 ready)`,
		},
		{
			name: "ordered: no tier holds a ready endpoint", endpoints: shanghai(false, false), node: "sh-1", position: topology.PositionLocal,
			svc:    withAnnotations(map[string]string{topology.AnnotationGridviewKeys: keyUnit + "," + topology.KeyZone}),
			reason: "traffic goes to superedge.io/nodeunit=shanghai-01 (0 ready), the first with endpoints, for kube-proxy to use serving or terminating ones; none of the endpoints it routes to is ready", contains: true,
		},
		{
			name: "ordered: only every endpoint", svc: withAnnotations(map[string]string{topology.AnnotationGridviewKeys: "*"}), endpoints: all, node: "sh-1",
			position: topology.PositionAll, reason: `"*" is the only key: traffic goes to every endpoint (8 ready)`,
		},
		{
			name: "any-match: a unit without endpoints routes nowhere", endpoints: slices.Concat(shanghai(true, true), hangzhou), node: "bj-1",
			svc: withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["superedge.io/nodeunit"]`}), position: topology.PositionNone,
			reason: `no tier of the node holds an endpoint (superedge.io/nodeunit=beijing-01 has 0 ready endpoints of 0); the node routes nowhere: add "*" as the last key (or fallback Any on a ServiceGrid) to fall back`,
		},
		{
			name: "any-match: a unit without endpoints falls back", endpoints: slices.Concat(shanghai(true, true), hangzhou), node: "bj-1",
			svc: withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["superedge.io/nodeunit","*"]`}), position: topology.FallbackPosition(1),
			reason: `superedge.io/nodeunit=beijing-01 has 0 ready endpoints of 0; fell back to every endpoint ("*", 7 ready)`,
		},
		{
			name: "any-match: two matched tiers", endpoints: all, node: "sh-1", position: topology.PositionLocal,
			svc:    withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["superedge.io/nodeunit","topology.kubernetes.io/zone"]`}),
			reason: "traffic goes to the endpoints of superedge.io/nodeunit=shanghai-01 (3 ready) and topology.kubernetes.io/zone=east-1 (7 ready)",
		},
		{
			name: "any-match: short of min-ready", endpoints: all, node: "bj-1", position: topology.FallbackPosition(1),
			svc:    withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["superedge.io/nodeunit","*"]`, topology.AnnotationMinReady: "2"}),
			reason: `superedge.io/nodeunit=beijing-01 has 1 ready endpoint of 1, fewer than the 2 min-ready asks; fell back to every endpoint ("*", 8 ready)`,
		},
		{
			name: "no rule", svc: withAnnotations(nil), endpoints: all, node: "sh-1", position: topology.PositionAll,
			reason: "the Service carries no topology rule: every endpoint is kept (8 ready)",
		},
		{
			name: "hints", svc: withAnnotations(map[string]string{corev1.AnnotationTopologyMode: "Auto"}), endpoints: all, node: "sh-1",
			position: topology.PositionAll, reason: "every endpoint is kept (8 ready) with its hints, and kube-proxy chooses by zone", contains: true,
		},
		{
			name: "malformed", svc: withAnnotations(map[string]string{topology.AnnotationGridviewKeys: "bad key"}), endpoints: all, node: "sh-1",
			position: topology.PositionAll, reason: "the Service's topology annotations are malformed, so it is not pruned and every endpoint is kept (8 ready): topology.gridview.io/keys", contains: true,
		},
		{
			name: "a malformed Namespace default", namespace: map[string]string{topology.AnnotationGridviewKeys: "bad key"}, svc: withAnnotations(nil),
			endpoints: all, node: "sh-1", position: topology.PositionAll, reason: "the default rule of the Service's Namespace is malformed", contains: true,
		},
		{
			name: "native", svc: withTrafficDistribution(corev1.ServiceTrafficDistributionPreferSameZone, nil), endpoints: all, node: "sh-1",
			position: topology.PositionLocal,
			reason:   "by spec.trafficDistribution PreferSameZone, topology.kubernetes.io/zone=east-1 has 7 ready endpoints of 7; traffic stays there",
		},
		{
			name: "native value gridview does not prune by", svc: withTrafficDistribution("PreferSameRegion", nil), endpoints: all, node: "sh-1",
			position: topology.PositionAll, reason: "spec.trafficDistribution PreferSameRegion is not one gridview prunes by", contains: true,
		},
		{
			name: "OpenYurt: a node in no pool", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}),
			endpoints: all, node: "bj-1", position: topology.FallbackPosition(1),
			reason: "by OpenYurt's openyurt.io/topologyKeys, the node has no apps.openyurt.io/nodepool label, so it is in no tier of it; fell back to kubernetes.io/hostname=bj-1 (1 ready)",
		},
		{
			name: "OpenYurt: an empty pool routes nowhere", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}),
			endpoints: all, node: "blank", position: topology.PositionNone,
			reason: "by OpenYurt's openyurt.io/topologyKeys, no tier of the node holds an endpoint (the node's apps.openyurt.io/nodepool label is empty, so it is in no tier of it; kubernetes.io/hostname=blank has 0 ready endpoints of 0); the node routes nowhere: OpenYurt's rule does not fall back, so an endpoint must run in the node's tier",
		},
		{
			name: "Namespace default", namespace: map[string]string{topology.AnnotationGridviewKeys: keyUnit + ",*"}, svc: withAnnotations(nil),
			endpoints: all, node: "sh-1", position: topology.PositionLocal,
			reason: "by its Namespace's default topology.gridview.io/keys, superedge.io/nodeunit=shanghai-01 has 3 ready endpoints of 3; traffic stays there",
		},
		{
			name: "no endpoints", svc: ordered, node: "sh-1", position: topology.PositionNone,
			reason: "the Service has no endpoints, so no node routes to any: check that its selector matches running pods",
		},
		{
			name: "a malformed min-ready is ignored", svc: withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny, topology.AnnotationMinReady: "0"}),
			endpoints: all, node: "sh-1", position: topology.PositionLocal, reason: "traffic stays there; a malformed annotation is ignored: topology.gridview.io/min-ready", contains: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := reviewCluster(tc.namespace, tc.svc.DeepCopy(), tc.endpoints...)
			got, err := e.Review(tc.node, echo, topology.WhatIf{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Position != tc.position {
				t.Errorf("position %q, want %q", got.Position, tc.position)
			}
			if tc.contains && !strings.Contains(got.Reason, tc.reason) || !tc.contains && got.Reason != tc.reason {
				t.Errorf("reason\n%s\nwant\n%s", got.Reason, tc.reason)
			}
		})
	}
}

// TestReviews checks whole reviews: with min-ready, and of a dual-stack
// node whose families choose apart, IPv4 having a ready endpoint in its unit
// and IPv6 only in its zone.
func TestReviews(t *testing.T) {
	dualStack := reviewCluster(nil, withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny}), endpoint("a1", "sh-1", true))
	dualStack.SetEndpointSlice(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: echo.Namespace, Name: "echo-svc-6", Labels: map[string]string{discoveryv1.LabelServiceName: echo.Name}},
		AddressType: discoveryv1.AddressTypeIPv6,
		Endpoints:   []discoveryv1.Endpoint{endpoint("fd00::b1", "hz-1", true)},
	})
	for _, tc := range []struct {
		name string
		e    *topology.Engine
		want topology.Review
	}{
		{
			name: "min-ready",
			e: reviewCluster(nil, withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny, topology.AnnotationMinReady: "2"}),
				slices.Concat(shanghai(true, false), hangzhou, beijing)...),
			want: topology.Review{
				Rule: topology.RuleGridview, Mode: topologyapi.TopologyModeOrdered, Position: topology.FallbackPosition(1),
				Tiers: []topology.TierReview{
					{Key: keyUnit, Value: "shanghai-01", In: true, Ready: 1, Total: 3, MinReady: 2},
					{Key: topology.KeyZone, Value: "east-1", In: true, Ready: 5, Total: 7, MinReady: 2, Chosen: true},
					{Key: topology.KeyAny, In: true, Ready: 6, Total: 8, MinReady: 1},
				},
				Addresses: []string{"a1", "b1", "b2", "b3", "b4"},
				Reason:    "superedge.io/nodeunit=shanghai-01 has 1 ready endpoint of 3, fewer than the 2 min-ready asks; fell back to topology.kubernetes.io/zone=east-1 (5 ready)",
			},
		},
		{
			name: "dual-stack", e: dualStack,
			want: topology.Review{
				Rule: topology.RuleGridview, Mode: topologyapi.TopologyModeOrdered, Position: topology.FallbackPosition(1),
				Tiers: []topology.TierReview{
					{Key: keyUnit, Value: "shanghai-01", In: true, Ready: 1, Total: 1, MinReady: 1, Chosen: true},
					{Key: topology.KeyZone, Value: "east-1", In: true, Ready: 2, Total: 2, MinReady: 1, Chosen: true},
					{Key: topology.KeyAny, In: true, Ready: 2, Total: 2, MinReady: 1},
				},
				Addresses: []string{"a1", "fd00::b1"},
				Reason: "superedge.io/nodeunit=shanghai-01 has 1 ready endpoint of 1; fell back to topology.kubernetes.io/zone=east-1 (2 ready); " +
					"per address family, IPv4 routes to superedge.io/nodeunit=shanghai-01 and IPv6 routes to topology.kubernetes.io/zone=east-1",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.e.Review("sh-1", echo, topology.WhatIf{})
			if err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("review\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestReviewOfUnknown(t *testing.T) {
	e := reviewCluster(nil, withAnnotations(nil), beijing...)
	external := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "external"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}}
	e.SetService(external)
	for _, tc := range []struct {
		name string
		node string
		svc  types.NamespacedName
		want error
	}{
		{name: "node", node: "nowhere", svc: echo, want: topology.ErrUnknownNode},
		{name: "Service", node: "sh-1", svc: types.NamespacedName{Namespace: "demo", Name: "missing"}, want: topology.ErrUnknownService},
		{name: "ExternalName Service", node: "sh-1", svc: types.NamespacedName{Namespace: "demo", Name: "external"}, want: topology.ErrUnknownService},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Review(tc.node, tc.svc, topology.WhatIf{})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), cmpName(tc.node, tc.svc, tc.want)) {
				t.Errorf("error %v, want %v naming it", err, tc.want)
			}
		})
	}
}

// cmpName is the name an error about node or svc must hold.
func cmpName(node string, svc types.NamespacedName, err error) string {
	if errors.Is(err, topology.ErrUnknownNode) {
		return node
	}
	return svc.String()
}

func TestReviewWhatIf(t *testing.T) {
	ordered := withAnnotations(map[string]string{topology.AnnotationGridviewKeys: unitZoneAny})
	tests := []struct {
		name     string
		node     string
		whatIf   topology.WhatIf
		position string
		want     []string
		reason   string
	}{
		{name: "as it is", node: "sh-1", position: topology.PositionLocal, want: []string{"a1", "a2", "a3"}},
		{
			name: "moved into a unit without endpoints", node: "bare",
			whatIf:   topology.WhatIf{NodeLabels: map[string]string{keyUnit: "suzhou-01", topology.KeyZone: "east-1"}},
			position: topology.FallbackPosition(1), want: []string{"a1", "a2", "a3", "b1", "b2", "b3", "b4"},
			reason: "superedge.io/nodeunit=suzhou-01 has 0 ready endpoints of 0; fell back to topology.kubernetes.io/zone=east-1 (7 ready)",
		},
		{
			name: "moved, taking its own endpoints", node: "sh-1",
			whatIf:   topology.WhatIf{NodeLabels: map[string]string{keyUnit: "suzhou-01"}},
			position: topology.PositionLocal, want: []string{"a1", "a3"},
			reason: "superedge.io/nodeunit=suzhou-01 has 2 ready endpoints of 2; traffic stays there",
		},
		{
			name: "its unit down", node: "sh-1", whatIf: topology.WhatIf{UnreadyNodes: sets.New("sh-1", "sh-2")},
			position: topology.FallbackPosition(1), want: []string{"b1", "b2", "b3", "b4"},
			reason: "superedge.io/nodeunit=shanghai-01 has 0 ready endpoints of 3; fell back to topology.kubernetes.io/zone=east-1 (4 ready)",
		},
		{
			name: "its zone down too", node: "sh-1", whatIf: topology.WhatIf{UnreadyNodes: sets.New("sh-1", "sh-2", "hz-1")},
			position: topology.FallbackPosition(2), want: []string{"c1"},
		},
	}
	e := reviewCluster(nil, ordered, slices.Concat(shanghai(true, true), hangzhou, beijing)...)
	// Deep copies: a what-if that wrote into the engine's shared slices
	// would change the cached views in place, behind the same pointers.
	before := map[string]*topology.View{}
	for node := range reviewNodes {
		view, _ := e.View(node, echo)
		before[node] = deepCopyView(view)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.Review(tc.node, echo, tc.whatIf)
			if err != nil {
				t.Fatal(err)
			}
			if got.Position != tc.position || !slices.Equal(got.Addresses, tc.want) {
				t.Errorf("position %q, addresses %v; want %q, %v", got.Position, got.Addresses, tc.position, tc.want)
			}
			if tc.reason != "" && got.Reason != tc.reason {
				t.Errorf("reason\n%s\nwant\n%s", got.Reason, tc.reason)
			}
			for node, view := range before {
				if after, _ := e.View(node, echo); !apiequality.Semantic.DeepEqual(after, view) {
					t.Errorf("view of %s changed: %+v, was %+v", node, after, view)
				}
				// A review under the node's own labels derives the tiers
				// afresh from the sources, which a what-if that wrote into
				// them would have changed.
				fresh, err := e.Review(node, echo, topology.WhatIf{NodeLabels: reviewNodes[node]})
				if err != nil {
					t.Fatal(err)
				}
				if current, _ := e.Review(node, echo, topology.WhatIf{}); !slices.Equal(fresh.Addresses, current.Addresses) {
					t.Errorf("%s's sources changed: afresh it routes to %v, its view %v", node, fresh.Addresses, current.Addresses)
				}
			}
		})
	}
}

func deepCopyView(v *topology.View) *topology.View {
	out := &topology.View{Labels: maps.Clone(v.Labels), Topology: *v.Topology.DeepCopy()}
	for _, slice := range v.Slices {
		out.Slices = append(out.Slices, *slice.DeepCopy())
	}
	return out
}
