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
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/inputlog"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// scriptedLog is gridview's input log as a test writes it: the changes of
// each revision, and the inputs as they stood after it.
type scriptedLog struct {
	revisions []int64
	changes   map[int64][]inputlog.Change
	states    map[int64]map[inputlog.Key]metav1.Object
}

// newScriptedLog starts a log whose oldest revision holds objects.
func newScriptedLog(revision int64, objects ...metav1.Object) *scriptedLog {
	state := map[inputlog.Key]metav1.Object{}
	for _, obj := range objects {
		state[inputlog.KeyOf(kindOf(obj), obj)] = obj
	}
	return &scriptedLog{revisions: []int64{revision}, changes: map[int64][]inputlog.Change{},
		states: map[int64]map[inputlog.Key]metav1.Object{revision: state}}
}

func kindOf(obj metav1.Object) inputlog.Kind {
	switch obj.(type) {
	case *corev1.Node:
		return inputlog.Nodes
	case *corev1.Service:
		return inputlog.Services
	case *discoveryv1.EndpointSlice:
		return inputlog.EndpointSlices
	default:
		return inputlog.Namespaces
	}
}

// write appends a revision of the log, after the last.
func (l *scriptedLog) write(revision int64, changes ...inputlog.Change) {
	last := l.revisions[len(l.revisions)-1]
	if revision <= last {
		panic(fmt.Sprintf("revision %d written after %d", revision, last))
	}
	state := maps.Clone(l.states[last])
	for _, change := range changes {
		if change.Object == nil {
			delete(state, change.Key)
		} else {
			state[change.Key] = change.Object
		}
	}
	l.revisions = append(l.revisions, revision)
	l.changes[revision] = changes
	l.states[revision] = state
}

// objectsAt are the inputs at a revision, in the order etcd lists them:
// by key.
func (l *scriptedLog) objectsAt(revision int64) []metav1.Object {
	state := l.states[revision]
	keys := slices.SortedFunc(maps.Keys(state), func(a, b inputlog.Key) int {
		return cmp.Or(cmp.Compare(a.Kind.String(), b.Kind.String()), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var out []metav1.Object
	for _, key := range keys {
		out = append(out, state[key])
	}
	return out
}

// after are the revisions after one.
func (l *scriptedLog) after(revision int64) []int64 {
	return l.revisions[slices.Index(l.revisions, revision)+1:]
}

var (
	created      = metav1.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	createdAgain = metav1.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
)

// numberingLog is a log of several inputs per revision, whose revisions do
// not follow one another, as etcd numbers writes to it besides the log's.
// It moves nodes between units (two changes each), deletes a Service and
// creates it again, and has another come back with another creation time
// at once, as the writer writes one deleted and created while it was busy.
func numberingLog() *scriptedLog {
	at := func(obj metav1.Object, when metav1.Time) metav1.Object {
		obj.SetCreationTimestamp(when)
		return obj
	}
	svc := func(namespace, name string, annotations map[string]string, when metav1.Time) *corev1.Service {
		return at(service(namespace, name, map[string]string{"app": name}, annotations), when).(*corev1.Service)
	}
	nodeAt := func(name, unit string, when metav1.Time) *corev1.Node {
		return at(node(name, unit), when).(*corev1.Node)
	}
	l := newScriptedLog(5,
		nodeAt("edge-1", "a", created), nodeAt("edge-2", "a", created), nodeAt("edge-3", "b", created),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}},
		svc("demo", "echo", anyMatchUnit, created), svc("demo", "far", anyMatchUnit, created), svc("demo", "plain", nil, created),
		svc("other", "echo", nil, created),
		slice("demo", "echo", "edge-1", "edge-3"), slice("demo", "far", "edge-3"), slice("demo", "plain", "edge-1", "edge-3"),
		slice("other", "echo", "edge-2"),
	)
	l.write(7,
		set(inputlog.EndpointSlices, slice("demo", "echo", "edge-1", "edge-2", "edge-3")),
		set(inputlog.Services, svc("demo", "plain", map[string]string{"note": "relabelled"}, created)))
	// edge-1 moves to unit b: the others' views of its endpoints, then its
	// own, between a slice's change and a node that joins.
	l.write(8,
		set(inputlog.EndpointSlices, slice("demo", "plain", "edge-1", "edge-2")),
		set(inputlog.Nodes, nodeAt("edge-1", "b", created)),
		set(inputlog.Nodes, nodeAt("edge-4", "c", created)))
	l.write(11,
		set(inputlog.EndpointSlices, slice("other", "echo", "edge-2", "edge-4")),
		removed(inputlog.Services, "demo", "echo"))
	// A label no Service reads changes no view.
	unread := nodeAt("edge-2", "a", created)
	unread.Labels["rack"] = "r7"
	l.write(12,
		set(inputlog.Services, svc("demo", "echo", anyMatchUnit, createdAgain)),
		set(inputlog.Nodes, unread))
	l.write(13,
		set(inputlog.Services, svc("demo", "far", anyMatchUnit, createdAgain)),
		set(inputlog.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Annotations: map[string]string{topology.AnnotationGridviewKeys: "unit"}}}))
	l.write(16,
		removed(inputlog.Nodes, "", "edge-3"),
		set(inputlog.EndpointSlices, slice("demo", "far", "edge-2", "edge-4")))
	// edge-4 moves to unit a, and a Service's rule cannot be parsed.
	l.write(17,
		set(inputlog.Nodes, nodeAt("edge-4", "a", created)),
		set(inputlog.Services, svc("other", "echo", map[string]string{topology.AnnotationTopologyKeys: "[bad"}, created)))
	l.write(20,
		set(inputlog.Nodes, nodeAt("edge-3", "b", createdAgain)),
		set(inputlog.EndpointSlices, slice("demo", "echo", "edge-3", "edge-4")),
		removed(inputlog.EndpointSlices, "demo", "plain-x"))
	l.write(21, set(inputlog.Nodes, nodeAt("edge-2", "c", created)))
	return l
}

// numberingFilters are what the test watches: every node's views, and each
// node's.
var numberingFilters = map[string]Filter{
	"every node": {}, "edge-1": nodeWatch("edge-1"), "edge-2": nodeWatch("edge-2"), "edge-3": nodeWatch("edge-3"), "edge-4": nodeWatch("edge-4"),
}

// numberedEvent is an event as a watcher got it, with the revision whose
// application sent it.
type numberedEvent struct {
	revision int64
	rv       uint64
	event    string
}

func (e numberedEvent) String() string { return fmt.Sprintf("r%d@%d %s", e.revision, e.rv, e.event) }

// logReplica is a replica's store fed the log, with a watcher of each of
// numberingFilters from its load on.
type logReplica struct {
	t        *testing.T
	log      *scriptedLog
	store    *Store
	feed     *Feed
	watchers map[string]watch.Interface
	events   map[string][]numberedEvent
}

func loadReplica(t *testing.T, log *scriptedLog, revision int64) *logReplica {
	t.Helper()
	r := &logReplica{t: t, log: log, store: New(Options{HistorySize: 10_000, WatcherBuffer: 10_000, BookmarkInterval: time.Hour}),
		watchers: map[string]watch.Interface{}, events: map[string][]numberedEvent{}}
	r.feed = NewFeed(r.store, &record.FakeRecorder{}, func(int64) bool { return true })
	r.feed.Load(revision, log.objectsAt(revision))
	for name, f := range numberingFilters {
		w, err := r.store.Watch(t.Context(), f, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		r.watchers[name] = w
	}
	return r
}

// apply applies a revision of the log and takes what the watchers got.
func (r *logReplica) apply(revision int64) {
	r.feed.Apply(revision, r.log.changes[revision])
	for name, w := range r.watchers {
		r.events[name] = append(r.events[name], takeEvents(w, revision)...)
	}
}

// takeEvents takes what a watcher has been sent, bookmarks aside.
func takeEvents(w watch.Interface, revision int64) []numberedEvent {
	var out []numberedEvent
	for {
		e, ok := nextEvent(w)
		if !ok {
			return out
		}
		obj, ok := e.Object.(*topologyapi.NodeEndpoints)
		if !ok || e.Type == watch.Bookmark {
			continue
		}
		rv, _ := strconv.ParseUint(obj.ResourceVersion, 10, 64)
		out = append(out, numberedEvent{revision: revision, rv: rv, event: string(e.Type) + " " + describeView(obj)})
	}
}

// ended says whether a watch ended, once what it was sent is taken.
func ended(w watch.Interface) bool {
	for {
		synctest.Wait()
		select {
		case _, open := <-w.ResultChan():
			if !open {
				return true
			}
		default:
			return false
		}
	}
}

// describeView is what a NodeEndpoints says, its resourceVersion aside.
func describeView(obj *topologyapi.NodeEndpoints) string {
	return fmt.Sprintf("%s/%s created %s %s", obj.Namespace, obj.Name, obj.CreationTimestamp.UTC().Format(time.RFC3339), render(obj))
}

// contents lists every NodeEndpoints, each as describeView says it.
func (r *logReplica) contents() []string {
	r.t.Helper()
	list, err := r.store.List(Filter{}, ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		out = append(out, describeView(&list.Items[i]))
	}
	return out
}

// resumeFrom is what a watch from rv gets: its events, or that it was
// refused.
func (r *logReplica) resumeFrom(f Filter, rv uint64) string {
	r.t.Helper()
	w, err := r.store.Watch(r.t.Context(), f, watchstream.WatchOptions{ResourceVersion: fmtRV(rv)})
	if err != nil {
		if !apierrors.IsResourceExpired(err) {
			r.t.Fatalf("resuming from %d: %v", rv, err)
		}
		return "410"
	}
	defer w.Stop()
	return fmt.Sprint(takeEvents(w, 0))
}

// TestEveryReplicaNumbersTheLogAlike feeds one replica the log from its
// oldest revision and another from each later one, as one that started
// after etcd compacted the log there: at every revision's end both are at
// the same resourceVersion, the revision's, and list the same views; the
// watchers of both get the same events at the same resourceVersions; and a
// watch that resumes on one from a resourceVersion the other sent gets
// what it would have got on the other.
func TestEveryReplicaNumbersTheLogAlike(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := numberingLog()
		first := loadReplica(t, log, log.revisions[0])
		type atEnd struct {
			rv       uint64
			contents []string
		}
		ends := map[int64]atEnd{log.revisions[0]: {first.store.resourceVersion(), first.contents()}}
		for _, revision := range log.after(log.revisions[0]) {
			first.apply(revision)
			ends[revision] = atEnd{first.store.resourceVersion(), first.contents()}
			if ends[revision].rv != revisionEnd(revision) {
				t.Fatalf("after revision %d the replica is at %d, want the revision's end %d", revision, ends[revision].rv, revisionEnd(revision))
			}
		}
		if len(first.events["every node"]) < 20 {
			t.Fatalf("the log made %d events: the test would prove little", len(first.events["every node"]))
		}

		for _, loadedAt := range log.after(log.revisions[0]) {
			later := loadReplica(t, log, loadedAt)
			check := func(revision int64) {
				t.Helper()
				if got, want := later.store.resourceVersion(), ends[revision].rv; got != want {
					t.Errorf("loaded at revision %d: at the end of revision %d the replica is at %d, the one fed from revision %d at %d",
						loadedAt, revision, got, log.revisions[0], want)
				}
				if got, want := later.contents(), ends[revision].contents; !slices.Equal(got, want) {
					t.Errorf("loaded at revision %d: at the end of revision %d the replica lists\n%s\nthe one fed from revision %d\n%s",
						loadedAt, revision, got, log.revisions[0], want)
				}
			}
			check(loadedAt)
			for _, revision := range log.after(loadedAt) {
				later.apply(revision)
				check(revision)
			}
			for name, f := range numberingFilters {
				want := slices.DeleteFunc(slices.Clone(first.events[name]), func(e numberedEvent) bool { return e.revision <= loadedAt })
				if got := later.events[name]; !slices.Equal(got, want) {
					t.Errorf("loaded at revision %d, the watcher of %s got\n%v\nthe one on the replica fed from revision %d\n%v",
						loadedAt, name, got, log.revisions[0], want)
				}
				for _, e := range want {
					if got, want := later.resumeFrom(f, e.rv), first.resumeFrom(f, e.rv); got != want {
						t.Errorf("loaded at revision %d, a watch of %s resumed from %d, sent with %s, gets\n%s\non the replica fed from revision %d\n%s",
							loadedAt, name, e.rv, e.event, got, log.revisions[0], want)
					}
				}
			}
		}
	})
}

// TestAStoreNumbersEachRevisionInItsRange feeds a store the log, applying
// each input of a revision as Feed.Apply does, and loads it again at a
// later revision, as a reader that fell behind etcd's compaction does:
// every event of a revision carries a resourceVersion in the revision's
// range, above the state the store was at before the input that sent it;
// the store's resourceVersion only grows, the load's included; and a watch
// or a page from before the load, whose state skipped revisions, is
// answered 410.
func TestAStoreNumbersEachRevisionInItsRange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := numberingLog()
		r := loadReplica(t, log, log.revisions[0])
		lastRV := r.store.resourceVersion()
		grows := func(what string) {
			t.Helper()
			if rv := r.store.resourceVersion(); rv < lastRV {
				t.Errorf("%s: the store went from resourceVersion %d back to %d", what, lastRV, rv)
			} else {
				lastRV = rv
			}
		}
		// checkRevision applies a revision an input at a time, as Feed.Apply
		// does, and checks what each input sent.
		checkRevision := func(revision int64) {
			t.Helper()
			r.store.beginRevision(revision)
			for _, change := range log.changes[revision] {
				before := r.store.resourceVersion()
				if change.Object == nil {
					r.feed.remove(change.Key)
				} else {
					r.feed.set(change.Object, false)
				}
				grows(fmt.Sprintf("revision %d, %v %v", revision, change.Key.Kind, change.Key.NamespacedName))
				for name, w := range r.watchers {
					for _, e := range takeEvents(w, revision) {
						if e.rv < revisionStart(revision) || e.rv > revisionEnd(revision) || e.rv <= before {
							t.Errorf("revision %d, %v %v: the watcher of %s got %s at %d, want in (%d, %d], the revision's range [%d, %d] after the state before it",
								revision, change.Key.Kind, change.Key.NamespacedName, name, e.event, e.rv, before, revisionEnd(revision), revisionStart(revision), revisionEnd(revision))
						}
						r.events[name] = append(r.events[name], e)
					}
				}
			}
			r.store.endRevision(revision)
			grows(fmt.Sprintf("the end of revision %d", revision))
			if got := r.store.resourceVersion(); got != revisionEnd(revision) {
				t.Errorf("after revision %d the store is at %d, want its end %d", revision, got, revisionEnd(revision))
			}
		}

		revisions := log.after(log.revisions[0])
		skipped, reloaded := revisions[2], revisions[5]
		for _, revision := range revisions[:3] {
			checkRevision(revision)
		}
		if len(r.events["every node"]) == 0 {
			t.Fatal("no event: the test would prove nothing")
		}
		// A client's state at the last revision applied before the load.
		before, err := r.store.List(Filter{}, ListOptions{Limit: 1})
		if err != nil || before.Continue == "" {
			t.Fatalf("a first page before the load: %v, continue %q", err, before.Continue)
		}
		if before.ResourceVersion != fmtRV(revisionEnd(skipped)) {
			t.Fatalf("a list after revision %d at %s, want %d", skipped, before.ResourceVersion, revisionEnd(skipped))
		}

		r.feed.Load(reloaded, log.objectsAt(reloaded))
		grows(fmt.Sprintf("a load at revision %d", reloaded))
		if got := r.store.resourceVersion(); got != revisionEnd(reloaded) {
			t.Errorf("loaded at revision %d, the store is at %d, want the revision's end %d", reloaded, got, revisionEnd(reloaded))
		}
		for name, w := range r.watchers {
			if !ended(w) {
				t.Errorf("the watch of %s went on across the load of a later revision", name)
			}
		}
		for name, f := range numberingFilters {
			if _, err := r.store.Watch(t.Context(), f, watchstream.WatchOptions{ResourceVersion: before.ResourceVersion}); !apierrors.IsResourceExpired(err) {
				t.Errorf("a watch of %s from %s, before the load: %v, want 410", name, before.ResourceVersion, err)
			}
		}
		if _, err := r.store.List(Filter{}, ListOptions{Limit: 1, Continue: before.Continue}); !apierrors.IsResourceExpired(err) {
			t.Errorf("the next page of a list from before the load: %v, want 410", err)
		}
		after, err := r.store.List(Filter{}, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range after.Items {
			if rv, _ := strconv.ParseUint(item.ResourceVersion, 10, 64); rv <= revisionEnd(skipped) || rv > revisionEnd(reloaded) {
				t.Errorf("after the load at revision %d, %s is at %s, want after the state before the load, %d, and not after the load's, %d",
					reloaded, item.Name, item.ResourceVersion, revisionEnd(skipped), revisionEnd(reloaded))
			}
		}

		for name, f := range numberingFilters {
			w, err := r.store.Watch(t.Context(), f, watchstream.WatchOptions{ResourceVersion: after.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			r.watchers[name] = w
		}
		for _, revision := range log.after(reloaded) {
			checkRevision(revision)
		}
	})
}

// A read from a resourceVersion another replica issued, one that read the
// log further, waits until this replica gets there, then is served as the
// other would serve it; one no replica reaches within freshWait gets "Too
// large resource version", which client-go retries, not 410.
func TestAReplicaBehindWaitsForAResourceVersionAnotherIssued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := numberingLog()
		ahead, behind := loadReplica(t, log, log.revisions[0]), loadReplica(t, log, log.revisions[0])
		revisions := log.after(log.revisions[0])
		next := revisions[0]
		ahead.apply(next)
		issued := ahead.events["every node"]
		if len(issued) == 0 {
			t.Fatalf("revision %d made no event: the test would prove nothing", next)
		}
		changes, applied := log.changes[next], 0
		behind.store.beginRevision(next)
		// awaitFresh checks that a read from rv waits until reach brings
		// the replica there.
		awaitFresh := func(rv uint64, reach func()) {
			t.Helper()
			if err := behind.store.AwaitFresh(t.Context(), "0", ""); err != nil {
				t.Fatalf("a read from any resourceVersion: %v", err)
			}
			waited := make(chan error, 1)
			go func() { waited <- behind.store.AwaitFresh(t.Context(), fmtRV(rv), "") }()
			time.Sleep(time.Second)
			synctest.Wait()
			select {
			case err := <-waited:
				t.Fatalf("a read from resourceVersion %d, which the replica at %d has yet to reach, did not wait: %v", rv, behind.store.resourceVersion(), err)
			default:
			}
			reach()
			if err := <-waited; err != nil {
				t.Fatalf("a read from resourceVersion %d, once the replica reached it: %v", rv, err)
			}
		}
		// The first event's resourceVersion, inside the revision: its
		// inputs up to the one that sent it reach it.
		mid := issued[0].rv
		awaitFresh(mid, func() {
			for ; behind.store.resourceVersion() < mid; applied++ {
				if changes[applied].Object == nil {
					behind.feed.remove(changes[applied].Key)
				} else {
					behind.feed.set(changes[applied].Object, false)
				}
			}
		})
		if applied == len(changes) {
			t.Fatalf("revision %d's first event at %d came with its last input: the test would prove less", next, mid)
		}
		if w, err := behind.store.Watch(t.Context(), Filter{}, watchstream.WatchOptions{ResourceVersion: fmtRV(mid)}); err != nil {
			t.Errorf("a watch from resourceVersion %d, once the replica reached it: %v", mid, err)
		} else {
			w.Stop()
		}
		// Only the revision's end reaches that, as every replica ends each
		// revision there.
		awaitFresh(revisionEnd(next), func() {
			for _, change := range changes[applied:] {
				if change.Object == nil {
					behind.feed.remove(change.Key)
				} else {
					behind.feed.set(change.Object, false)
				}
				if behind.store.resourceVersion() >= revisionEnd(next) {
					t.Fatalf("the replica reached revision %d's end before its last input", next)
				}
			}
			behind.store.endRevision(next)
		})
		for _, rv := range []uint64{mid, revisionEnd(next)} {
			for name, f := range numberingFilters {
				if got, want := behind.resumeFrom(f, rv), ahead.resumeFrom(f, rv); got != want {
					t.Errorf("a watch of %s from %d gets\n%s\nthe replica ahead sends\n%s", name, rv, got, want)
				}
			}
		}

		beyond := revisionEnd(revisions[1])
		start := time.Now()
		if err := behind.store.AwaitFresh(t.Context(), fmtRV(beyond), ""); !storage.IsTooLargeResourceVersion(err) {
			t.Errorf("a read from resourceVersion %d, which no replica reached: %v, want Too large resource version", beyond, err)
		}
		if waited := time.Since(start); waited < freshWait {
			t.Errorf("a read from resourceVersion %d gave up after %s, want %s", beyond, waited, freshWait)
		}
		token := continueToken{RV: beyond}.encode()
		if err := behind.store.AwaitFresh(t.Context(), "", token); !storage.IsTooLargeResourceVersion(err) {
			t.Errorf("a page from a continue token at resourceVersion %d, which no replica reached: %v, want Too large resource version", beyond, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		if err := behind.store.AwaitFresh(ctx, fmtRV(beyond), ""); !storage.IsTooLargeResourceVersion(err) || time.Since(start) > time.Second+freshPoll {
			t.Errorf("a read whose context ends in 1s: %v after %s, want Too large resource version within it", err, time.Since(start))
		}
	})
}

// fakeLog is etcd as a store's feed reads it: at revision, and asked for
// progress, which progress answers, if set.
type fakeLog struct {
	revision int64
	err      error
	start    time.Time
	progress func()
	mu       sync.Mutex
	asked    []time.Duration
}

// askedAt is when the store asked for progress.
func (l *fakeLog) askedAt() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.asked)
}

func (l *fakeLog) Revision(context.Context) (int64, error) { return l.revision, l.err }

func (l *fakeLog) RequestProgress() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, time.Since(l.start))
	if l.progress != nil {
		go l.progress()
	}
}

// A revision that wrote nothing to the log, only to the rest of etcd,
// reaches a replica as the progress etcd reports: a read from its end,
// issued by a replica that got that progress, or a read that must be
// current once etcd is there, waits while the store asks for progress, at
// most once a second, and is served once it comes; and the progress changes
// nothing of how the next revision is numbered.
func TestAReadWaitsForProgressThroughRevisionsWithoutInputs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := numberingLog()
		progressed, other := loadReplica(t, log, log.revisions[0]), loadReplica(t, log, log.revisions[0])
		next := log.after(log.revisions[0])[0]
		quiet := next - 1
		if quiet <= log.revisions[0] {
			t.Fatalf("no revision between %d and %d: the test would prove nothing", log.revisions[0], next)
		}
		etcd := &fakeLog{revision: quiet, start: time.Now()}
		progressed.store.SetLog(etcd)

		// Without the progress, the read is answered "Too large resource
		// version", having asked once a second.
		if err := progressed.store.AwaitFresh(t.Context(), fmtRV(revisionEnd(quiet)), ""); !storage.IsTooLargeResourceVersion(err) {
			t.Fatalf("a read from the end of revision %d, which the replica has no word of: %v, want Too large resource version", quiet, err)
		}
		synctest.Wait()
		if asked := etcd.askedAt(); len(asked) == 0 || len(asked) > int(freshWait/time.Second)+1 {
			t.Errorf("asked for progress at %v while waiting %s, want at most once a second", asked, freshWait)
		}
		// A read that names no resourceVersion must be current: etcd is at
		// the quiet revision.
		if err := progressed.store.AwaitFresh(t.Context(), "", ""); !storage.IsTooLargeResourceVersion(err) {
			t.Fatalf("a current read, etcd at revision %d, the replica at %d: %v, want Too large resource version", quiet, progressed.store.resourceVersion(), err)
		}
		etcd.err = fmt.Errorf("etcd is away")
		if err := progressed.store.AwaitFresh(t.Context(), "", ""); !apierrors.IsServiceUnavailable(err) {
			t.Errorf("a current read, etcd away: %v, want 503", err)
		}
		etcd.err = nil

		// Once asked, etcd reports the progress.
		etcd.mu.Lock()
		etcd.asked, etcd.progress = nil, func() { progressed.feed.Progress(quiet) }
		etcd.mu.Unlock()
		if err := progressed.store.AwaitFresh(t.Context(), "", ""); err != nil {
			t.Fatalf("a current read, once progress reached revision %d: %v", quiet, err)
		}
		synctest.Wait()
		if asked := etcd.askedAt(); len(asked) != 1 {
			t.Errorf("asked for progress %d times, want once", len(asked))
		}
		if got := progressed.store.resourceVersion(); got != revisionEnd(quiet) {
			t.Errorf("after progress to revision %d the store is at %d, want its end %d", quiet, got, revisionEnd(quiet))
		}
		if err := progressed.store.AwaitFresh(t.Context(), fmtRV(revisionEnd(quiet)), ""); err != nil {
			t.Errorf("a read from the end of revision %d, once progress reached it: %v", quiet, err)
		}
		for name := range numberingFilters {
			if events := takeEvents(progressed.watchers[name], quiet); len(events) != 0 {
				t.Errorf("progress sent the watcher of %s %v", name, events)
			}
		}

		progressed.apply(next)
		other.apply(next)
		if got, want := progressed.store.resourceVersion(), other.store.resourceVersion(); got != want {
			t.Errorf("after revision %d the replica that had progress to %d is at %d, the other at %d", next, quiet, got, want)
		}
		for name := range numberingFilters {
			if got, want := progressed.events[name], other.events[name]; !slices.Equal(got, want) {
				t.Errorf("the watcher of %s on the replica that had progress to %d got\n%v\nthe other\n%v", name, quiet, got, want)
			}
		}
		if len(other.events["every node"]) == 0 {
			t.Errorf("revision %d made no event: the test proves less", next)
		}
	})
}
