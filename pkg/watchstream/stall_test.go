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

package watchstream

import (
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

type cutOffs struct{ n atomic.Int32 }

func (c *cutOffs) Inc() { c.n.Add(1) }

// stallingStream is a stream whose watchers are cut off after 10 s in which
// their client takes nothing, and counts the cut-offs.
func stallingStream(watcherBuffer int) (*Stream, *cutOffs) {
	s, cut := testStream(watcherBuffer), &cutOffs{}
	s.options.StallTimeout, s.options.Metrics.CutOff = 10*time.Second, cut
	return s, cut
}

func publishRange(s *Stream, from, to uint64) {
	for rv := from; rv < to; rv++ {
		object := configMap("yes")
		object.ResourceVersion = strconv.FormatUint(rv, 10)
		s.Publish(&Event{RV: rv, Object: object})
	}
}

// A client that stops reading is cut off StallTimeout after its watcher
// began to wait for it, though it lags less than WatcherBuffer behind and no
// change comes after; a client that takes an event now and then never is.
func TestAStalledClientIsCutOffWithoutMoreChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		// readEvery is how often the client takes an event; zero is never.
		readEvery time.Duration
		wantCut   bool
	}{
		{name: "never reads", wantCut: true},
		{name: "reads every 9 s", readEvery: 9 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, cut := stallingStream(100)
				w, err := s.Watch(t.Context(), everything{}, WatchOptions{SendInitialEvents: ptr.To(false)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				publishRange(s, 2, 12)
				if tc.readEvery == 0 {
					time.Sleep(9 * time.Second)
					synctest.Wait()
					if cut.n.Load() != 0 {
						t.Fatal("cut off 9 s after the client stopped reading, before StallTimeout")
					}
				}
				for range 10 {
					if tc.readEvery == 0 {
						time.Sleep(time.Second)
						continue
					}
					time.Sleep(tc.readEvery)
					if e := <-w.ResultChan(); e.Object == nil {
						t.Fatal("the watch ended")
					}
				}
				synctest.Wait()
				if got := cut.n.Load() == 1; got != tc.wantCut {
					t.Fatalf("%d cut-offs after the client read every %s, want cut off: %v", cut.n.Load(), tc.readEvery, tc.wantCut)
				}
				if tc.wantCut {
					if w.(*watcher).waiting() {
						t.Error("the cut-off watcher still holds its queue")
					}
					if e, open := <-w.ResultChan(); open {
						t.Errorf("the stalled client got %v after its cut-off, want the end of the stream", e.Object.(*corev1.ConfigMap).ResourceVersion)
					}
				}
			})
		})
	}
}

// Backlog says more events wait exactly while the watcher's queue holds
// some: the client will take another before the stream ends, so a flush can
// wait; after the last one it must not.
func TestBacklogWaitsForQueuedEventsOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testStream(100)
		ctx, backlog := WithBacklog(t.Context())
		if backlog.Waiting() {
			t.Fatal("waiting before the watch started")
		}
		w, err := s.Watch(ctx, everything{}, WatchOptions{SendInitialEvents: ptr.To(false)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		publishRange(s, 2, 5)
		synctest.Wait()
		// One event waits on its way to the client, two are queued: the
		// client takes the first two knowing that more come.
		for rv := 2; rv <= 4; rv++ {
			if want := rv < 4; backlog.Waiting() != want {
				t.Fatalf("waiting is %v as the client takes resourceVersion %d, want %v", !want, rv, want)
			}
			e := <-w.ResultChan()
			synctest.Wait()
			if got := e.Object.(*corev1.ConfigMap).ResourceVersion; got != strconv.Itoa(rv) {
				t.Fatalf("received resourceVersion %s, want %d", got, rv)
			}
		}
		if backlog.Waiting() {
			t.Error("waiting after the client took the last event")
		}
		publishRange(s, 5, 6)
		synctest.Wait()
		if backlog.Waiting() {
			t.Error("waiting with one event on its way and none queued: the client's flush after the one before is its last")
		}
	})
}
