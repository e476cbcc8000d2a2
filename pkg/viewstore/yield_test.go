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

	topologyapi "github.com/gridview/gridview/apis/topology"
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

		// A page whose token a change expired, its first page's state not
		// kept any more, is answered at once.
		page, err := s.List(Filter{}, ListOptions{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		flip(s, plain)
		<-reading.ResultChan()
		synctest.Wait()
		s.paged.forget()
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

// The store is quiet once loaded for relistAfterLoad and no change was
// published for the given time; a change that moves no view keeps it quiet.
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
		time.Sleep(relistAfterLoad - time.Millisecond)
		if s.Quiet(time.Second) {
			t.Errorf("quiet %s after the load, while nodes may still relist", relistAfterLoad-time.Millisecond)
		}
		time.Sleep(time.Millisecond)
		if !s.Quiet(time.Second) {
			t.Errorf("not quiet %s after the load, before any change", relistAfterLoad)
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

// A known node's own views wait while the node watchers hand the other
// nodes' changes of its move to their clients, but not for a client that was
// behind already, nor for one that watches every node; they wait for
// nothing when the first stage changed no view, nor when the node joins.
func TestAMovedNodesOwnViewsWaitForTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(testOptions)
		// echo's endpoint is on edge-2, far's on edge-3: edge-2 moving to
		// unit b changes the views of echo of the nodes of units a and b at
		// once, and edge-2's own view of far after.
		// near's is on edge-4, which joins later.
		echo := slice("demo", "echo", "edge-2")
		s.Load([]*corev1.Node{node("edge-1", "a"), node("edge-2", "a"), node("edge-3", "b"), node("edge-5", "a"), node("edge-6", "a")},
			[]*corev1.Service{service("demo", "echo", nil, anyMatchUnit), service("demo", "far", nil, anyMatchUnit), service("demo", "near", nil, anyMatchUnit)},
			[]*discoveryv1.EndpointSlice{echo, slice("demo", "far", "edge-3"), slice("demo", "near", "edge-4")})
		watchWith := func(f Filter) watch.Interface {
			t.Helper()
			w, err := s.Watch(t.Context(), f, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			return w
		}
		watchNode := func(node string) watch.Interface { return watchWith(nodeWatch(node)) }
		// Clients that take every event at once; edge-2's notes when its
		// own view of far comes.
		start := time.Now()
		farCame := make(chan time.Duration, 1)
		go func() {
			for e := range watchNode("edge-2").ResultChan() {
				if obj, ok := e.Object.(*topologyapi.NodeEndpoints); ok && obj.ServiceName == "far" && len(farCame) == 0 {
					farCame <- time.Since(start)
				}
			}
		}()
		go func() {
			for range watchNode("edge-1").ResultChan() {
			}
		}()
		const late = 3 * time.Millisecond
		// takeAfter makes a client take its next event after d.
		takeAfter := func(w watch.Interface, d time.Duration) <-chan struct{} {
			taken := make(chan struct{})
			go func() {
				time.Sleep(d)
				<-w.ResultChan()
				close(taken)
			}()
			return taken
		}
		takeLate := func(w watch.Interface) <-chan struct{} { return takeAfter(w, late) }
		slow, unitB, everyNode := watchNode("edge-5"), watchNode("edge-3"), watchWith(Filter{})
		// edge-6's client stops reading.
		watchNode("edge-6")
		flip(s, echo)
		<-slow.ResultChan()
		// Every event a client was sent, each only once its watcher has it.
		for synctest.Wait(); ; synctest.Wait() {
			select {
			case <-everyNode.ResultChan():
				continue
			default:
			}
			break
		}

		start = time.Now()
		slowTook, everyNodeTook := takeLate(slow), takeAfter(everyNode, 4*late)
		go s.SetNode(node("edge-2", "b"))
		<-unitB.ResultChan()
		// The store looks every feedQuiet.
		if got, want := <-farCame, late+feedQuiet; got < want || got > want+feedQuiet {
			t.Errorf("edge-2's own view of far came %s after its move, want %s to %s: edge-5's event taken, then quiet for %s",
				got, want, want+feedQuiet, feedQuiet)
		}
		<-slowTook
		<-everyNodeTook

		took := func(change func()) time.Duration {
			start := time.Now()
			change()
			return time.Since(start)
		}
		// edge-1 hosts no endpoint: its move changes only its own views.
		// Past feedYieldLimit, so that the last wait does not excuse it.
		time.Sleep(feedYieldLimit)
		unitBTook := takeLate(unitB)
		flip(s, echo)
		if d := took(func() { s.SetNode(node("edge-1", "b")) }); d != 0 {
			t.Errorf("a move that changed no other node's view waited %s", d)
		}
		<-unitBTook
		synctest.Wait()

		// edge-4 joins unit b, where near's endpoint changes edge-3's view.
		time.Sleep(feedYieldLimit)
		unitBTook = takeLate(unitB)
		if d := took(func() { s.SetNode(node("edge-4", "b")) }); d != 0 {
			t.Errorf("a node joining waited %s", d)
		}
		<-unitBTook
	})
}

// Moves within feedYieldLimit of the end of the last wait, a bulk relabel,
// do not wait: the store's lock is held while a move waits. A move that
// found nothing to wait for does not count as a wait.
func TestABulkRelabelWaitsOncePerYieldLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(testOptions)
		// edge-2 moving changes edge-1's and edge-3's views of echo, then
		// its own. edge-9 moving changes edge-8's view of lone, which no
		// client watches.
		s.Load([]*corev1.Node{node("edge-1", "a"), node("edge-2", "a"), node("edge-3", "b"), node("edge-8", "c"), node("edge-9", "c")},
			[]*corev1.Service{service("demo", "echo", nil, anyMatchUnit), service("demo", "far", nil, anyMatchUnit), service("demo", "lone", nil, anyMatchUnit)},
			[]*discoveryv1.EndpointSlice{slice("demo", "echo", "edge-2"), slice("demo", "far", "edge-3"), slice("demo", "lone", "edge-9")})
		// Clients that take each event a little late, so that every move
		// finds them idle and then handing over.
		done := make(chan struct{})
		defer close(done)
		for _, name := range []string{"edge-1", "edge-2", "edge-3"} {
			w, err := s.Watch(t.Context(), nodeWatch(name), watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			go func() {
				for {
					select {
					case <-done:
						return
					case <-time.After(time.Millisecond):
					}
					<-w.ResultChan()
				}
			}()
		}
		synctest.Wait()
		move := func(unit string) time.Duration {
			start := time.Now()
			s.SetNode(node("edge-2", unit))
			return time.Since(start)
		}
		if d := move("b"); d == 0 {
			t.Fatal("a move waited for nothing: the test cannot tell a bulk from it")
		}
		for i, unit := range []string{"a", "b", "a"} {
			if d := move(unit); d != 0 {
				t.Errorf("move %d of a bulk waited %s", i+2, d)
			}
		}
		time.Sleep(feedYieldLimit)
		if d := move("b"); d == 0 {
			t.Errorf("a move %s after the last wait did not wait", feedYieldLimit)
		}
		time.Sleep(feedYieldLimit)
		start := time.Now()
		s.SetNode(node("edge-9", "d"))
		if d := time.Since(start); d != 0 {
			t.Fatalf("a move that no client sees waited %s", d)
		}
		if d := move("a"); d == 0 {
			t.Errorf("a move right after one that found nothing to wait for did not wait")
		}
	})
}
