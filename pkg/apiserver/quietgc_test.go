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
	"testing"
	"testing/synctest"
	"time"
)

// A cycle runs while the views are quiet, once the heap has spent half its
// headroom, at most once a quiet spell, and never right after another.
func TestCollectWhileQuiet(t *testing.T) {
	const q, busy = true, false
	spent, short := heapUse{inUse: 130, live: 100, goal: 150}, heapUse{inUse: 120, live: 100, goal: 150}
	for name, tc := range map[string]struct {
		quiet []bool // one a check
		heap  heapUse
		// stuck: a cycle leaves the heap past half its headroom, as when a
		// memory limit keeps the goal close to what is live.
		stuck bool
		// running: the collector starts a cycle of its own before each check.
		running bool
		want    int
	}{
		"quiet, past half the headroom":                      {quiet: []bool{q, q, q}, heap: spent, want: 1},
		"quiet, short of half the headroom":                  {quiet: []bool{q, q, q}, heap: short},
		"changing, past half the headroom":                   {quiet: []bool{busy, busy, busy}, heap: spent},
		"no goal known":                                      {quiet: []bool{q, q, q}, heap: heapUse{inUse: 140}},
		"a memory limit sets the goal close to what is live": {quiet: []bool{q, q, q}, heap: heapUse{inUse: 108, live: 100, goal: 109}},
		"a memory limit keeps the heap past half":            {quiet: []bool{q, q, q, q}, heap: spent, stuck: true, want: 1},
		"two quiet spells":                                   {quiet: []bool{q, q, busy, q, q}, heap: spent, stuck: true, want: 2},
		"the collector's own cycles, one before each check":  {quiet: []bool{q, q, q}, heap: spent, running: true},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				heap, collected, checks := tc.heap, 0, 0
				quiet := func(d time.Duration) bool {
					if d != collectAfterQuiet {
						t.Errorf("asked for %s of quiet, want %s", d, collectAfterQuiet)
					}
					checks++
					return tc.quiet[min(checks, len(tc.quiet))-1]
				}
				read := func() heapUse {
					if tc.running {
						heap.cycles++
					}
					return heap
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					collectWhileQuiet(ctx, quiet, read, func() {
						collected++
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
				if collected != tc.want {
					t.Errorf("collected %d times in %d checks, want %d", collected, checks, tc.want)
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
	h := readHeapUse()
	runtime.KeepAlive(keep)
	if h.live == 0 || h.inUse == 0 || h.goal <= h.live || h.cycles == 0 {
		t.Fatalf("heap %+v: want in use, live, a goal above live and the cycles run", h)
	}
}
