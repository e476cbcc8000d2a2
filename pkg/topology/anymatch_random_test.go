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

	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

// manyRandomNodes replace randomNodes in the random tests on many nodes.
var manyRandomNodes = func() []string {
	nodes := make([]string, 48)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("n-%02d", i)
	}
	return nodes
}()

// TestRandomChangesOnManyNodes is TestRandomChangesMatchTheOracle on 48
// nodes, with few label values and mostly endpoint edits: on six nodes
// almost every change reaches more than half of them, which puts every node
// in scope and leaves the engine's narrower scopes (groups, nodes falling
// through or back on "*") unchecked. SEEDS sets how many seeds.
func TestRandomChangesOnManyNodes(t *testing.T) {
	saved := randomNodes
	defer func() { randomNodes = saved }()
	randomNodes = manyRandomNodes
	for _, seed := range randomSeeds(200, 2) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed))
			engine, model := topology.NewEngine(), topologytest.NewOracle()
			for _, node := range randomNodes {
				labels := map[string]string{"unit": oneOf(rng, "a", "b", "c"), "zone": oneOf(rng, "a", "b"), topology.KeyZone: oneOf(rng, "a", "b"), topology.KeyNodePool: "a"}
				model.Nodes[node] = labels
				engine.SetNode(node, labels)
			}
			l := newLive(engine, model)
			for step := range 1500 {
				what, changes := manyNodesChange(rng, engine, model)
				l.check(t, fmt.Sprintf("step %d, %s", step, what), changes)
				if step%50 > 0 {
					continue
				}
				for key, view := range model.AllViews() {
					if got, ok := engine.View(key.Node, key.Service); !ok || !apiequality.Semantic.DeepEqual(got, view) {
						t.Fatalf("step %d, %s: view %v\n got %+v\nwant %+v", step, what, key, got, view)
					}
				}
			}
		})
	}
}

// fewLabelValues returns random labels of a node, each of the keys the
// random Services read but rarely missing, mostly "a" or "b".
func fewLabelValues(rng *rand.Rand) map[string]string {
	labels := map[string]string{}
	for _, key := range randomLabelKeys {
		if rng.IntN(20) > 0 {
			labels[key] = oneOf(rng, "a", "b", "a", "b", "c", "")
		}
	}
	return labels
}

// manyNodesChange relabels a node with few values, edits one endpoint of a
// slice (its readiness or its node), sets a slice with more endpoints, or
// makes any change randomChange makes.
func manyNodesChange(rng *rand.Rand, engine *topology.Engine, model *topologytest.Oracle) (string, []topology.SliceChange) {
	switch rng.IntN(10) {
	case 0, 1:
		name, labels := oneOf(rng, randomNodes...), fewLabelValues(rng)
		model.Nodes[name] = labels
		return fmt.Sprintf("set node %s %v", name, labels), engine.SetNode(name, labels)
	case 2, 3, 4:
		if what, changes, ok := editEndpoint(rng, engine, model, randomNodes); ok {
			return what, changes
		}
	case 5, 6:
		slice := randomSlice(rng)
		for j := range rng.IntN(6) {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
				Addresses:  []string{fmt.Sprintf("10.1.%d.%d", rng.IntN(4), j)},
				NodeName:   ptr.To(oneOf(rng, randomNodes...)),
				Conditions: discoveryv1.EndpointConditions{Ready: oneOf(rng, nil, ptr.To(true), ptr.To(false))},
			})
		}
		model.Slices[types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}] = slice
		return fmt.Sprintf("set slice %s/%s", slice.Namespace, slice.Name), engine.SetEndpointSlice(slice)
	}
	return randomChange(rng, engine, model)
}

// editEndpoint moves one endpoint of a random slice to one of nodes or sets
// its readiness, in the engine and the model; false when the slice picked
// has none.
func editEndpoint(rng *rand.Rand, engine *topology.Engine, model *topologytest.Oracle, nodes []string) (string, []topology.SliceChange, bool) {
	keys := slices.SortedFunc(maps.Keys(model.Slices), topology.CompareServices)
	if len(keys) == 0 {
		return "", nil, false
	}
	slice := model.Slices[oneOf(rng, keys...)].DeepCopy()
	if len(slice.Endpoints) == 0 {
		return "", nil, false
	}
	i := rng.IntN(len(slice.Endpoints))
	if rng.IntN(3) == 0 {
		slice.Endpoints[i].NodeName = ptr.To(oneOf(rng, nodes...))
	} else {
		slice.Endpoints[i].Conditions.Ready = oneOf(rng, nil, ptr.To(true), ptr.To(false))
	}
	model.Slices[types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}] = slice
	return fmt.Sprintf("edit slice %s/%s endpoint %d", slice.Namespace, slice.Name, i), engine.SetEndpointSlice(slice), true
}
