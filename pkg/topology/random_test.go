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
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

var (
	randomNodes      = []string{"edge-1", "edge-2", "edge-3", "edge-4", "edge-5", "edge-6"}
	randomLabelKeys  = []string{"unit", "zone", topology.KeyHostname, topology.KeyZone, topology.KeyNodePool}
	randomValues     = []string{"a", "b", "c", ""}
	randomServices   = []types.NamespacedName{{Namespace: "demo", Name: "s1"}, {Namespace: "demo", Name: "s2"}, {Namespace: "demo", Name: "s3"}, {Namespace: "other", Name: "s1"}}
	randomSliceNames = []string{"x", "y", "z"}
)

// TestRandomChangesMatchTheOracle applies seeded random changes and checks,
// after each, the engine's changed set and every view against the oracle.
// SEEDS sets how many seeds.
func TestRandomChangesMatchTheOracle(t *testing.T) {
	forEachRandomChange(t, 3000, func(t *testing.T, r *randomRun, step int, what string) {
		if want := r.model.AllSliceViews(); !apiequality.Semantic.DeepEqual(r.state, want) {
			t.Fatalf("step %d, %s: NodeEndpoints after the changes\n got %v\nwant %v", step, what, describe(r.state), describe(want))
		}
		after := r.model.AllViews()
		for key, view := range after {
			engineView, ok := r.engine.View(key.Node, key.Service)
			if !ok || !apiequality.Semantic.DeepEqual(engineView, view) {
				t.Fatalf("step %d, %s: view %v\n got %+v\nwant %+v", step, what, key, engineView, view)
			}
		}
		for _, node := range randomNodes {
			for _, svc := range randomServices {
				if _, ok := r.engine.View(node, svc); ok != (after[topology.ViewKey{Node: node, Service: svc}] != nil) {
					t.Fatalf("step %d, %s: engine has a view of %s for %s: %v, oracle: %v", step, what, svc, node, ok, !ok)
				}
			}
		}
	})
}

// randomRun is one seed's engine, oracle and the NodeEndpoints the engine's
// changes so far made.
type randomRun struct {
	rng    *rand.Rand
	engine *topology.Engine
	model  *topologytest.Oracle
	state  map[topologytest.SliceKey]*topology.SliceView
}

// forEachRandomChange makes steps random changes for each seed, applies each
// to the run's NodeEndpoints, checking that it replaces what it says it
// does, then calls after.
func forEachRandomChange(t *testing.T, steps int, after func(t *testing.T, r *randomRun, step int, what string)) {
	for _, seed := range randomSeeds(1, 5) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			r := &randomRun{rng: rand.New(rand.NewPCG(seed, seed)), engine: topology.NewEngine(), model: topologytest.NewOracle(),
				state: map[topologytest.SliceKey]*topology.SliceView{}}
			for step := range steps {
				what, got := randomChange(r.rng, r.engine, r.model)
				if err := applyChanges(r.state, got, r.engine.Nodes()); err != nil {
					t.Fatalf("step %d, %s: %v", step, what, err)
				}
				after(t, r, step, what)
			}
		})
	}
}

// describe lists NodeEndpoints by key, for failure messages.
func describe(state map[topologytest.SliceKey]*topology.SliceView) string {
	var b strings.Builder
	for _, key := range slices.SortedFunc(maps.Keys(state), func(a, b topologytest.SliceKey) int {
		return cmp.Or(cmp.Compare(a.Slice.String(), b.Slice.String()), cmp.Compare(a.Node, b.Node))
	}) {
		fmt.Fprintf(&b, "\n  %s/%s: %s %+v %v", key.Node, key.Slice, state[key].Service, state[key].Topology, state[key].Slice.Endpoints)
	}
	return b.String()
}

func compareViewKeys(a, b topology.ViewKey) int {
	return cmp.Or(topology.CompareServices(a.Service, b.Service), cmp.Compare(a.Node, b.Node))
}

func randomChange(rng *rand.Rand, engine *topology.Engine, model *topologytest.Oracle) (string, []topology.SliceChange) {
	pick := func(n int) int { return rng.IntN(n) }
	switch pick(7) {
	case 0:
		name, labels := randomNode(rng)
		model.Nodes[name] = labels
		return fmt.Sprintf("set node %s %v", name, labels), engine.SetNode(name, labels)
	case 1:
		name := randomNodes[pick(len(randomNodes))]
		delete(model.Nodes, name)
		return "delete node " + name, engine.DeleteNode(name)
	case 2:
		key := randomServices[pick(len(randomServices))]
		svc := randomService(rng, key)
		if pick(3) == 0 {
			svc.Labels = map[string]string{"app": randomValues[pick(len(randomValues))]}
		}
		if pick(10) == 0 {
			svc.Spec.Type = corev1.ServiceTypeExternalName
		}
		model.Services[key] = svc
		return fmt.Sprintf("set service %s %v %v %s %v", key, svc.Labels, svc.Annotations, svc.Spec.Type, ptr.Deref(svc.Spec.TrafficDistribution, "")), engine.SetService(svc)
	case 3:
		key := randomServices[pick(len(randomServices))]
		delete(model.Services, key)
		return "delete service " + key.String(), engine.DeleteService(key)
	case 4:
		slice := randomSlice(rng)
		model.Slices[types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}] = slice
		return fmt.Sprintf("set slice %s/%s of %q", slice.Namespace, slice.Name, slice.Labels[discoveryv1.LabelServiceName]), engine.SetEndpointSlice(slice)
	case 5:
		svc := randomServices[pick(len(randomServices))]
		key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name + "-" + randomSliceNames[pick(len(randomSliceNames))]}
		delete(model.Slices, key)
		return "delete slice " + key.String(), engine.DeleteEndpointSlice(key)
	default:
		return randomNamespace(rng, engine, model, randomServices[pick(len(randomServices))].Namespace)
	}
}

// randomNode is a node and labels for it.
func randomNode(rng *rand.Rand) (string, map[string]string) {
	labels := map[string]string{}
	for _, key := range randomLabelKeys {
		if rng.IntN(10) < 7 {
			labels[key] = randomValues[rng.IntN(len(randomValues))]
		}
	}
	return randomNodes[rng.IntN(len(randomNodes))], labels
}

// TestNodeChangesInStagesMatchTheOracle sets nodes' labels in stages between
// random changes: the first stage brings every other node's views to the
// oracle's, the second changes only the node's own, and both together bring
// every view there.
func TestNodeChangesInStagesMatchTheOracle(t *testing.T) {
	forEachRandomChange(t, 2000, func(t *testing.T, r *randomRun, step int, _ string) {
		name, labels := randomNode(r.rng)
		what := fmt.Sprintf("set node %s %v in stages", name, labels)
		r.model.Nodes[name] = labels
		first, ownViews := r.engine.SetNodeInStages(name, labels)
		if err := applyChanges(r.state, first, r.engine.Nodes()); err != nil {
			t.Fatalf("step %d, %s, first stage: %v", step, what, err)
		}
		want := r.model.AllSliceViews()
		others := func(views map[topologytest.SliceKey]*topology.SliceView) map[topologytest.SliceKey]*topology.SliceView {
			out := maps.Clone(views)
			maps.DeleteFunc(out, func(key topologytest.SliceKey, _ *topology.SliceView) bool { return key.Node == name })
			return out
		}
		if !apiequality.Semantic.DeepEqual(others(r.state), others(want)) {
			t.Fatalf("step %d, %s: other nodes' NodeEndpoints after the first stage\n got %v\nwant %v", step, what, describe(others(r.state)), describe(others(want)))
		}
		if ownViews != nil {
			second := ownViews()
			for _, c := range second {
				if c.AllNodes || !slices.Equal(c.Nodes, []string{name}) {
					t.Fatalf("step %d, %s: the second stage changes %s for %v, not only for %s", step, what, c.Slice, c.Nodes, name)
				}
			}
			if err := applyChanges(r.state, second, r.engine.Nodes()); err != nil {
				t.Fatalf("step %d, %s, second stage: %v", step, what, err)
			}
		}
		if !apiequality.Semantic.DeepEqual(r.state, want) {
			t.Fatalf("step %d, %s: NodeEndpoints after both stages\n got %v\nwant %v", step, what, describe(r.state), describe(want))
		}
	})
}

func randomAnnotations(rng *rand.Rand) map[string]string {
	annotations := map[string]string{}
	switch rng.IntN(8) {
	case 0:
		annotations[topology.AnnotationTopologyKeys] = `["unit"]`
	case 1:
		// In any-match mode the hostname is a label like any other.
		annotations[topology.AnnotationTopologyKeys] = oneOf(rng, `["zone","unit"]`, `["kubernetes.io/hostname","unit"]`,
			`["unit","*"]`, `["zone","unit","*"]`, `["kubernetes.io/hostname","topology.kubernetes.io/zone","*"]`, `["*"]`)
	case 2:
		annotations[topology.AnnotationTopologyKeys] = oneOf(rng, `[bad`, `[]`, `["unit","unit"]`, `["*","unit"]`, `["unit","*","*"]`)
	case 3:
		annotations[topology.AnnotationGridviewKeys] = []string{"unit,zone,*", "kubernetes.io/hostname,unit", "zone", "unit,*", "unit,zone,unit,*,*"}[rng.IntN(5)]
	case 4:
		annotations[topology.AnnotationGridviewKeys] = []string{"*,unit", "unit,,zone", "", "bad key"}[rng.IntN(4)]
	case 5:
		annotations[topology.AnnotationGridviewKeys] = "unit,*"
		annotations[topology.AnnotationTopologyKeys] = `["zone"]`
	}
	return annotations
}

func randomSlice(rng *rand.Rand) *discoveryv1.EndpointSlice {
	svc := randomServices[rng.IntN(len(randomServices))]
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: svc.Namespace,
			Name:      svc.Name + "-" + randomSliceNames[rng.IntN(len(randomSliceNames))],
			Labels:    map[string]string{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"},
		},
		AddressType: []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}[rng.IntN(2)],
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
	// Mostly the Service the name says; sometimes another one, or none.
	switch rng.IntN(10) {
	case 0:
	case 1:
		slice.Labels[discoveryv1.LabelServiceName] = randomServices[rng.IntN(len(randomServices))].Name
	default:
		slice.Labels[discoveryv1.LabelServiceName] = svc.Name
	}
	conditions := []*bool{nil, ptr.To(true), ptr.To(false)}
	for i := range rng.IntN(5) {
		ep := discoveryv1.Endpoint{
			Addresses: []string{fmt.Sprintf("10.0.%d.%d", rng.IntN(4), i)},
			Conditions: discoveryv1.EndpointConditions{
				Ready: conditions[rng.IntN(3)], Serving: conditions[rng.IntN(3)], Terminating: conditions[rng.IntN(3)],
			},
		}
		switch n := rng.IntN(len(randomNodes) + 2); {
		case n < len(randomNodes):
			ep.NodeName = ptr.To(randomNodes[n])
		case n == len(randomNodes):
			ep.NodeName = ptr.To("unknown-node")
		}
		if rng.IntN(4) == 0 {
			ep.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "a"}}}
		}
		slice.Endpoints = append(slice.Endpoints, ep)
	}
	return slice
}
