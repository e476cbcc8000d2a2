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

package viewstore

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/watchstream"
)

// edge10k is issue 12's scenario: 10,000 nodes in 1,000 units over 10 zones,
// 5,000 Services (half any-match on the unit, a quarter ordered unit, zone,
// *, a quarter unannotated) of 20 ready endpoints on random nodes in 1-3
// slices, and one unannotated Service with an endpoint on every node in
// slices of 100.
type edge10k struct {
	nodes    []*corev1.Node
	services []*corev1.Service
	slices   []*discoveryv1.EndpointSlice
}

func newEdge10k(nodes, services int) *edge10k {
	rng := rand.New(rand.NewPCG(1, 2))
	s := &edge10k{}
	for i := range nodes {
		s.nodes = append(s.nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("edge-%05d", i), Labels: map[string]string{
			"superedge.io/nodeunit": fmt.Sprintf("unit-%03d", i/10), "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i*10/nodes),
		}}})
	}
	endpoint := func(i, node int) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{
			Addresses: []string{fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)}, NodeName: ptr.To(s.nodes[node].Name),
			Zone: ptr.To(s.nodes[node].Labels["topology.kubernetes.io/zone"]), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}
	}
	addSlice := func(svc string, n int, eps []discoveryv1.Endpoint) {
		s.slices = append(s.slices, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "scale", Name: fmt.Sprintf("%s-%d", svc, n), Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}}, Endpoints: eps,
		})
	}
	address := 0
	for i := range services {
		name := fmt.Sprintf("svc-%04d", i)
		var annotations map[string]string
		switch i % 4 {
		case 0, 1:
			annotations = map[string]string{"topologyKeys": `["superedge.io/nodeunit"]`}
		case 2:
			annotations = map[string]string{"topology.gridview.io/keys": "superedge.io/nodeunit,topology.kubernetes.io/zone,*"}
		}
		s.services = append(s.services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "scale", Name: name, Annotations: annotations}})
		slices := 1 + rng.IntN(3)
		for n := range slices {
			var eps []discoveryv1.Endpoint
			for range 20 / slices {
				address++
				eps = append(eps, endpoint(address, rng.IntN(nodes)))
			}
			addSlice(name, n, eps)
		}
	}
	s.services = append(s.services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "scale", Name: "daemon"}})
	for n := range nodes / 100 {
		var eps []discoveryv1.Endpoint
		for i := range 100 {
			address++
			eps = append(eps, endpoint(address, n*100+i))
		}
		addSlice("daemon", n, eps)
	}
	return s
}

// benchServices is edge-10k's count of Services; a variable, so that a profile may take fewer.
var benchServices = 5_000

// BenchmarkIngestEdge10k writes edge-10k into a loaded, empty store one
// object at a time, as the feed does when they arrive after the start, with
// 2,000 node watchers draining their events, and reports the time, the heap
// after it and the history it holds.
func BenchmarkIngestEdge10k(b *testing.B) {
	scenario := newEdge10k(10_000, benchServices)
	for b.Loop() {
		s := New(DefaultOptions)
		s.Load(nil, nil, nil)
		for i := range 2000 {
			w, err := s.Watch(b.Context(), nodeWatch(scenario.nodes[i*5].Name), watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
			if err != nil {
				b.Fatal(err)
			}
			go func() {
				for range w.ResultChan() {
				}
			}()
		}
		start := time.Now()
		for _, n := range scenario.nodes {
			s.SetNode(n)
		}
		nodesDone := time.Since(start)
		for _, svc := range scenario.services {
			s.SetService(svc)
		}
		for _, sl := range scenario.slices {
			s.SetEndpointSlice(sl)
		}
		elapsed := time.Since(start)
		runtime.GC()
		var mem runtime.MemStats
		runtime.ReadMemStats(&mem)
		entries, weight := s.stream.Held()
		b.ReportMetric(nodesDone.Seconds(), "s-nodes")
		b.ReportMetric(elapsed.Seconds(), "s-all")
		b.ReportMetric(float64(mem.HeapInuse)/(1<<20), "MiB-heap")
		b.ReportMetric(float64(entries), "history-entries")
		b.ReportMetric(float64(weight), "history-weight")
		s.Close()
	}
}

// BenchmarkPagedListPageEdge10k serves the pages of 500 of a cluster-wide
// list of edge-10k's views one after another, as a paged list between two
// writes does: from the copy of the state the pages share, each from where
// the last one ended, most of them in the middle of a node's views.
func BenchmarkPagedListPageEdge10k(b *testing.B) {
	scenario := newEdge10k(10_000, benchServices)
	s := New(DefaultOptions)
	s.Load(scenario.nodes, scenario.services, scenario.slices)
	opts := ListOptions{Limit: 500}
	for b.Loop() {
		page, err := s.List(Filter{}, opts)
		if err != nil {
			b.Fatal(err)
		}
		opts.Continue = page.Continue
	}
}
