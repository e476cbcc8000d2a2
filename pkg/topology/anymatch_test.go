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

	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/gridview/gridview/pkg/topology"
)

// TestAnyMatchFallback checks issue 13's any-match clause: a node keeps its
// matched endpoints only when they number at least the least min-ready of
// the keys that matched; else it gets every endpoint if the Service lists
// "*", else keeps its matched ones.
func TestAnyMatchFallback(t *testing.T) {
	spread := []discoveryv1.Endpoint{endpoint("n1", "edge-1", true), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true)}
	unitPair := []discoveryv1.Endpoint{endpoint("n1", "edge-1", true), endpoint("n2", "edge-2", true), endpoint("n4", "edge-4", true)}
	tests := []struct {
		name      string
		keys      string
		minReady  string
		endpoints []discoveryv1.Endpoint
		node      string
		// wantMatched is the matched key, want the addresses the node gets.
		wantMatched string
		want        []string
	}{
		{name: "matched: kept", keys: `["unit","*"]`, endpoints: spread, node: "edge-2", wantMatched: "unit", want: []string{"n1"}},
		{name: "nothing matched: every endpoint", keys: `["unit","*"]`, endpoints: spread, node: "edge-5", wantMatched: "*", want: []string{"n1", "n3", "n4"}},
		{name: "nothing matched, no star: nothing", keys: `["unit"]`, endpoints: spread, node: "edge-5", want: nil},
		{name: "short of min-ready: every endpoint", keys: `["unit","*"]`, minReady: "2", endpoints: spread, node: "edge-1", wantMatched: "*", want: []string{"n1", "n3", "n4"}},
		{name: "short of min-ready, no star: matched kept", keys: `["unit"]`, minReady: "2", endpoints: spread, node: "edge-1", wantMatched: "unit", want: []string{"n1"}},
		{
			name: "matched endpoints not ready: every endpoint", keys: `["unit","*"]`, node: "edge-2", wantMatched: "*", want: []string{"n1", "n3", "n4"},
			endpoints: []discoveryv1.Endpoint{endpoint("n1", "edge-1", false), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true)},
		},
		{
			name: "the least minimum of the keys that matched", keys: `["unit","topology.kubernetes.io/zone","*"]`, minReady: "unit=3,topology.kubernetes.io/zone=2",
			endpoints: spread, node: "edge-1", wantMatched: "unit", want: []string{"n1", "n3"},
		},
		{
			name: "a key that matched nothing sets no minimum", keys: `["zone","unit","*"]`, minReady: "zone=1,unit=2",
			endpoints: spread, node: "edge-4", wantMatched: "*", want: []string{"n1", "n3", "n4"},
		},
		{
			name: "endpoints in two matched tiers count once", keys: `["unit","topology.kubernetes.io/zone","*"]`, minReady: "3",
			endpoints: unitPair, node: "edge-1", wantMatched: "*", want: []string{"n1", "n2", "n4"},
		},
		{
			name: "a tier at its minimum is kept", keys: `["unit","topology.kubernetes.io/zone","*"]`, minReady: "2",
			endpoints: unitPair, node: "edge-3", wantMatched: "topology.kubernetes.io/zone", want: []string{"n1", "n2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{topology.AnnotationTopologyKeys: tc.keys}
			if tc.minReady != "" {
				annotations[topology.AnnotationMinReady] = tc.minReady
			}
			e, o := ruleCluster(nil, withAnnotations(annotations), tc.endpoints...)
			view, ok := e.View(tc.node, echo)
			if !ok {
				t.Fatalf("no view of %s for %s", echo, tc.node)
			}
			var got []string
			for _, slice := range view.Slices {
				for _, ep := range slice.Endpoints {
					got = append(got, ep.Addresses...)
				}
			}
			if view.Topology.MatchedKey != tc.wantMatched || !slices.Equal(got, tc.want) {
				t.Errorf("matched %q, endpoints %v; want %q, %v", view.Topology.MatchedKey, got, tc.wantMatched, tc.want)
			}
			if want := o.View(tc.node, o.Services[echo]); !apiequality.Semantic.DeepEqual(view, want) {
				t.Errorf("the oracle disagrees:\n got %+v\nwant %+v", view, want)
			}
		})
	}
}
