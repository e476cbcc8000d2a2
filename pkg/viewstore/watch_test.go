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
	"context"
	"io"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/apis/topology/install"
	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/watchstream"
)

// received drains what a watcher has been sent so far, as "TYPE name".
func received(t *testing.T, w watch.Interface) []string {
	t.Helper()
	var out []string
	for {
		// The watcher's goroutine hands events over one at a time.
		synctest.Wait()
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return append(out, "closed")
			}
			object := e.Object.(*topologyapi.NodeEndpoints)
			if e.Type == watch.Bookmark {
				out = append(out, "BOOKMARK "+object.Annotations[metav1.InitialEventsAnnotationKey])
				continue
			}
			out = append(out, string(e.Type)+" "+object.Name)
		default:
			return out
		}
	}
}

func expectEvents(t *testing.T, w watch.Interface, want ...string) {
	t.Helper()
	if got := received(t, w); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

var edge2 = Filter{Namespace: "demo", Fields: fields.OneTermEqualSelector(FieldNodeName, "edge-2")}

func TestStreamingListThenChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		w, err := s.Watch(t.Context(), edge2, watchstream.WatchOptions{SendInitialEvents: ptr.To(true), Bookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvents(t, w, "ADDED edge-2..echo-x", "ADDED edge-2..plain-x", "BOOKMARK true")

		// edge-3 joins unit a: edge-2 now sees its endpoint of echo; plain is unchanged.
		s.SetNode(node("edge-3", "a"))
		expectEvents(t, w, "MODIFIED edge-2..echo-x")
		s.DeleteNode("edge-2")
		expectEvents(t, w, "DELETED edge-2..echo-x", "DELETED edge-2..plain-x")
	})
}

func TestWatchFromAResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		start := s.stream.RV()
		s.SetNode(node("edge-2", "b"))
		afterMove := s.stream.RV()
		s.DeleteService(types.NamespacedName{Namespace: "demo", Name: "plain"})

		w, err := s.Watch(t.Context(), edge2, watchstream.WatchOptions{ResourceVersion: fmtRV(start)})
		if err != nil {
			t.Fatal(err)
		}
		expectEvents(t, w, "MODIFIED edge-2..echo-x", "DELETED edge-2..plain-x")
		w.Stop()

		w, err = s.Watch(t.Context(), edge2, watchstream.WatchOptions{ResourceVersion: fmtRV(afterMove)})
		if err != nil {
			t.Fatal(err)
		}
		expectEvents(t, w, "DELETED edge-2..plain-x")
		w.Stop()

		for _, tc := range []struct {
			name, rv string
			want     func(error) bool
		}{
			{name: "older than the history", rv: fmtRV(start - 1), want: apierrors.IsResourceExpired},
			{name: "from the future", rv: fmtRV(s.stream.RV() + 1), want: apierrors.IsResourceExpired},
			{name: "not a number", rv: "abc", want: apierrors.IsBadRequest},
		} {
			// t.Run is not allowed inside a synctest bubble.
			if _, err := s.Watch(t.Context(), edge2, watchstream.WatchOptions{ResourceVersion: tc.rv}); !tc.want(err) {
				t.Errorf("%s: watch from %s: %v", tc.name, tc.rv, err)
			}
		}
	})
}

func TestHistoryIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, Options{HistorySize: 3, WatcherBuffer: 10, BookmarkInterval: time.Minute})
		start := s.stream.RV()
		// Each move changes one view: edge-2's of echo.
		var after []uint64
		for _, unit := range []string{"b", "a", "b", "a"} {
			s.SetNode(node("edge-2", unit))
			after = append(after, s.stream.RV())
		}
		if _, err := s.Watch(t.Context(), Filter{}, watchstream.WatchOptions{ResourceVersion: fmtRV(start)}); !apierrors.IsResourceExpired(err) {
			t.Errorf("watch from before the history: %v, want 410", err)
		}
		w, err := s.Watch(t.Context(), Filter{}, watchstream.WatchOptions{ResourceVersion: fmtRV(after[0])})
		if err != nil {
			t.Fatalf("watch from the oldest kept change: %v", err)
		}
		defer w.Stop()
		if got := received(t, w); len(got) != 3 {
			t.Errorf("replayed %q, want the 3 kept changes", got)
		}
	})
}

func TestAViewLeavingTheSelectionIsDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		echoes := Filter{Namespace: "demo", Labels: labels.SelectorFromSet(labels.Set{"app": "echo"}),
			Fields: fields.OneTermEqualSelector(FieldNodeName, "edge-1")}
		w, err := s.Watch(t.Context(), echoes, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		before := s.stream.RV()
		s.SetService(service("demo", "echo", map[string]string{"app": "other"}, anyMatchUnit))
		// The view in the state the watcher saw, which its selector matched,
		// at the resourceVersion of the change, one of those the relabelling
		// made, as kube-apiserver's watch cache sends it.
		synctest.Wait()
		e := <-w.ResultChan()
		view := e.Object.(*topologyapi.NodeEndpoints)
		if rv, err := strconv.ParseUint(view.ResourceVersion, 10, 64); e.Type != watch.Deleted || view.Name != "edge-1..echo-x" ||
			view.Labels["app"] != "echo" || err != nil || rv <= before || rv > s.stream.RV() {
			t.Errorf("%s %s labelled %v at resourceVersion %s, want DELETED edge-1..echo-x labelled app=echo after %d, at most %d",
				e.Type, view.Name, view.Labels, view.ResourceVersion, before, s.stream.RV())
		}
		s.SetService(service("demo", "plain", map[string]string{"app": "echo"}, nil))
		expectEvents(t, w, "ADDED edge-1..plain-x")
	})
}

func TestASlowWatcherIsCutOffAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		RegisterMetrics()
		watchersBefore := gaugeValue(t, watchersCurrent)
		s := newTestStore(t, Options{HistorySize: 100, WatcherBuffer: 2, BookmarkInterval: time.Minute})
		slow, err := s.Watch(t.Context(), Filter{}, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		fast, err := s.Watch(t.Context(), edge2, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer fast.Stop()
		// Nobody reads slow: it holds one event in flight and two queued, and
		// is cut off at the next.
		const most = 1 + 2
		for i := range most + 1 {
			s.SetNode(node("edge-2", []string{"b", "a"}[i%2]))
			if got := received(t, fast); len(got) != 1 {
				t.Fatalf("the fast watcher got %q, want edge-2's echo view", got)
			}
		}
		synctest.Wait()
		var events int
		for range slow.ResultChan() {
			events++
		}
		if events > most {
			t.Errorf("the slow watcher received %d events before it was cut off, want at most %d", events, most)
		}
		if watchers := gaugeValue(t, watchersCurrent); watchers != watchersBefore+1 {
			t.Errorf("%v watchers, want %v: the cut-off watcher is still registered", watchers, watchersBefore+1)
		}
	})
}

func TestBookmarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, Options{HistorySize: 10, WatcherBuffer: 10, BookmarkInterval: time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go s.Run(ctx)
		asked, err := s.Watch(ctx, edge2, watchstream.WatchOptions{SendInitialEvents: ptr.To(false), Bookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		silent, err := s.Watch(ctx, edge2, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		expectEvents(t, asked, "BOOKMARK ")
		expectEvents(t, silent)
		cancel()
		expectEvents(t, asked, "closed")
	})
}

func gaugeValue(t *testing.T, gauge metrics.GaugeMetric) float64 {
	t.Helper()
	value, err := testutil.GetGaugeMetricValue(gauge)
	if err != nil {
		t.Fatal(err)
	}
	return value
}

// Watchers share the objects of an event; encoding writes an object's type
// meta, so each must get its own (go test -race finds the write otherwise).
func TestWatchersEncodeTheSameChangeConcurrently(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme)
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	encoder := codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion)

	s := newTestStore(t, testOptions)
	var encoded sync.WaitGroup
	for range 2 {
		w, err := s.Watch(t.Context(), edge2, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		encoded.Go(func() {
			e := <-w.ResultChan()
			if err := encoder.Encode(e.Object, io.Discard); err != nil {
				t.Error(err)
			}
		})
	}
	s.SetNode(node("edge-2", "b"))
	encoded.Wait()
}

// A plain watch from "" that k8s.io/apiserver turned into a streaming list
// without bookmarks gets no initial-events-end bookmark: the handler would
// not expect it.
func TestNoInitialEventsEndWithoutBookmarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		w, err := s.Watch(t.Context(), edge2, watchstream.WatchOptions{SendInitialEvents: ptr.To(true)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvents(t, w, "ADDED edge-2..echo-x", "ADDED edge-2..plain-x")
	})
}

// Close ends every watch and refuses new ones, so that shutdown does not wait
// on streams that never end.
func TestCloseEndsWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		w, err := s.Watch(t.Context(), Filter{}, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		expectEvents(t, w, "closed")
		// client-go watches again after a 429, from the same
		// resourceVersion; after a 503 it would list again.
		if _, err := s.Watch(t.Context(), Filter{}, watchstream.WatchOptions{}); !apierrors.IsTooManyRequests(err) {
			t.Errorf("a watch after Close: %v, want 429", err)
		}
	})
}

// A node that moves changes its own view of most Services: the nodes that
// see its endpoints get theirs in a change of its own, numbered before the
// one that brings the node its own views. Both are numbered in the move's
// revision, one after the other, and the store ends at the revision's end.
func TestANodeMoveReachesOtherNodesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		// far has an endpoint in unit b only: edge-1 sees it once in b.
		s.SetService(service("demo", "far", nil, anyMatchUnit))
		s.SetEndpointSlice(slice("demo", "far", "edge-3"))
		w, err := s.Watch(t.Context(), Filter{Namespace: "demo"}, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		before := s.stream.RV()
		entries, _ := s.stream.Held()
		s.mu.RLock()
		revision := s.revision + 1
		s.mu.RUnlock()
		if before != revisionEnd(revision-1) {
			t.Fatalf("the store is at %d, want the end of revision %d, %d", before, revision-1, revisionEnd(revision-1))
		}
		// The move as a revision of the log, looked at before it ends.
		s.beginRevision(revision)
		s.setNode(node("edge-1", "b"))
		moved := s.resourceVersion()
		s.endRevision(revision)
		synctest.Wait()
		if got, _ := s.stream.Held(); got != entries+2 {
			t.Errorf("the move made %d changes, want two", got-entries)
		}
		if moved <= before || moved >= revisionEnd(revision) {
			t.Errorf("the move's changes ended at %d, want within revision %d's range (%d, %d)", moved, revision, before, revisionEnd(revision))
		}
		if got, want := s.stream.RV(), revisionEnd(revision); got != want {
			t.Errorf("resourceVersion after the move's revision %d, want its end %d", got, want)
		}
		type event struct {
			name string
			rv   uint64
		}
		var got []event
		for {
			e, ok := nextEvent(w)
			if !ok {
				break
			}
			view := e.Object.(*topologyapi.NodeEndpoints)
			rv, _ := strconv.ParseUint(view.ResourceVersion, 10, 64)
			got = append(got, event{string(e.Type) + " " + view.Name, rv})
		}
		// edge-1's own view of a Service it has no endpoint of comes last,
		// the last event of the revision, right after the others' change.
		own := "ADDED edge-1..far-x"
		others := []string{
			// edge-1's endpoint of echo moved from unit a to unit b.
			"MODIFIED edge-1..echo-x",
			"DELETED edge-2..echo-x",
			"MODIFIED edge-3..echo-x",
		}
		if len(got) != len(others)+1 || got[len(got)-1].name != own {
			t.Fatalf("events %v, want one for each of %q, then %s", got, others, own)
		}
		firstEnd := got[0].rv
		for _, e := range got[:len(got)-1] {
			firstEnd = max(firstEnd, e.rv)
			// A watcher of several nodes gets all but the last node's event
			// of a slice change one resourceVersion early, the one its
			// change leaves before its first event: still in the revision.
			if !slices.Contains(others, e.name) || e.rv < revisionStart(revision) {
				t.Errorf("%s at resourceVersion %d: want only %q, from the start of revision %d, %d", e.name, e.rv, others, revision, revisionStart(revision))
			}
		}
		// The own views' change follows the others', which ended at
		// firstEnd, past the resourceVersion it leaves to early events.
		if last := got[len(got)-1].rv; last != moved || last != firstEnd+2 {
			t.Errorf("%s at resourceVersion %d, want %d: right after the others' change, which ended at %d, and last of the revision's changes, which ended at %d",
				own, last, firstEnd+2, firstEnd, moved)
		}
	})
}
