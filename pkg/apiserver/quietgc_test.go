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

// A cycle runs only while the views are quiet and once the heap has spent
// half its headroom; the cycle's own effect, a heap back to what is live,
// keeps the next checks from running another.
func TestCollectWhileQuiet(t *testing.T) {
	for name, tc := range map[string]struct {
		quiet bool
		heap  heapUse
		want  int
	}{
		"quiet, past half the headroom":     {quiet: true, heap: heapUse{inUse: 130, live: 100, goal: 150}, want: 1},
		"quiet, short of half the headroom": {quiet: true, heap: heapUse{inUse: 120, live: 100, goal: 150}},
		"changing, past half the headroom":  {quiet: false, heap: heapUse{inUse: 140, live: 100, goal: 150}},
		"no goal known":                     {quiet: true, heap: heapUse{inUse: 140}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				heap, collected := tc.heap, 0
				quiet := func(d time.Duration) bool {
					if d != collectAfterQuiet {
						t.Errorf("asked for %s of quiet, want %s", d, collectAfterQuiet)
					}
					return tc.quiet
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					collectWhileQuiet(ctx, quiet, func() heapUse { return heap }, func() {
						collected++
						heap.inUse = heap.live
					})
				}()
				time.Sleep(3*collectCheckEvery + time.Millisecond)
				synctest.Wait()
				cancel()
				<-done
				if collected != tc.want {
					t.Errorf("collected %d times in three checks, want %d", collected, tc.want)
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
	if h.live == 0 || h.inUse == 0 || h.goal <= h.live {
		t.Fatalf("heap %+v: want in use, live and a goal above live", h)
	}
}
