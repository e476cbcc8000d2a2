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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/watchstream"
)

// A list that does not select one node waits while watchers hand a change
// to their clients, at most feedYieldLimit; a node's own list never waits,
// and neither a client that stopped reading nor one reading its initial
// events long after a change makes lists wait.
func TestListsYieldToTheFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(testOptions)
		plain, echo := slice("demo", "plain", "edge-1"), slice("demo", "echo", "edge-2")
		s.Load([]*corev1.Node{node("edge-1", "a"), node("edge-2", "b")},
			[]*corev1.Service{service("demo", "plain", nil, nil), service("demo", "echo", nil, anyMatchUnit)},
			[]*discoveryv1.EndpointSlice{plain, echo})
		watchNode := func(node string, initial bool) watch.Interface {
			t.Helper()
			w, err := s.Watch(t.Context(), nodeWatch(node), watchstream.WatchOptions{SendInitialEvents: ptr.To(initial)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			return w
		}
		reading := watchNode("edge-1", false)
		// edge-2's client never reads.
		watchNode("edge-2", false)
		listTook := func(f Filter) time.Duration {
			t.Helper()
			start := time.Now()
			if _, err := s.List(f, ListOptions{Limit: 1}); err != nil {
				t.Fatal(err)
			}
			return time.Since(start)
		}
		if took := listTook(Filter{}); took != 0 {
			t.Errorf("a cluster-wide list before any change waited %s", took)
		}

		flip(s, plain)
		<-reading.ResultChan()
		synctest.Wait()
		if took := listTook(nodeWatch("edge-1")); took != 0 {
			t.Errorf("a node's list waited %s for the feed", took)
		}
		if took := listTook(Filter{}); took != feedQuiet {
			t.Errorf("a cluster-wide list just after a change was handed over waited %s, want %s", took, feedQuiet)
		}

		// A page whose token a change expired is answered at once.
		page, err := s.List(Filter{}, ListOptions{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		flip(s, plain)
		<-reading.ResultChan()
		synctest.Wait()
		start := time.Now()
		if _, err := s.List(Filter{}, ListOptions{Limit: 1, Continue: page.Continue}); !apierrors.IsResourceExpired(err) || time.Since(start) != 0 {
			t.Errorf("an expired page beside a busy feed: %v after %s, want 410 at once", err, time.Since(start))
		}

		// A change only edge-2 sees waits in its hand-off.
		time.Sleep(feedQuiet)
		flip(s, echo)
		synctest.Wait()
		if took := listTook(Filter{}); took != 0 {
			t.Errorf("a cluster-wide list after a change only a stalled client sees waited %s", took)
		}

		// edge-1 reads its initial events slowly, long after the last change.
		time.Sleep(feedFanOut)
		slow := watchNode("edge-1", true)
		<-slow.ResultChan()
		synctest.Wait()
		if took := listTook(Filter{}); took != 0 {
			t.Errorf("a cluster-wide list beside a node reading its initial events waited %s", took)
		}
		go func() {
			for range slow.ResultChan() {
			}
		}()

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

// The store is quiet once loaded for the given time and no change was
// published for as long; a change that moves no view keeps it quiet.
func TestQuietAfterTheLastChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(testOptions)
		if s.Quiet(time.Second) {
			t.Error("quiet before the views are loaded")
		}
		plain := slice("demo", "plain", "edge-1")
		s.Load([]*corev1.Node{node("edge-1", "a")}, []*corev1.Service{service("demo", "plain", nil, nil)}, []*discoveryv1.EndpointSlice{plain})
		if s.Quiet(time.Second) {
			t.Error("quiet right after the load, while nodes relist")
		}
		time.Sleep(time.Second)
		if !s.Quiet(time.Second) {
			t.Error("not quiet a second after the load, before any change")
		}
		flip(s, plain)
		if s.Quiet(time.Second) {
			t.Error("quiet right after a change")
		}
		time.Sleep(time.Second)
		if !s.Quiet(time.Second) {
			t.Error("not quiet a second after the last change")
		}
		// A label no Service reads changes no view.
		moved := node("edge-1", "a")
		moved.Labels["unread"] = "x"
		s.SetNode(moved)
		if !s.Quiet(time.Second) {
			t.Error("a change that moved no view ended the quiet")
		}
	})
}
