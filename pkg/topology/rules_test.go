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
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

// ruleNodes: edge-1 and edge-2 in pool p1 and zone z1, edge-3 in pool p2
// and zone z1, edge-4 in zone z2 and no pool, edge-5 in an empty zone and
// an empty pool.
var ruleNodes = map[string]map[string]string{
	"edge-1": {topology.KeyNodePool: "p1", topology.KeyZone: "z1", "unit": "a"},
	"edge-2": {topology.KeyNodePool: "p1", topology.KeyZone: "z1", "unit": "a"},
	"edge-3": {topology.KeyNodePool: "p2", topology.KeyZone: "z1", "unit": "b"},
	"edge-4": {topology.KeyZone: "z2", "unit": "c"},
	"edge-5": {topology.KeyNodePool: "", topology.KeyZone: ""},
}

// ruleCluster loads ruleNodes, a Namespace, a Service and one slice of its
// endpoints into an engine and the oracle.
func ruleCluster(namespace map[string]string, svc *corev1.Service, endpoints ...discoveryv1.Endpoint) (*topology.Engine, *topologytest.Oracle) {
	e, o := topology.NewEngine(), topologytest.NewOracle()
	for name, labels := range ruleNodes {
		e.SetNode(name, labels)
		o.Nodes[name] = labels
	}
	e.SetNamespace("demo", namespace)
	o.Namespaces["demo"] = namespace
	svc.Namespace, svc.Name = "demo", "echo-svc"
	e.SetService(svc)
	o.Services[echo] = svc
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "echo-svc-1", Labels: map[string]string{discoveryv1.LabelServiceName: "echo-svc"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   endpoints,
	}
	e.SetEndpointSlice(slice)
	o.Slices[echoSlice] = slice
	return e, o
}

var echoSlice = types.NamespacedName{Namespace: "demo", Name: "echo-svc-1"}

func withAnnotations(annotations map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
}

func withTrafficDistribution(value string, annotations map[string]string) *corev1.Service {
	svc := withAnnotations(annotations)
	svc.Spec.TrafficDistribution = ptr.To(value)
	return svc
}

func TestRules(t *testing.T) {
	spread := []discoveryv1.Endpoint{endpoint("n1", "edge-1", true), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true)}
	gridviewDefault := map[string]string{topology.AnnotationGridviewKeys: "unit,*"}
	tests := []struct {
		name      string
		namespace map[string]string
		svc       *corev1.Service
		endpoints []discoveryv1.Endpoint
		// want holds, per node, the rule, the matched key and the addresses.
		node        string
		wantMode    topologyapi.TopologyMode
		wantRule    string
		wantMatched string
		wantAddrs   []string
	}{
		{name: "PreferSameNode: the node", svc: withTrafficDistribution("PreferSameNode", nil), endpoints: spread, node: "edge-1",
			wantMode: topologyapi.TopologyModeOrdered, wantRule: "Native(PreferSameNode)", wantMatched: topology.KeyHostname, wantAddrs: []string{"n1"}},
		{name: "PreferSameNode: no ready endpoint on the node, the zone", svc: withTrafficDistribution("PreferSameNode", nil), node: "edge-2",
			endpoints: []discoveryv1.Endpoint{endpoint("n2", "edge-2", false), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true)},
			wantMode:  topologyapi.TopologyModeOrdered, wantRule: "Native(PreferSameNode)", wantMatched: topology.KeyZone, wantAddrs: []string{"n2", "n3"}},
		{name: "PreferSameZone: nothing ready in the zone, every endpoint", svc: withTrafficDistribution("PreferSameZone", nil), node: "edge-4",
			endpoints: []discoveryv1.Endpoint{endpoint("n1", "edge-1", true), endpoint("n4", "edge-4", false)},
			wantMode:  topologyapi.TopologyModeOrdered, wantRule: "Native(PreferSameZone)", wantMatched: topology.KeyAny, wantAddrs: []string{"n1", "n4"}},
		{name: "PreferClose is PreferSameZone", svc: withTrafficDistribution("PreferClose", nil), endpoints: spread, node: "edge-2",
			wantMode: topologyapi.TopologyModeOrdered, wantRule: "Native(PreferClose)", wantMatched: topology.KeyZone, wantAddrs: []string{"n1", "n3"}},
		{name: "an empty zone is no zone", svc: withTrafficDistribution("PreferSameZone", nil), node: "edge-5",
			endpoints: []discoveryv1.Endpoint{endpoint("n1", "edge-1", true), endpoint("n5", "edge-5", true)},
			wantMode:  topologyapi.TopologyModeOrdered, wantRule: "Native(PreferSameZone)", wantMatched: topology.KeyAny, wantAddrs: []string{"n1", "n5"}},
		{name: "an unknown trafficDistribution is left to kube-proxy", svc: withTrafficDistribution("PreferSameRegion", nil), endpoints: spread, node: "edge-1",
			namespace: gridviewDefault, wantMode: topologyapi.TopologyModeNone, wantRule: "Native(PreferSameRegion)", wantAddrs: []string{"n1", "n3", "n4"}},
		{name: "OpenYurt hostname", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "kubernetes.io/hostname"}), endpoints: spread, node: "edge-2",
			wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleOpenYurt},
		{name: "OpenYurt nodepool", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}), endpoints: spread, node: "edge-2",
			wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleOpenYurt, wantMatched: topology.KeyNodePool, wantAddrs: []string{"n1"}},
		{name: "OpenYurt nodepool, not ready: still the pool", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}), node: "edge-2",
			endpoints: []discoveryv1.Endpoint{endpoint("n1", "edge-1", false), endpoint("n3", "edge-3", true)},
			wantMode:  topologyapi.TopologyModeOrdered, wantRule: topology.RuleOpenYurt, wantMatched: topology.KeyNodePool, wantAddrs: []string{"n1"}},
		{name: "OpenYurt kubernetes.io/zone is the pool", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "kubernetes.io/zone"}), endpoints: spread, node: "edge-3",
			wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleOpenYurt, wantMatched: topology.KeyNodePool, wantAddrs: []string{"n3"}},
		{name: "OpenYurt: a node in no pool keeps its own", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}), endpoints: spread, node: "edge-4",
			wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleOpenYurt, wantMatched: topology.KeyHostname, wantAddrs: []string{"n4"}},
		{name: "OpenYurt topology.kubernetes.io/zone", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: topology.KeyZone}), endpoints: spread, node: "edge-2",
			wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleOpenYurt, wantMatched: topology.KeyZone, wantAddrs: []string{"n1", "n3"}},
		{name: "OpenYurt ignores min-ready", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool", topology.AnnotationMinReady: "5"}),
			endpoints: spread, node: "edge-1", wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleOpenYurt, wantMatched: topology.KeyNodePool, wantAddrs: []string{"n1"}},
		{name: "OpenYurt, a value it does not know: unpruned", svc: withAnnotations(map[string]string{topology.AnnotationOpenYurtTopologyKeys: "*"}), endpoints: spread, node: "edge-1",
			namespace: gridviewDefault, wantMode: topologyapi.TopologyModeNone, wantAddrs: []string{"n1", "n3", "n4"}},
		{name: "topology-mode Auto keeps the hints", svc: withAnnotations(map[string]string{corev1.AnnotationTopologyMode: "Auto"}), endpoints: spread, node: "edge-1",
			namespace: gridviewDefault, wantMode: topologyapi.TopologyModeNone, wantRule: topology.RuleHints, wantAddrs: []string{"n1", "n3", "n4"}},
		{name: "the Namespace default", svc: withAnnotations(nil), namespace: gridviewDefault, endpoints: spread, node: "edge-2",
			wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleNamespace, wantMatched: "unit", wantAddrs: []string{"n1"}},
		{name: "a malformed Namespace default: unpruned", svc: withAnnotations(nil), namespace: map[string]string{topology.AnnotationGridviewKeys: "*,unit"}, endpoints: spread,
			node: "edge-2", wantMode: topologyapi.TopologyModeNone, wantAddrs: []string{"n1", "n3", "n4"}},
		{name: "gridview wins over trafficDistribution", svc: withTrafficDistribution("PreferSameNode", map[string]string{topology.AnnotationGridviewKeys: "unit"}), endpoints: spread,
			node: "edge-2", wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleGridview, wantMatched: "unit", wantAddrs: []string{"n1"}},
		{name: "SuperEdge wins over OpenYurt", svc: withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["unit"]`, topology.AnnotationOpenYurtTopologyKeys: "kubernetes.io/hostname"}),
			endpoints: spread, node: "edge-2", wantMode: topologyapi.TopologyModeAnyMatch, wantRule: topology.RuleSuperEdge, wantMatched: "unit", wantAddrs: []string{"n1"}},
		{name: "OpenYurt wins over trafficDistribution", svc: withTrafficDistribution("PreferSameZone", map[string]string{topology.AnnotationOpenYurtTopologyKeys: "kubernetes.io/hostname"}),
			endpoints: spread, node: "edge-1", wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleOpenYurt, wantMatched: topology.KeyHostname, wantAddrs: []string{"n1"}},
		{name: "trafficDistribution wins over the Namespace and topology-mode", svc: withTrafficDistribution("PreferSameZone", map[string]string{corev1.AnnotationTopologyMode: "Auto"}),
			namespace: gridviewDefault, endpoints: spread, node: "edge-4", wantMode: topologyapi.TopologyModeOrdered, wantRule: "Native(PreferSameZone)", wantMatched: topology.KeyZone, wantAddrs: []string{"n4"}},
		{name: "min-ready: a unit short of ready endpoints gives way to the zone", svc: withAnnotations(map[string]string{topology.AnnotationGridviewKeys: "unit,topology.kubernetes.io/zone,*", topology.AnnotationMinReady: "2"}),
			endpoints: spread, node: "edge-2", wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleGridview, wantMatched: topology.KeyZone, wantAddrs: []string{"n1", "n3"}},
		{name: "min-ready per key: the zone needs 3, so every endpoint", svc: withAnnotations(map[string]string{topology.AnnotationGridviewKeys: "unit,topology.kubernetes.io/zone,*", topology.AnnotationMinReady: "unit=2,topology.kubernetes.io/zone=3"}),
			endpoints: spread, node: "edge-2", wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleGridview, wantMatched: topology.KeyAny, wantAddrs: []string{"n1", "n3", "n4"}},
		{name: "min-ready: none qualifies, the first tier with a ready endpoint", svc: withAnnotations(map[string]string{topology.AnnotationGridviewKeys: "unit,topology.kubernetes.io/zone", topology.AnnotationMinReady: "3"}),
			endpoints: spread, node: "edge-2", wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleGridview, wantMatched: "unit", wantAddrs: []string{"n1"}},
		{name: "min-ready applies to a Namespace default", svc: withAnnotations(map[string]string{topology.AnnotationMinReady: "2"}), namespace: gridviewDefault, endpoints: spread,
			node: "edge-2", wantMode: topologyapi.TopologyModeOrdered, wantRule: topology.RuleNamespace, wantMatched: topology.KeyAny, wantAddrs: []string{"n1", "n3", "n4"}},
		{name: "a malformed min-ready is ignored", svc: withTrafficDistribution("PreferSameZone", map[string]string{topology.AnnotationMinReady: "0"}), endpoints: spread,
			node: "edge-4", wantMode: topologyapi.TopologyModeOrdered, wantRule: "Native(PreferSameZone)", wantMatched: topology.KeyZone, wantAddrs: []string{"n4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, o := ruleCluster(tc.namespace, tc.svc, tc.endpoints...)
			view, ok := e.View(tc.node, echo)
			if !ok {
				t.Fatal("no view")
			}
			var addrs []string
			for _, ep := range view.Slices[0].Endpoints {
				addrs = append(addrs, ep.Addresses...)
			}
			if got := view.Topology; got.Mode != tc.wantMode || got.Rule != tc.wantRule || got.MatchedKey != tc.wantMatched || !slices.Equal(addrs, tc.wantAddrs) {
				t.Errorf("view = %s %q matched %q %v; want %s %q matched %q %v", got.Mode, got.Rule, got.MatchedKey, addrs, tc.wantMode, tc.wantRule, tc.wantMatched, tc.wantAddrs)
			}
			for key, want := range o.AllViews() {
				if got, _ := e.View(key.Node, key.Service); !apiequality.Semantic.DeepEqual(got, want) {
					t.Errorf("%s: the engine and the oracle differ\n got %+v\nwant %+v", key.Node, got, want)
				}
			}
		})
	}
}

func TestRulesListsEveryRuleBeforeTheOneThatApplies(t *testing.T) {
	tests := []struct {
		name string
		svc  *corev1.Service
		want []string
	}{
		{name: "none", svc: withAnnotations(map[string]string{corev1.AnnotationTopologyMode: "Disabled"})},
		{name: "one", svc: withTrafficDistribution("PreferClose", nil), want: []string{"Native(PreferClose)"}},
		{name: "every one", svc: withTrafficDistribution("PreferSameNode", map[string]string{
			topology.AnnotationGridviewKeys: "bad key", topology.AnnotationTopologyKeys: `["unit"]`,
			topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool", corev1.DeprecatedAnnotationTopologyAwareHints: "auto",
		}), want: []string{"Gridview", "SuperEdge", "OpenYurt", "Native(PreferSameNode)", "Hints"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := topology.Rules(tc.svc); !slices.Equal(got, tc.want) {
				t.Errorf("Rules = %q, want %q", got, tc.want)
			}
		})
	}
}
