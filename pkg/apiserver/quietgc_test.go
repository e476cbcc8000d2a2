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
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// A cycle runs while the views are quiet, once one is due soon, at most
// once a quiet spell, and not while the heap's figures still count what the
// last cycle found dead.
func TestCollectWhileQuiet(t *testing.T) {
	const q, busy = true, false
	spells := func(spells ...[]bool) []bool { return slices.Concat(spells...) }
	quietFor := func(checks int) []bool { return slices.Repeat([]bool{q}, checks) }
	busyFor := func(checks int) []bool { return slices.Repeat([]bool{busy}, checks) }
	sweep := int(sweepAfterCycle / collectCheckEvery)
	due, short := heapUse{inUse: 130, live: 100, goal: 150}, heapUse{inUse: 120, live: 100, goal: 150}
	for name, tc := range map[string]struct {
		quiet []bool // one a check
		heap  heapUse
		// stuck: a cycle leaves the heap where it was, as when a memory
		// limit keeps the goal close to what is live.
		stuck bool
		// cycleEnds: a cycle of the runtime's ends before that check.
		cycleEnds int
		// running: the collector ends a cycle of its own before each check.
		running bool
		want    []int // the checks that collect, from 1
	}{
		"quiet, due soon":                                    {quiet: quietFor(3), heap: due, want: []int{1}},
		"quiet, short of half the headroom":                  {quiet: quietFor(3), heap: short},
		"quiet, past the collector's own trigger":            {quiet: quietFor(3), heap: heapUse{inUse: 136, live: 100, goal: 150}},
		"changing, due soon":                                 {quiet: busyFor(3), heap: due},
		"no goal known":                                      {quiet: quietFor(3), heap: heapUse{inUse: 140}},
		"a memory limit sets the goal close to what is live": {quiet: quietFor(3), heap: heapUse{inUse: 1045, live: 1000, goal: 1080}},
		"a memory limit keeps the heap due":                  {quiet: quietFor(sweep + 5), heap: due, stuck: true, want: []int{1}},
		"two quiet spells": {quiet: spells(quietFor(1), busyFor(sweep), quietFor(2)), heap: due, stuck: true,
			want: []int{1, sweep + 2}},
		"a cycle just ended": {quiet: quietFor(sweep + 5), heap: due, cycleEnds: 1, want: []int{sweep + 1}},
		"the collector's own cycles, one before each check": {quiet: quietFor(3), heap: due, running: true},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				heap, checks := tc.heap, 0
				var collected []int
				quiet := func(d time.Duration) bool {
					if d != collectAfterQuiet {
						t.Errorf("asked for %s of quiet, want %s", d, collectAfterQuiet)
					}
					checks++
					return tc.quiet[min(checks, len(tc.quiet))-1]
				}
				reads := 0
				read := func() heapUse {
					// The first read is at the start, before the first check.
					if reads++; tc.running && reads > 1 || reads == tc.cycleEnds+1 {
						heap.cycles++
					}
					return heap
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					collectWhileQuiet(ctx, quiet, read, func() {
						collected = append(collected, checks)
						heap.cycles++
						if !tc.stuck {
							heap.inUse = heap.live
						}
					})
				}()
				time.Sleep(time.Duration(len(tc.quiet))*collectCheckEvery + time.Millisecond)
				synctest.Wait()
				cancel()
				<-done
				if checks != len(tc.quiet) {
					t.Fatalf("%d checks, want %d", checks, len(tc.quiet))
				}
				if !slices.Equal(collected, tc.want) {
					t.Errorf("collected at checks %v of %d, want %v", collected, checks, tc.want)
				}
			})
		})
	}
}

// The runtime answers every sample the check reads: a name it does not know
// would read as an empty heap, and the check would never collect.
func TestReadHeapUse(t *testing.T) {
	runtime.GC()
	keep := make([][]byte, 0, 64)
	for range 64 {
		keep = append(keep, make([]byte, 64<<10))
	}
	h := heapReader()()
	runtime.KeepAlive(keep)
	if h.live == 0 || h.inUse == 0 || h.goal <= h.live || h.cycles == 0 {
		t.Fatalf("heap %+v: want in use, live, a goal above live and the cycles run", h)
	}
}
