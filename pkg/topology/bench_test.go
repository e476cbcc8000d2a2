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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/topology"
)

// edge10k is the scenario of the performance targets: 10,000 nodes in 1,000
// grid units (and OpenYurt pools) over 10 zones; 5,000 Services (50%
// any-match on the unit, 25% ordered unit,zone,*, every other one with
// min-ready 2, and 25% in fifths: plain, PreferSameZone, PreferSameNode with
// min-ready 2, OpenYurt's nodepool, and plain in Namespace grid, whose
// default is unit,topology.kubernetes.io/zone,*) with 20 endpoints each in
// 1-3 slices on random nodes. Generated from a fixed seed.
type edge10k struct {
	nodes      map[string]map[string]string
	namespaces map[string]map[string]string
	services   []*corev1.Service
	slices     []*discoveryv1.EndpointSlice
}

func newEdge10k() *edge10k {
	rng := rand.New(rand.NewPCG(10, 10))
	s := &edge10k{nodes: map[string]map[string]string{}, namespaces: map[string]map[string]string{
		"grid": {topology.AnnotationGridviewKeys: "unit,topology.kubernetes.io/zone,*"},
	}}
	for i := range 10000 {
		s.nodes[fmt.Sprintf("node-%05d", i)] = unitLabels(i / 10)
	}
	for i := range 5000 {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("svc-%04d", i)}}
		switch i % 4 {
		case 0, 1:
			svc.Annotations = map[string]string{topology.AnnotationTopologyKeys: `["unit"]`}
		case 2:
			svc.Annotations = map[string]string{topology.AnnotationGridviewKeys: "unit,zone,*"}
			if i/4%2 == 1 {
				svc.Annotations[topology.AnnotationMinReady] = "2"
			}
		default:
			newRule(svc, i/4%5)
		}
		s.services = append(s.services, svc)
		slices := 1 + rng.IntN(3)
		for j := range slices {
			slice := &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Namespace: svc.Namespace, Name: fmt.Sprintf("%s-%d", svc.Name, j), Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
			}
			for k := j; k < 20; k += slices {
				slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
					Addresses: []string{fmt.Sprintf("10.%d.%d.%d", i/256, i%256, k)},
					NodeName:  ptr.To(fmt.Sprintf("node-%05d", rng.IntN(10000))),
				})
			}
			s.slices = append(s.slices, slice)
		}
	}
	return s
}

// unitLabels are the labels of a node of a unit: the unit, its pool, and
// the zone under two keys.
func unitLabels(unit int) map[string]string {
	name, zone := fmt.Sprintf("unit-%04d", unit), fmt.Sprintf("zone-%d", unit%10)
	return map[string]string{"unit": name, "zone": zone, topology.KeyNodePool: name, topology.KeyZone: zone}
}

// newRule gives one of the rules of issue 13 to a Service: none, two of
// trafficDistribution's, OpenYurt's, or its Namespace's default.
func newRule(svc *corev1.Service, n int) {
	switch n {
	case 1:
		svc.Spec.TrafficDistribution = ptr.To(corev1.ServiceTrafficDistributionPreferSameZone)
	case 2:
		svc.Spec.TrafficDistribution = ptr.To(corev1.ServiceTrafficDistributionPreferSameNode)
		svc.Annotations = map[string]string{topology.AnnotationMinReady: "2"}
	case 3:
		svc.Annotations = map[string]string{topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}
	case 4:
		svc.Namespace = "grid"
	}
}

func (s *edge10k) slice(name string) *discoveryv1.EndpointSlice {
	for _, slice := range s.slices {
		if slice.Name == name {
			return slice
		}
	}
	panic("no EndpointSlice " + name)
}

func (s *edge10k) engine() *topology.Engine {
	nodes := make([]*corev1.Node, 0, len(s.nodes))
	for name, labels := range s.nodes {
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	}
	e := topology.NewEngine()
	for name, annotations := range s.namespaces {
		e.SetNamespace(name, annotations)
	}
	e.Load(nodes, s.services, s.slices)
	return e
}

func BenchmarkEdge10kBuild(b *testing.B) {
	s := newEdge10k()
	for b.Loop() {
		s.engine()
	}
}

func BenchmarkEdge10kEndpointAdded(b *testing.B) {
	s := newEdge10k()
	e := s.engine()
	// svc-0000 is any-match on the unit; svc-0002 is ordered unit,zone,*, and
	// the endpoint on node-00042 joins the zone tier that about a thousand
	// nodes of zone-4 choose; svc-0011 is PreferSameNode with min-ready 2.
	for _, tc := range []struct {
		name  string
		slice *discoveryv1.EndpointSlice
	}{{"any-match", s.slice("svc-0000-0")}, {"ordered", s.slice("svc-0002-0")}, {"native", s.slice("svc-0011-0")}} {
		b.Run(tc.name, func(b *testing.B) {
			grown := tc.slice.DeepCopy()
			grown.Endpoints = append(grown.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.255.0.1"}, NodeName: ptr.To("node-00042")})
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					e.SetEndpointSlice(grown)
				} else {
					e.SetEndpointSlice(tc.slice)
				}
			}
		})
	}
}

func BenchmarkEdge10kNodeMoved(b *testing.B) {
	s := newEdge10k()
	e := s.engine()
	labels, other := s.nodes["node-00042"], unitLabels(999)
	next := func() map[string]string {
		labels, other = other, labels
		return labels
	}
	b.Run("every view", func(b *testing.B) {
		for b.Loop() {
			e.SetNode("node-00042", next())
		}
	})
	// What the nodes that see the moved node's endpoints wait for.
	b.Run("other nodes' views", func(b *testing.B) {
		for b.Loop() {
			_, ownViews := e.SetNodeInStages("node-00042", next())
			b.StopTimer()
			ownViews()
			b.StartTimer()
		}
	})
}

// BenchmarkEdge10kNamespaceDefaultChanged re-prunes the 250 Services that
// follow Namespace grid's default, alternately to the zone and back.
func BenchmarkEdge10kNamespaceDefaultChanged(b *testing.B) {
	s := newEdge10k()
	e := s.engine()
	zone := map[string]string{topology.AnnotationGridviewKeys: "topology.kubernetes.io/zone,*"}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			e.SetNamespace("grid", zone)
		} else {
			e.SetNamespace("grid", s.namespaces["grid"])
		}
	}
}

func BenchmarkEdge10kAnnotationChanged(b *testing.B) {
	s := newEdge10k()
	e := s.engine()
	svc := s.services[0].DeepCopy()
	ordered := svc.DeepCopy()
	ordered.Annotations = map[string]string{topology.AnnotationGridviewKeys: "unit,zone,*"}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			e.SetService(ordered)
		} else {
			e.SetService(svc)
		}
	}
}

// BenchmarkEdge10kEndpointAddedAnyMatchFallback is EndpointAdded for an
// any-match Service that lists "*" with min-ready 2: nearly every node, in
// a unit short of two ready endpoints, gets every endpoint, so every change
// of one reaches them.
func BenchmarkEdge10kEndpointAddedAnyMatchFallback(b *testing.B) {
	s := newEdge10k()
	e := s.engine()
	svc := s.services[1].DeepCopy()
	svc.Annotations = map[string]string{topology.AnnotationTopologyKeys: `["unit","*"]`, topology.AnnotationMinReady: "2"}
	e.SetService(svc)
	slice := s.slice("svc-0001-0")
	grown := slice.DeepCopy()
	grown.Endpoints = append(grown.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.255.0.1"}, NodeName: ptr.To("node-00042")})
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			e.SetEndpointSlice(grown)
		} else {
			e.SetEndpointSlice(slice)
		}
	}
}
