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
	"math/rand/v2"
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

// TestFallingNodesOnManyNodes flips the readiness and the node of single
// endpoints of Services with "*" and min-ready on 60 nodes that all carry
// every key, in many groups: an endpoint change then reaches a few groups
// and the nodes falling through (ordered) or back (any-match) on "*", which
// the engine finds among the groups short of ready endpoints.
func TestFallingNodesOnManyNodes(t *testing.T) {
	svcs := []*corev1.Service{
		withTrafficDistribution(corev1.ServiceTrafficDistributionPreferSameNode, map[string]string{topology.AnnotationMinReady: "topology.kubernetes.io/zone=3"}),
		withAnnotations(map[string]string{topology.AnnotationGridviewKeys: "kubernetes.io/hostname,unit,topology.kubernetes.io/zone,*", topology.AnnotationMinReady: "unit=2,topology.kubernetes.io/zone=3"}),
		withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["unit","topology.kubernetes.io/zone","*"]`, topology.AnnotationMinReady: "unit=2,topology.kubernetes.io/zone=3"}),
		withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["unit","*"]`, topology.AnnotationMinReady: "2"}),
		withAnnotations(map[string]string{topology.AnnotationTopologyKeys: `["unit","*"]`}),
	}
	for _, seed := range randomSeeds(1, 2) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			e, o := topology.NewEngine(), topologytest.NewOracle()
			var nodes []string
			labels := func() map[string]string {
				return map[string]string{topology.KeyZone: fmt.Sprintf("z%d", rng.IntN(10)), "unit": fmt.Sprintf("u%d", rng.IntN(20))}
			}
			for i := range 60 {
				node := fmt.Sprintf("n%02d", i)
				nodes = append(nodes, node)
				o.Nodes[node] = labels()
				e.SetNode(node, o.Nodes[node])
			}
			for i, svc := range svcs {
				svc = svc.DeepCopy()
				svc.Namespace, svc.Name = "demo", fmt.Sprintf("s%d", i)
				o.Services[types.NamespacedName{Namespace: "demo", Name: svc.Name}] = svc
				e.SetService(svc)
				for j := range 2 {
					slice := &discoveryv1.EndpointSlice{
						ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: fmt.Sprintf("%s-%d", svc.Name, j), Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
						AddressType: discoveryv1.AddressTypeIPv4,
					}
					for k := range 12 {
						slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
							Addresses: []string{fmt.Sprintf("10.%d.%d.%d", i, j, k)}, NodeName: ptr.To(oneOf(rng, nodes...)),
							Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(rng.IntN(3) > 0)},
						})
					}
					o.Slices[types.NamespacedName{Namespace: "demo", Name: slice.Name}] = slice
					e.SetEndpointSlice(slice)
				}
			}
			l := newLive(e, o)
			for step := range 250 {
				var what string
				var changes []topology.SliceChange
				if rng.IntN(6) == 0 {
					node := oneOf(rng, nodes...)
					o.Nodes[node] = labels()
					what, changes = fmt.Sprintf("set node %s %v", node, o.Nodes[node]), e.SetNode(node, o.Nodes[node])
				} else {
					what, changes, _ = editEndpoint(rng, e, o, nodes)
				}
				l.check(t, fmt.Sprintf("step %d, %s", step, what), changes)
				if step%100 > 0 {
					continue
				}
				for key, view := range o.AllViews() {
					if got, ok := e.View(key.Node, key.Service); !ok || !apiequality.Semantic.DeepEqual(got, view) {
						t.Fatalf("step %d, %s: view %v\n got %+v\nwant %+v", step, what, key, got, view)
					}
				}
			}
		})
	}
}
