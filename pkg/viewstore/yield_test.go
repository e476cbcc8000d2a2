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
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/watchstream"
)

// A list that does not select one node starts once no watcher has handed
// its client an event for feedQuiet, and waits at most feedYieldLimit while
// the feed stays busy; a node's own list and a watcher whose client stopped
// reading never wait or hold it back.
func TestListsYieldToTheFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(testOptions)
		plain := slice("demo", "plain", "edge-1")
		s.Load([]*corev1.Node{node("edge-1", "a"), node("edge-2", "a")}, []*corev1.Service{service("demo", "plain", nil, nil)}, []*discoveryv1.EndpointSlice{plain})
		reading, err := s.Watch(t.Context(), nodeWatch("edge-1"), watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer reading.Stop()
		// edge-2's client never reads: its first event stays in the hand-off.
		stalled, err := s.Watch(t.Context(), nodeWatch("edge-2"), watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer stalled.Stop()
		listTook := func(f Filter) time.Duration {
			t.Helper()
			start := time.Now()
			if _, err := s.List(f, ListOptions{Limit: 1}); err != nil {
				t.Fatal(err)
			}
			return time.Since(start)
		}

		time.Sleep(feedQuiet)
		if took := listTook(Filter{}); took != 0 {
			t.Errorf("a cluster-wide list on a quiet feed waited %s", took)
		}

		flip(s, plain)
		<-reading.ResultChan()
		synctest.Wait()
		if took := listTook(nodeWatch("edge-1")); took != 0 {
			t.Errorf("a node's list waited %s for the feed", took)
		}
		if took := listTook(Filter{}); took != feedQuiet {
			t.Errorf("a cluster-wide list just after an event was delivered waited %s, want %s", took, feedQuiet)
		}
		// edge-2's event still waits for its client.
		if took := listTook(Filter{}); took != 0 {
			t.Errorf("a cluster-wide list beside a stalled watcher waited %s", took)
		}

		// A change every millisecond keeps the feed busy.
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 2 * feedYieldLimit / time.Millisecond {
				flip(s, plain)
				<-reading.ResultChan()
				time.Sleep(time.Millisecond)
			}
		}()
		time.Sleep(time.Millisecond)
		if took := listTook(Filter{}); took != feedYieldLimit {
			t.Errorf("a cluster-wide list beside a busy feed waited %s, want %s", took, feedYieldLimit)
		}
		<-done
	})
}
