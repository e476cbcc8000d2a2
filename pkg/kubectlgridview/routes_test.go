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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// orderedRoutes falls back from unit to zone; its groups are out of order,
// as a server may send them.
func orderedRoutes() *v1alpha1.ServiceRoutes {
	return &v1alpha1.ServiceRoutes{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"},
		Rule:       "Gridview", Mode: v1alpha1.TopologyModeOrdered, Keys: []string{unitKey, zoneKey},
		Nodes: 12, ReadyEndpoints: 7, TotalEndpoints: 10,
		Groups: []v1alpha1.RouteGroup{
			{Labels: map[string]string{unitKey: "shanghai-02", zoneKey: "east-1"}, Nodes: 2, SampleNodes: []string{"edge-1", "edge-2"},
				Route: "local", ChosenKey: unitKey, ChosenValue: "shanghai-02", ReadyEndpoints: 2},
			{Labels: map[string]string{unitKey: "shanghai-01", zoneKey: "east-1"}, Nodes: 3, SampleNodes: []string{"edge-3", "edge-4", "edge-5"},
				Route: "fallback-1", ChosenKey: zoneKey, ChosenValue: "east-1", ReadyEndpoints: 4},
			{Labels: map[string]string{unitKey: "lonely"}, Nodes: 1, SampleNodes: []string{"edge-9"}, Route: "none"},
			{Labels: map[string]string{zoneKey: "north-1"}, Nodes: 1, SampleNodes: []string{"edge-8"},
				Route: "fallback-1", ChosenKey: zoneKey, ChosenValue: "north-1", ReadyEndpoints: 3},
			{Labels: map[string]string{unitKey: "beijing-01", zoneKey: "north-1"}, Nodes: 5, SampleNodes: []string{"edge-10", "edge-11", "edge-12"},
				Route: "local", ChosenKey: unitKey, ChosenValue: "beijing-01", ReadyEndpoints: 3},
		},
	}
}

// anyMatchRoutes keeps a unit's endpoints, or every endpoint ("*") for a
// unit with fewer ready than its min-ready.
func anyMatchRoutes() *v1alpha1.ServiceRoutes {
	return &v1alpha1.ServiceRoutes{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo"},
		Rule:       "SuperEdge", Mode: v1alpha1.TopologyModeAnyMatch, Keys: []string{unitKey, "*"},
		Nodes: 4, ReadyEndpoints: 3, TotalEndpoints: 4,
		Groups: []v1alpha1.RouteGroup{
			{Labels: map[string]string{unitKey: "unit-b"}, Nodes: 2, SampleNodes: []string{"edge-3", "edge-4"},
				Route: "fallback-1", ChosenKey: "*", ReadyEndpoints: 3},
			{Labels: map[string]string{unitKey: "unit-a"}, Nodes: 2, SampleNodes: []string{"edge-1", "edge-2"},
				Route: "local", ChosenKey: unitKey, ChosenValue: "unit-a", ReadyEndpoints: 2},
		},
	}
}

// unprunedRoutes is a Service without a rule: one group, every endpoint.
func unprunedRoutes() *v1alpha1.ServiceRoutes {
	return &v1alpha1.ServiceRoutes{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "demo"},
		Mode:       v1alpha1.TopologyModeNone, Nodes: 4, ReadyEndpoints: 4, TotalEndpoints: 4,
		Groups: []v1alpha1.RouteGroup{{Nodes: 4, SampleNodes: []string{"edge-1", "edge-2", "edge-3"}, Route: "all", ReadyEndpoints: 4}},
	}
}

// sameNodeRoutes prefers the node itself, then its unit: a node's own
// tier has no one value for the group.
func sameNodeRoutes() *v1alpha1.ServiceRoutes {
	return &v1alpha1.ServiceRoutes{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "demo"},
		Rule:       "Gridview", Mode: v1alpha1.TopologyModeOrdered, Keys: []string{"kubernetes.io/hostname", unitKey},
		Nodes: 3, ReadyEndpoints: 2, TotalEndpoints: 2,
		Groups: []v1alpha1.RouteGroup{
			{Labels: map[string]string{unitKey: "unit-a"}, Nodes: 2, SampleNodes: []string{"edge-1", "edge-2"},
				Route: "local", ChosenKey: "kubernetes.io/hostname", ReadyEndpoints: 1},
			{Labels: map[string]string{unitKey: "unit-a"}, Nodes: 1, SampleNodes: []string{"edge-5"},
				Route: "fallback-1", ChosenKey: unitKey, ChosenValue: "unit-a", ReadyEndpoints: 2},
		},
	}
}

func TestRoutes(t *testing.T) {
	for name, tc := range map[string]struct {
		routes   *v1alpha1.ServiceRoutes
		args     []string
		wantGold string
	}{
		"ordered fallback to zone": {orderedRoutes(), []string{"routes", "web", "-n", "demo"}, "routes-ordered.golden"},
		"ordered, wide":            {orderedRoutes(), []string{"routes", "web", "-n", "demo", "-o", "wide"}, "routes-ordered-wide.golden"},
		"any-match falling on *":   {anyMatchRoutes(), []string{"routes", "echo", "-n", "demo"}, "routes-anymatch.golden"},
		"same-node key first":      {sameNodeRoutes(), []string{"routes", "cache", "-n", "demo"}, "routes-samenode.golden"},
		"all, not pruned":          {unprunedRoutes(), []string{"routes", "plain", "-n", "demo", "-o", "wide"}, "routes-all.golden"},
		"json":                     {anyMatchRoutes(), []string{"routes", "echo", "-n", "demo", "-o", "json"}, "routes-anymatch.json.golden"},
	} {
		t.Run(name, func(t *testing.T) {
			var asked string
			client := fakeTopology(func(action clienttesting.Action) (bool, runtime.Object, error) {
				asked = action.GetNamespace() + "/" + action.(clienttesting.GetAction).GetName()
				return true, tc.routes, nil
			})
			out, err := run(t, client, nil, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.routes.Namespace + "/" + tc.routes.Name; asked != want {
				t.Errorf("got ServiceRoutes %q, want %q", asked, want)
			}
			checkGolden(t, tc.wantGold, []byte(out))
		})
	}
}

func TestRoutesUnknownOutput(t *testing.T) {
	_, err := run(t, fakeTopology(returning(orderedRoutes(), nil)), nil, "routes", "web", "-o", "svg")
	if want := `unsupported output "svg": routes prints a table, wide, json or yaml`; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
