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

package wrapper

import (
	"context"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

// BenchmarkWrapperEdge10k builds the state of one node of the edge-10k
// scenario (node edge-00000: every Service, its pruned views) the way the
// wrapper does, through its informers from an upstream answering as the
// servers do, and reports what the node keeps: the heap in use after GC that
// the wrapper added, the bytes of one cache write and the upstream bytes
// received. docs/performance.md records the figures.
func BenchmarkWrapperEdge10k(b *testing.B) {
	scenario := newNodeScenario(0)
	fake := newFakeUpstream(scenario.objectsAt)
	server := httptest.NewServer(fake)
	defer server.Close()
	RegisterMetrics()
	var heapInuse, heapLive, heapChurned, cacheBytes, upstreamBytes float64
	var cacheWrite time.Duration
	for b.Loop() {
		fake.sent.Store(0)
		before := memStats()
		ctx, cancel := context.WithCancel(b.Context())
		state := NewState(1, nil)
		u, err := NewUpstream(&rest.Config{Host: server.URL, QPS: -1}, scenario.node, state, nil)
		if err != nil {
			b.Fatal(err)
		}
		go u.sync(ctx)
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
			return state.Synced(), nil
		}); err != nil {
			b.Fatal(err)
		}
		after := memStats()
		heapInuse, heapLive = float64(after.HeapInuse-before.HeapInuse), float64(after.HeapAlloc-before.HeapAlloc)
		upstreamBytes = float64(fake.sent.Load())
		if path := os.Getenv("WRAPPER_HEAP_PROFILE"); path != "" {
			writeHeapProfile(b, path)
		}

		dir := b.TempDir()
		start := time.Now()
		rv, objects := state.storedSnapshot()
		size, err := saveStored(dir, scenario.node, rv, objects)
		if err != nil {
			b.Fatal(err)
		}
		cacheWrite, cacheBytes = time.Since(start), float64(size)
		if _, loaded, ok := LoadCache(dir, scenario.node); !ok || len(loaded) != len(objects) {
			b.Fatalf("the cache written does not load: %d of %d objects", len(loaded), len(objects))
		}
		// A thousand flips of one endpoint in the daemon Service's slices
		// of 100: the history keeps the versions they replace.
		churn(b, u, scenario)
		heapChurned = float64(memStats().HeapAlloc - before.HeapAlloc)
		cancel()
		runtime.KeepAlive(u)
	}
	b.ReportMetric(heapInuse/(1<<20), "heap-inuse-MiB")
	b.ReportMetric(heapLive/(1<<20), "heap-live-MiB")
	b.ReportMetric(heapChurned/(1<<20), "heap-live-after-churn-MiB")
	b.ReportMetric(cacheBytes, "cache-bytes")
	b.ReportMetric(float64(cacheWrite.Milliseconds()), "cache-write-ms")
	b.ReportMetric(upstreamBytes, "upstream-bytes")
	b.ReportMetric(float64(len(scenario.views)), "views")
	b.ReportMetric(float64(scenario.endpoints), "endpoints")
}

// churn flips the readiness of one endpoint of the daemon Service's slices
// a thousand times, as upstream events.
func churn(b *testing.B, u *Upstream, scenario *nodeScenario) {
	var daemon []*topologyv1alpha1.NodeEndpoints
	for _, obj := range scenario.views {
		if view := obj.(*topologyv1alpha1.NodeEndpoints); view.ServiceName == "daemon" {
			daemon = append(daemon, view)
		}
	}
	for i := range historySize {
		view := daemon[i%len(daemon)].DeepCopy()
		ep := &view.Slice.Endpoints[i%len(view.Slice.Endpoints)]
		ep.Conditions.Ready = ptr.To(i/len(daemon)%2 == 1)
		record, err := recordView(view)
		if err != nil {
			b.Fatal(err)
		}
		u.setView(record)
	}
}

// writeHeapProfile saves what the heap holds, for `go tool pprof`.
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// memStats reads the heap after two collections, so that what is left is
// what is reachable.
func memStats() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
