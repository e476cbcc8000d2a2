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
// on changes, and over a large fleet's heap a cycle takes a good part of a
// second of wall time, in which the nodes the change reaches wait on
// assists and on the cores the cycle takes. Once the last change has been handed over (no
// view changed and no watcher got an event for collectAfterQuiet) and a
// cycle is due soon (dueSoon), a cycle run then fills the gap before the
// next change instead, and starts early enough to need no assists. One
// such cycle at most per quiet spell, and none when a memory limit
// (GOMEMLIMIT) sets the goal close to what is live: any allocation would
// then call for another, back to back.
const (
	// Long enough that the fan-out of a change is over (its events
	// handed over back to back), short enough that a cycle fits before the
	// next change when changes come every half
	// second or more, as under steady churn or a list in a loop.
	collectAfterQuiet = 50 * time.Millisecond
	collectCheckEvery = 10 * time.Millisecond
	// sweepAfterCycle is how long after a cycle ends the heap's figures
	// are not read for one: the dead objects it found count as in use
	// until they are swept.
	sweepAfterCycle = 250 * time.Millisecond
)

// heapUse is the heap in use, what was live after the last cycle, the size
// the collector lets it reach before the next, and the cycles run so far.
type heapUse struct{ inUse, live, goal, cycles uint64 }

// dueSoon says whether the heap has grown past half the way from what was
// live to the goal, but not so far that the collector may have started a
// cycle already: it never does before 45/64 of the way (the Go runtime's
// minimum trigger, mgcpacer.go), and runtime.GC during a cycle would wait
// for it and then run another. And the goal must leave a tenth of what is
// live or more to grow into: a goal closer than that is a memory limit's.
func (h heapUse) dueSoon() bool {
	if h.goal <= h.live || h.goal-h.live < h.live/10 {
		return false
	}
	spent, headroom := h.inUse-min(h.inUse, h.live), h.goal-h.live
	return spent > headroom/2 && spent < headroom*5/8
}

// heapReader returns a reader of the process's heapUse from
// runtime/metrics. A sample this runtime does not know reads 0: with no
// goal, dueSoon is never true.
func heapReader() func() heapUse {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	value := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	return func() heapUse {
		metrics.Read(samples)
		return heapUse{inUse: value(0), live: value(1), goal: value(2), cycles: value(3)}
	}
}

// collectWhileQuiet runs a collection cycle once in each spell the views
// are quiet for collectAfterQuiet, when one is due soon, until ctx is done.
// It reads the heap at every check, to see cycles end; for sweepAfterCycle
// after one has, it collects nothing.
func collectWhileQuiet(ctx context.Context, quiet func(time.Duration) bool, heap func() heapUse, collect func()) {
	ticker := time.NewTicker(collectCheckEvery)
	defer ticker.Stop()
	var collected bool
	var cycleSeen time.Time
	cycles := heap().cycles
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		h := heap()
		if h.cycles != cycles {
			cycles, cycleSeen = h.cycles, time.Now()
		}
		if !quiet(collectAfterQuiet) {
			collected = false
			continue
		}
		if collected || time.Since(cycleSeen) < sweepAfterCycle || !h.dueSoon() {
			continue
		}
		collect()
		collected = true
		quietCollections.Inc()
		// The cycle's own end is seen at the next check.
	}
}

// collectWhileViewsQuiet is collectWhileQuiet on the process's own heap.
func collectWhileViewsQuiet(ctx context.Context, quiet func(time.Duration) bool) {
	collectWhileQuiet(ctx, quiet, heapReader(), runtime.GC)
}
