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

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	topologyapi "github.com/gridview/gridview/apis/topology"
	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	topologyinformers "github.com/gridview/gridview/generated/informers/externalversions"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
	"github.com/gridview/gridview/test/localcluster"
)

// soakInformer is one node's informer on its NodeEndpoints, as a wrapper
// would run it.
type soakInformer struct {
	node     string
	informer cache.SharedIndexInformer

	mu        sync.Mutex
	events    int
	latencies []time.Duration
	seen      map[string]bool // markers already timed
}

// Watch consistency under churn: 200 field-selected informers, one per node,
// through a seeded stream of relabels, annotation and endpoint changes. At
// checkpoints every informer equals a fresh list and the brute-force oracle's
// views; when the informers leave, so do the server's watchers and
// goroutines.
func TestSoakNodeEndpointsInformersStayConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak churns for GRIDVIEW_SOAK_DURATION: make test-all and make soak run it")
	}
	s := newSoakCluster(t)
	baseline := gridviewStats(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	informers := make([]*soakInformer, soakNodes)
	var stops []func()
	for i := range soakNodes {
		si := &soakInformer{node: s.node(i), seen: map[string]bool{}}
		factory := topologyinformers.NewSharedInformerFactoryWithOptions(gridview, 0, topologyinformers.WithNamespace(s.ns),
			topologyinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "nodeName=" + si.node }))
		si.informer = factory.Topology().V1alpha1().NodeEndpoints().Informer()
		if _, err := si.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { si.observe(obj, &s.markers) },
			UpdateFunc: func(_, obj any) { si.observe(obj, &s.markers) },
			DeleteFunc: func(any) { si.count() },
		}); err != nil {
			t.Fatal(err)
		}
		informerCtx, stop := context.WithCancel(ctx)
		stops = append(stops, stop)
		factory.Start(informerCtx.Done())
		informers[i] = si
	}
	for _, si := range informers {
		if !cache.WaitForCacheSync(ctx.Done(), si.informer.HasSynced) {
			t.Fatalf("the informer of %s did not sync", si.node)
		}
	}

	duration := soakDuration(t)
	start, changes := time.Now(), 0
	for checkpoint := 1; checkpoint <= 3; checkpoint++ {
		for time.Since(start) < duration*time.Duration(checkpoint)/3 {
			s.change(ctx)
			changes++
		}
		checkConverged(t, s, informers, fmt.Sprintf("checkpoint %d after %d changes", checkpoint, changes))
	}

	events, latencies := 0, []time.Duration{}
	for _, si := range informers {
		si.mu.Lock()
		events += si.events
		latencies = append(latencies, si.latencies...)
		si.mu.Unlock()
	}
	slices.Sort(latencies)
	after := gridviewStats(t)
	if len(latencies) == 0 {
		t.Fatal("no marker reached any informer")
	}
	t.Logf("soak: %d informers, %d changes in %s, %d events delivered; delivery latency p50 %s, p99 %s (%d samples); "+
		"gridview-apiserver CPU %.1f s, RSS %.0f MiB (%.0f MiB before), goroutines %v (%v before)",
		soakNodes, changes, duration, events, latencies[len(latencies)/2], latencies[len(latencies)*99/100], len(latencies),
		after["process_cpu_seconds_total"]-baseline["process_cpu_seconds_total"], after["process_resident_memory_bytes"]/(1<<20),
		baseline["process_resident_memory_bytes"]/(1<<20), after["go_goroutines"], baseline["go_goroutines"])

	// The watchers leave: the server's watchers and goroutines come back.
	for _, stop := range stops {
		stop()
	}
	localcluster.Eventually(t, 30*time.Second, "the server's watchers and goroutines back to their baseline", func(context.Context) error {
		now := gridviewStats(t)
		if now["gridview_nodeendpoints_watchers"] > baseline["gridview_nodeendpoints_watchers"] ||
			now["go_goroutines"] > baseline["go_goroutines"]+20 {
			return fmt.Errorf("watchers %v (baseline %v), goroutines %v (baseline %v)", now["gridview_nodeendpoints_watchers"],
				baseline["gridview_nodeendpoints_watchers"], now["go_goroutines"], baseline["go_goroutines"])
		}
		return nil
	})
}

func (si *soakInformer) count() {
	si.mu.Lock()
	defer si.mu.Unlock()
	si.events++
}

// observe counts an event and times the first sight of each marker.
func (si *soakInformer) observe(obj any, markers *markerTimes) {
	received := time.Now()
	view := obj.(*topologyv1alpha1.NodeEndpoints)
	si.mu.Lock()
	defer si.mu.Unlock()
	si.events++
	marker := view.Labels[markerLabel]
	if marker == "" || si.seen[marker] {
		return
	}
	si.seen[marker] = true
	if written, ok := markers.get(marker); ok {
		si.latencies = append(si.latencies, received.Sub(written))
	}
}

// checkConverged waits until every informer equals a fresh list of its
// node's views, then checks those against the brute-force oracle's views of
// the cluster's Nodes, Services and EndpointSlices.
func checkConverged(t *testing.T, s *soakCluster, informers []*soakInformer, when string) {
	t.Helper()
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.ns)
	// Not the poll's ctx: a list cut short by its deadline would hide the
	// last difference seen.
	ctx := context.Background()
	localcluster.Eventually(t, 60*time.Second, "every informer equal to a fresh list, "+when, func(context.Context) error {
		for _, si := range informers {
			list, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + si.node})
			if err != nil {
				return err
			}
			want := map[string]string{}
			for i := range list.Items {
				want[list.Items[i].Name] = summary(&list.Items[i])
			}
			got := map[string]string{}
			for _, obj := range si.informer.GetStore().List() {
				view := obj.(*topologyv1alpha1.NodeEndpoints)
				got[view.Name] = summary(view)
			}
			if !maps.Equal(got, want) {
				return fmt.Errorf("%s: the informer differs from a list:\n%s", si.node, viewDiff(got, want))
			}
		}
		return nil
	})

	// Every view the oracle has of a node, and no other: a slice the node
	// routes to no endpoint of has none.
	wantViews := map[string]map[string]string{}
	for key, view := range freshOracle(t, s.ns).AllSliceViews() {
		if key.Slice.Namespace != s.ns {
			continue
		}
		if wantViews[key.Node] == nil {
			wantViews[key.Node] = map[string]string{}
		}
		wantViews[key.Node][topology.Name(key.Node, key.Slice.Name)] = fmt.Sprintf("%s %s %q %v",
			view.Service.Name, view.Topology.Mode, view.Topology.MatchedKey, sliceAddresses(&view.Slice))
	}
	for _, si := range informers {
		got := map[string]string{}
		for _, obj := range si.informer.GetStore().List() {
			view := obj.(*topologyv1alpha1.NodeEndpoints)
			got[view.Name] = fmt.Sprintf("%s %s %q %v", view.ServiceName, view.Topology.Mode, view.Topology.MatchedKey, addresses(view))
		}
		if want := wantViews[si.node]; !maps.Equal(got, want) {
			t.Fatalf("%s: %s's views differ from the oracle's:\ngot  %v\nwant %v", when, si.node, got, want)
		}
	}
}

// freshOracle reads the cluster's Nodes and ns's Services and EndpointSlices
// afresh into the brute-force oracle: the reference the server's views must
// equal.
func freshOracle(t *testing.T, ns string) *topologytest.Oracle {
	t.Helper()
	ctx := context.Background()
	nodes, err := kubeClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	services, err := kubeClient.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	endpointSlices, err := kubeClient.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oracle := topologytest.NewOracle()
	for i := range nodes.Items {
		oracle.Nodes[nodes.Items[i].Name] = nodes.Items[i].Labels
	}
	for i := range services.Items {
		svc := &services.Items[i]
		oracle.Services[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}] = svc
	}
	for i := range endpointSlices.Items {
		slice := &endpointSlices.Items[i]
		oracle.Slices[types.NamespacedName{Namespace: slice.Namespace, Name: slice.Name}] = slice
	}
	return oracle
}

// sliceAddresses lists the endpoint addresses of one of the oracle's
// slices, sorted, as addresses does of a NodeEndpoints.
func sliceAddresses(slice *topologyapi.NodeEndpointSlice) []string {
	var out []string
	for _, ep := range slice.Endpoints {
		out = append(out, ep.Addresses...)
	}
	slices.Sort(out)
	return out
}

// gridviewStats reads gauges and counters of gridview-apiserver's /metrics.
func gridviewStats(t *testing.T) map[string]float64 {
	t.Helper()
	body, err := get(context.Background(), t, cluster.GridviewConfig(), "/metrics", nil)
	if err != nil {
		t.Fatalf("reading gridview-apiserver's metrics: %v", err)
	}
	stats := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || strings.Contains(name, "{") {
			continue
		}
		if f, err := strconv.ParseFloat(value, 64); err == nil {
			stats[name] = f
		}
	}
	return stats
}
