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

package kubectlgridview

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// Label keys of the canned answers: a unit inside a zone.
const (
	unitKey = "gridview.io/unit"
	zoneKey = "topology.kubernetes.io/zone"
)

// answering answers a TopologyReview with status, and keeps the spec the
// command created in *asked.
func answering(status v1alpha1.TopologyReviewStatus, asked *v1alpha1.TopologyReviewSpec) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		review := action.(clienttesting.CreateAction).GetObject().(*v1alpha1.TopologyReview).DeepCopy()
		*asked = review.Spec
		review.Status = status
		return true, review, nil
	}
}

func addresses(n int) []string {
	var list []string
	for i := range n {
		list = append(list, fmt.Sprintf("10.244.%d.10", i+1))
	}
	return list
}

func TestExplain(t *testing.T) {
	fallbackToZone := v1alpha1.TopologyReviewStatus{
		Rule: "Gridview", Mode: v1alpha1.TopologyModeOrdered, Route: "fallback-1", Addresses: addresses(4),
		Tiers: []v1alpha1.TopologyTier{
			{Key: unitKey, Value: "shanghai-01", Ready: 0, Total: 3, MinReady: 1},
			{Key: zoneKey, Value: "east-1", Ready: 4, Total: 6, MinReady: 1, Chosen: true},
		},
		Reason: "unit shanghai-01 has 0 ready endpoints of 3; fell back to zone east-1 (4 ready)",
	}
	for name, tc := range map[string]struct {
		args      []string
		status    v1alpha1.TopologyReviewStatus
		wantSpec  v1alpha1.TopologyReviewSpec
		wantGold  string
		wantError string
	}{
		"ordered fallback to zone": {
			args:     []string{"explain", "edge-3", "web", "-n", "demo"},
			status:   fallbackToZone,
			wantSpec: v1alpha1.TopologyReviewSpec{NodeName: "edge-3", ServiceName: "web"},
			wantGold: "explain-fallback.golden",
		},
		"local": {
			args: []string{"explain", "edge-1", "web", "-n", "demo"},
			status: v1alpha1.TopologyReviewStatus{
				Rule: "Gridview", Mode: v1alpha1.TopologyModeOrdered, Route: "local", Addresses: addresses(2),
				Tiers: []v1alpha1.TopologyTier{
					{Key: unitKey, Value: "shanghai-02", Ready: 2, Total: 2, MinReady: 1, Chosen: true},
					{Key: zoneKey, Value: "east-1", Ready: 4, Total: 6, MinReady: 1},
				},
				Reason: "unit shanghai-02 has 2 ready endpoints of 2",
			},
			wantSpec: v1alpha1.TopologyReviewSpec{NodeName: "edge-1", ServiceName: "web"},
			wantGold: "explain-local.golden",
		},
		"none, node without the zone label": {
			args: []string{"explain", "edge-9", "web", "-n", "demo"},
			status: v1alpha1.TopologyReviewStatus{
				Rule: "SuperEdge", Mode: v1alpha1.TopologyModeOrdered, Route: "none",
				Tiers: []v1alpha1.TopologyTier{
					{Key: unitKey, Value: "lonely", Ready: 0, Total: 0, MinReady: 1},
					{Key: zoneKey, Ready: 0, Total: 0, MinReady: 1},
				},
				Reason: "unit lonely has no endpoints and the node has no zone label: it routes to none",
			},
			wantSpec: v1alpha1.TopologyReviewSpec{NodeName: "edge-9", ServiceName: "web"},
			wantGold: "explain-none.golden",
		},
		"all, not pruned, addresses truncated": {
			args: []string{"explain", "edge-1", "plain", "-n", "demo"},
			status: v1alpha1.TopologyReviewStatus{
				Mode: v1alpha1.TopologyModeNone, Route: "all", Addresses: addresses(13),
				Reason: "the Service carries no topology rule: every endpoint is kept (13 ready)",
			},
			wantSpec: v1alpha1.TopologyReviewSpec{NodeName: "edge-1", ServiceName: "plain"},
			wantGold: "explain-all.golden",
		},
		"any-match falling back on *": {
			args: []string{"explain", "edge-4", "echo", "-n", "demo"},
			status: v1alpha1.TopologyReviewStatus{
				Rule: "SuperEdge", Mode: v1alpha1.TopologyModeAnyMatch, Route: "fallback-1", Addresses: addresses(6),
				Tiers: []v1alpha1.TopologyTier{
					{Key: unitKey, Value: "unit-b", Ready: 1, Total: 1, MinReady: 2},
					{Key: "*", Ready: 6, Total: 6, Chosen: true},
				},
				Reason: "unit unit-b has 1 ready endpoint, fewer than its min-ready 2; fell back to every endpoint (6 ready)",
			},
			wantSpec: v1alpha1.TopologyReviewSpec{NodeName: "edge-4", ServiceName: "echo"},
			wantGold: "explain-anymatch.golden",
		},
		"any-match without *, nowhere": {
			args: []string{"explain", "edge-5", "echo", "-n", "demo"},
			status: v1alpha1.TopologyReviewStatus{
				Rule: "SuperEdge", Mode: v1alpha1.TopologyModeAnyMatch, Route: "none",
				Tiers:  []v1alpha1.TopologyTier{{Key: unitKey, Value: "unit-c"}},
				Reason: "no tier of the node holds an endpoint; the node routes nowhere",
			},
			wantSpec: v1alpha1.TopologyReviewSpec{NodeName: "edge-5", ServiceName: "echo"},
			wantGold: "explain-anymatch-none.golden",
		},
		"what-ifs passed into the spec": {
			args: []string{"explain", "edge-1", "web", "-n", "demo",
				"--label", unitKey + "=shanghai-01", "--label", zoneKey + "=east-1", "--unready", "edge-5,edge-6", "--unready", "edge-7"},
			status: fallbackToZone,
			wantSpec: v1alpha1.TopologyReviewSpec{NodeName: "edge-1", ServiceName: "web",
				NodeLabels:   map[string]string{unitKey: "shanghai-01", zoneKey: "east-1"},
				UnreadyNodes: []string{"edge-5", "edge-6", "edge-7"}},
			wantGold: "explain-whatif.golden",
		},
		"yaml": {
			args:     []string{"explain", "edge-3", "web", "-n", "demo", "-o", "yaml"},
			status:   fallbackToZone,
			wantSpec: v1alpha1.TopologyReviewSpec{NodeName: "edge-3", ServiceName: "web"},
			wantGold: "explain-yaml.golden",
		},
		"label without =": {
			args:      []string{"explain", "edge-3", "web", "--label", "unit"},
			wantError: `--label "unit": want key=value`,
		},
		"unknown output": {
			args:      []string{"explain", "edge-3", "web", "-o", "wide"},
			wantError: `unsupported output "wide": explain prints text, yaml or json`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var asked v1alpha1.TopologyReviewSpec
			out, err := run(t, fakeTopology(answering(tc.status, &asked)), nil, tc.args...)
			if tc.wantError != "" {
				if err == nil || err.Error() != tc.wantError {
					t.Fatalf("error %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(asked, tc.wantSpec) {
				t.Errorf("created spec %+v, want %+v", asked, tc.wantSpec)
			}
			checkGolden(t, tc.wantGold, []byte(out))
		})
	}
}
