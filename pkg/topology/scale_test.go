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
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
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

// TestRandomChangesAtScaleMatchTheOracle is TestRandomChangesMatchTheOracle
// with more nodes and label values, so that tiers have many groups, and with
// changes of single endpoints and single labels, which the engine scopes
// narrowly. After each change it also checks the engine's indexes against
// those of an engine loaded from scratch. SEEDS sets how many seeds.
func TestRandomChangesAtScaleMatchTheOracle(t *testing.T) {
	for _, seed := range randomSeeds(11, 3) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			sc := &scaled{rng: rand.New(rand.NewPCG(seed, seed)), engine: topology.NewEngine(), model: topologytest.NewOracle()}
			state := map[topologytest.SliceKey]*topology.SliceView{}
			for step := range 1000 {
				what, got := sc.change()
				if err := applyChanges(state, got, sc.engine.Nodes()); err != nil {
					t.Fatalf("step %d, %s: %v", step, what, err)
				}
				if want := sc.model.AllSliceViews(); !apiequality.Semantic.DeepEqual(state, want) {
					t.Fatalf("step %d, %s: NodeEndpoints after the changes\n got %v\nwant %v", step, what, describe(state), describe(want))
				}
				after := sc.model.AllViews()
				for key, view := range after {
					if engineView, ok := sc.engine.View(key.Node, key.Service); !ok || !apiequality.Semantic.DeepEqual(engineView, view) {
						t.Fatalf("step %d, %s: view %v\n got %+v\nwant %+v", step, what, key, engineView, view)
					}
				}
				checkIndexes(t, fmt.Sprintf("step %d, %s", step, what), sc.engine, sc.model)
			}
		})
	}
}

// checkIndexes compares what the engine derived incrementally with what it
// derives from scratch.
func checkIndexes(t *testing.T, context string, e *topology.Engine, model *topologytest.Oracle) {
	t.Helper()
	var nodes []*corev1.Node
	for name, labels := range model.Nodes {
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	}
	fresh := topology.NewEngine()
	for name, annotations := range model.Namespaces {
		fresh.SetNamespace(name, annotations)
	}
	fresh.Load(nodes, slices.Collect(maps.Values(model.Services)), slices.Collect(maps.Values(model.Slices)))
	if err := topology.CheckIndexes(e, fresh); err != nil {
		t.Fatalf("%s: %v", context, err)
	}
}

// scaled makes random changes to an engine and the oracle: 30 nodes in 8
// units over 3 zones, 6 Services, up to 3 slices each.
type scaled struct {
	rng    *rand.Rand
	engine *topology.Engine
	model  *topologytest.Oracle
}

func (sc *scaled) pick(n int) int { return sc.rng.IntN(n) }

func (sc *scaled) node() string { return fmt.Sprintf("edge-%02d", sc.pick(30)) }

func (sc *scaled) service() types.NamespacedName {
	return types.NamespacedName{Namespace: "demo", Name: fmt.Sprintf("s%d", sc.pick(6))}
}

func (sc *scaled) labels() map[string]string {
	labels := map[string]string{}
	if sc.pick(10) > 0 {
		labels["unit"] = fmt.Sprintf("u%d", sc.pick(8))
	}
	if sc.pick(10) > 0 {
		labels["zone"] = fmt.Sprintf("z%d", sc.pick(3))
	}
	if sc.pick(4) == 0 {
		labels[topology.KeyHostname] = fmt.Sprintf("h%d", sc.pick(3))
	}
	// Zones and pools, empty ones among them.
	if sc.pick(10) > 0 {
		labels[topology.KeyZone] = fmt.Sprintf("z%d", sc.pick(3))[:sc.pick(2)*2]
	}
	if sc.pick(3) > 0 {
		labels[topology.KeyNodePool] = fmt.Sprintf("p%d", sc.pick(6))[:sc.pick(6)/5*2]
	}
	return labels
}

func (sc *scaled) endpoint() discoveryv1.Endpoint {
	conditions := []*bool{nil, ptr.To(true), ptr.To(false), ptr.To(true)}
	ep := discoveryv1.Endpoint{
		Addresses:  []string{fmt.Sprintf("10.1.%d.%d", sc.pick(4), sc.pick(250))},
		Conditions: discoveryv1.EndpointConditions{Ready: conditions[sc.pick(4)]},
	}
	switch n := sc.pick(20); {
	case n < 18:
		ep.NodeName = ptr.To(sc.node())
	case n == 18:
		ep.NodeName = ptr.To("unknown-node")
	}
	return ep
}

func (sc *scaled) change() (string, []topology.SliceChange) {
	switch n := sc.pick(20); {
	case n < 4:
		// One label of a node, as a node moving between units does.
		name := sc.node()
		labels := map[string]string{}
		for key, value := range sc.model.Nodes[name] {
			labels[key] = value
		}
		fresh := sc.labels()
		key := oneOf(sc.rng, "unit", "zone", topology.KeyHostname, topology.KeyZone, topology.KeyNodePool)
		if value, ok := fresh[key]; ok {
			labels[key] = value
		} else {
			delete(labels, key)
		}
		sc.model.Nodes[name] = labels
		return fmt.Sprintf("set node %s %v", name, labels), sc.engine.SetNode(name, labels)
	case n < 5:
		name := sc.node()
		delete(sc.model.Nodes, name)
		return "delete node " + name, sc.engine.DeleteNode(name)
	case n < 7:
		key := sc.service()
		svc := randomService(sc.rng, key)
		if sc.pick(8) == 0 {
			svc.Annotations = map[string]string{topology.AnnotationGridviewKeys: "zone,kubernetes.io/hostname,*"}
		}
		sc.model.Services[key] = svc
		return fmt.Sprintf("set service %s %v %v", key, svc.Annotations, ptr.Deref(svc.Spec.TrafficDistribution, "")), sc.engine.SetService(svc)
	case n < 8:
		key := sc.service()
		delete(sc.model.Services, key)
		return "delete service " + key.String(), sc.engine.DeleteService(key)
	case n < 10:
		key := sc.service()
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: key.Namespace, Name: fmt.Sprintf("%s-%d", key.Name, sc.pick(3)), Labels: map[string]string{discoveryv1.LabelServiceName: key.Name}},
			AddressType: discoveryv1.AddressTypeIPv4,
		}
		for range sc.pick(12) {
			slice.Endpoints = append(slice.Endpoints, sc.endpoint())
		}
		sc.model.Slices[types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}] = slice
		return "set slice " + slice.Name, sc.engine.SetEndpointSlice(slice)
	case n < 11 && sc.pick(4) == 0:
		return randomNamespace(sc.rng, sc.engine, sc.model, "demo")
	case n < 11:
		key := sc.service()
		name := types.NamespacedName{Namespace: key.Namespace, Name: fmt.Sprintf("%s-%d", key.Name, sc.pick(3))}
		delete(sc.model.Slices, name)
		return "delete slice " + name.Name, sc.engine.DeleteEndpointSlice(name)
	default:
		return sc.editEndpoint()
	}
}

// editEndpoint adds, removes, replaces or moves one endpoint of a slice,
// keeping the rest of it.
func (sc *scaled) editEndpoint() (string, []topology.SliceChange) {
	var names []types.NamespacedName
	for name := range sc.model.Slices {
		names = append(names, name)
	}
	if len(names) == 0 {
		return "no slice to edit", nil
	}
	slices.SortFunc(names, topology.CompareServices)
	slice := sc.model.Slices[names[sc.pick(len(names))]].DeepCopy()
	eps := slice.Endpoints
	what := "add"
	switch i := sc.pick(len(eps) + 1); {
	case len(eps) == 0 || sc.pick(3) == 0:
		eps = slices.Insert(eps, i, sc.endpoint())
	case sc.pick(2) == 0:
		what, i = "remove", i%len(eps)
		eps = slices.Delete(eps, i, i+1)
	case sc.pick(2) == 0:
		what, i = "replace", i%len(eps)
		eps[i] = sc.endpoint()
	default:
		what, i = "flip readiness of", i%len(eps)
		eps[i].Conditions.Ready = ptr.To(!topology.Ready(&eps[i]))
	}
	slice.Endpoints = eps
	sc.model.Slices[types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}] = slice
	return what + " an endpoint of " + slice.Name, sc.engine.SetEndpointSlice(slice)
}
