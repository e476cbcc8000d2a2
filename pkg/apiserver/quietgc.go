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

package apiserver

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// The collector starts a cycle once allocations reach its goal, and they
// peak while a change is handed to the watchers: left alone, cycles land
// on changes, and at edge-10k a cycle takes a third of a second or more of
// wall time, in which the nodes the change reaches wait on assists and on
// the cores the cycle takes. Once the last change has been handed over (no
// view changed and no watcher got an event for collectAfterQuiet) and the
// heap has spent half its headroom, a cycle run then fills the gap before
// the next change instead, and starts early enough to need no assists. One
// such cycle at most per quiet spell, and none when a memory limit
// (GOMEMLIMIT) sets the goal close to what is live: any allocation would
// then call for another, back to back.
const (
	// Long enough that the fan-out of a change is over (its events
	// handed over back to back), short enough that a cycle of a third of a
	// second fits before the next change when changes come every half
	// second or more, as under steady churn or a list in a loop.
	collectAfterQuiet = 50 * time.Millisecond
	collectCheckEvery = 10 * time.Millisecond
)

// heapUse is the heap in use, what was live after the last cycle, the size
// the collector lets it reach before the next, and the cycles run so far.
type heapUse struct{ inUse, live, goal, cycles uint64 }

// halfSpent says whether the heap has grown past half the way from what
// was live to the goal, and the goal leaves a tenth of what is live or more
// to grow into: a goal closer than that is a memory limit's.
func (h heapUse) halfSpent() bool {
	return h.goal > h.live && h.goal-h.live >= h.live/10 && h.inUse > h.live+(h.goal-h.live)/2
}

// readHeapUse reads the process's heapUse from runtime/metrics. A sample
// this runtime does not know reads 0: with no goal, halfSpent is never true.
func readHeapUse() heapUse {
	var h heapUse
	into := map[string]*uint64{
		"/memory/classes/heap/objects:bytes": &h.inUse,
		"/gc/heap/live:bytes":                &h.live,
		"/gc/heap/goal:bytes":                &h.goal,
		"/gc/cycles/total:gc-cycles":         &h.cycles,
	}
	samples := make([]metrics.Sample, 0, len(into))
	for name := range into {
		samples = append(samples, metrics.Sample{Name: name})
	}
	metrics.Read(samples)
	for _, sample := range samples {
		if sample.Value.Kind() == metrics.KindUint64 {
			*into[sample.Name] = sample.Value.Uint64()
		}
	}
	return h
}

// collectWhileQuiet runs a collection cycle once in each spell the views
// are quiet for collectAfterQuiet, when the heap has spent half its
// headroom, until ctx is done. A check right after a cycle waits for the
// next: the dead objects that cycle found may not be swept yet, and count
// as in use.
func collectWhileQuiet(ctx context.Context, quiet func(time.Duration) bool, heap func() heapUse, collect func()) {
	ticker := time.NewTicker(collectCheckEvery)
	defer ticker.Stop()
	var collected bool
	var cycles uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if !quiet(collectAfterQuiet) {
			collected = false
			continue
		}
		h := heap()
		cycleEnded := h.cycles != cycles
		cycles = h.cycles
		if collected || cycleEnded || !h.halfSpent() {
			continue
		}
		collect()
		collected = true
		quietCollections.Inc()
	}
}

// collectWhileViewsQuiet is collectWhileQuiet on the process's own heap.
func collectWhileViewsQuiet(ctx context.Context, quiet func(time.Duration) bool) {
	collectWhileQuiet(ctx, quiet, readHeapUse, runtime.GC)
}
