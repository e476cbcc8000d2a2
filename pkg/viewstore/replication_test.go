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
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// replica is a feed whose informers' stores the test writes and whose
// queue it drains: the order of its inputs is the test's.
type replica struct {
	feed     *Feed
	store    *Store
	indexer  map[kind]cache.Indexer
	recorder *record.FakeRecorder
}

func newReplica(t *testing.T) *replica {
	t.Helper()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	store := New(Options{HistorySize: 100000, WatcherBuffer: 100000, BookmarkInterval: time.Hour})
	core := factory.Core().V1()
	recorder := record.NewFakeRecorder(1000)
	feed, err := NewFeed(store, core.Nodes(), core.Services(), factory.Discovery().V1().EndpointSlices(), core.Namespaces(), recorder)
	if err != nil {
		t.Fatal(err)
	}
	return &replica{feed: feed, store: store, recorder: recorder, indexer: map[kind]cache.Indexer{
		nodeKind: core.Nodes().Informer().GetIndexer(), serviceKind: core.Services().Informer().GetIndexer(),
		sliceKind: factory.Discovery().V1().EndpointSlices().Informer().GetIndexer(), namespaceKind: core.Namespaces().Informer().GetIndexer(),
	}}
}

// write puts a change into the informers' stores, as a watch event would,
// each object at a resourceVersion of its own.
func (r *replica) write(ch change, rv int) {
	indexer := r.indexer[ch.kind]
	if ch.object == nil {
		if old, ok, _ := indexer.GetByKey(cache.NewObjectName(ch.key.Namespace, ch.key.Name).String()); ok {
			_ = indexer.Delete(old)
		}
		return
	}
	ch.object.SetResourceVersion(strconv.Itoa(rv))
	_ = indexer.Update(ch.object)
}

// load lists the informers' stores into the store.
func (r *replica) load(t *testing.T) {
	t.Helper()
	if err := r.feed.load(); err != nil {
		t.Fatal(err)
	}
}

// drain applies what the feed's queue holds.
func (r *replica) drain() {
	for r.feed.queue.Len() > 0 {
		key, _ := r.feed.queue.Get()
		r.feed.apply(key)
		r.feed.queue.Done(key)
	}
}

// follow runs r's feed on the leader's inputs until the returned stop is
// called, which waits for Follow to return.
func (r *replica) follow(t *testing.T, leader *replica) (stop func()) {
	return r.followThrough(t, leader, func(in io.ReadCloser) io.ReadCloser { return in })
}

// followThrough is follow with what the leader sends read through wrap.
func (r *replica) followThrough(t *testing.T, leader *replica, wrap func(io.ReadCloser) io.ReadCloser) (stop func()) {
	stopWith := r.followStoppedBy(t, leader, wrap)
	return func() { stopWith(nil) }
}

// followStoppedBy is followThrough stopped with a cause, as the server stops
// following when the Lease moves.
func (r *replica) followStoppedBy(t *testing.T, leader *replica, wrap func(io.ReadCloser) io.ReadCloser) (stop func(cause error)) {
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.feed.Follow(ctx, func(ctx context.Context, from *Position) (io.ReadCloser, error) {
			in, out := io.Pipe()
			go func() { out.CloseWithError(leader.feed.ServeInputs(ctx, out, func() {}, from)) }()
			return wrap(in), nil
		}); err != nil {
			t.Errorf("following: %v", err)
		}
	}()
	return func(cause error) {
		cancel(cause)
		<-done
	}
}

// startFollower watches a filter from the store's resourceVersion.
func startFollower(t *testing.T, s *Store, name string, f Filter) *follower {
	t.Helper()
	list, err := s.List(f, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(t.Context(), f, watchstream.WatchOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	fl := &follower{name: name, f: f, w: w, state: fullState(list)}
	fl.last, _ = strconv.ParseUint(list.ResourceVersion, 10, 64)
	t.Cleanup(w.Stop)
	return fl
}

// list is a fresh list's state.
func list(t *testing.T, s *Store, f Filter) map[string]string {
	t.Helper()
	l, err := s.List(f, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fullState(l)
}

// TestAFollowerNumbersEveryChangeAsTheLeader makes seeded random changes on
// a leader while a replica follows it: watchers of every node on both see
// the same events at the same resourceVersions. Then the follower stops
// following, as when it takes the Lease, while the leader makes more
// changes: a client resumes on it from a resourceVersion of the leader's
// that it holds, and gets 410 from one it never numbered.
func TestAFollowerNumbersEveryChangeAsTheLeader(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { followerRandom(t, seed) })
		})
	}
}

func followerRandom(t *testing.T, seed uint64) {
	c := newRandomCluster(seed)
	leader, next := newReplica(t), newReplica(t)
	rv := 0
	writeBoth := func(ch change) {
		rv++
		leader.write(ch, rv)
		next.write(ch, rv)
	}
	initial := c.initial()
	for _, obj := range initial.Nodes {
		writeBoth(change{kind: nodeKind, key: keyOf(nodeKind, obj).NamespacedName, object: obj})
	}
	for _, obj := range initial.Services {
		writeBoth(change{kind: serviceKind, key: keyOf(serviceKind, obj).NamespacedName, object: obj})
	}
	for _, obj := range initial.Slices {
		writeBoth(change{kind: sliceKind, key: keyOf(sliceKind, obj).NamespacedName, object: obj})
	}
	leader.load(t)
	next.load(t)
	if leader.store.resourceVersion() == next.store.resourceVersion() {
		t.Fatal("two stores loaded at the same resourceVersion: the test would prove nothing")
	}
	// Changes before the follower starts reach it in the leader's state.
	onLeader := func(steps int) {
		for range steps {
			ch := c.change()
			rv++
			leader.write(ch, rv)
			leader.feed.apply(inputKey{kind: ch.kind, NamespacedName: ch.key})
		}
	}
	onLeader(50)
	stop := next.follow(t, leader)
	synctest.Wait()
	if got, want := next.store.resourceVersion(), leader.store.resourceVersion(); got != want {
		t.Fatalf("the follower is at resourceVersion %d, the leader at %d", got, want)
	}

	var onBoth [2][]*follower
	for i, r := range []*replica{leader, next} {
		for _, n := range c.nodeNames {
			onBoth[i] = append(onBoth[i], startFollower(t, r.store, n, nodeWatch(n)))
		}
		onBoth[i] = append(onBoth[i], startFollower(t, r.store, "cluster", Filter{}))
	}
	onLeader(300)
	synctest.Wait()
	for i := range onBoth[0] {
		onLeader, onFollower := onBoth[0][i], onBoth[1][i]
		onLeader.drain(t, false)
		onFollower.drain(t, false)
		if !reflect.DeepEqual(onLeader.seen, onFollower.seen) {
			t.Fatalf("%s: the follower's events differ from the leader's:\n got %v\nwant %v", onLeader.name, onFollower.seen, onLeader.seen)
		}
	}
	if len(onBoth[0][len(onBoth[0])-1].seen) == 0 {
		t.Fatal("no event in 300 changes: the test would prove nothing")
	}

	// The follower stops following; the leader, which does not know yet,
	// numbers more changes.
	followed := next.store.resourceVersion()
	stop()
	// A replica that follows the new leader before it applied anything
	// numbers on where it does, past the jump, not where the old leader's
	// inputs left it.
	third := newReplica(t)
	stopThird := third.follow(t, next)
	synctest.Wait()
	if got, want := third.store.resourceVersion(), next.store.resourceVersion(); got != want {
		t.Errorf("a replica following the new leader is at resourceVersion %d, the new leader at %d", got, want)
	}
	stopThird()
	onLeader(20)
	synctest.Wait()
	for _, fl := range onBoth[0] {
		fl.drain(t, false)
	}
	for _, kind := range []kind{nodeKind, serviceKind, sliceKind, namespaceKind} {
		if err := next.indexer[kind].Replace(leader.indexer[kind].List(), ""); err != nil {
			t.Fatal(err)
		}
		for _, key := range leader.indexer[kind].ListKeys() {
			namespace, name, _ := cache.SplitMetaNamespaceKey(key)
			next.feed.queue.Add(inputKey{kind: kind, NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}})
		}
	}
	next.drain()

	// Each watcher of the leader resumes on the follower from every
	// resourceVersion it received: from those the follower numbered too, as
	// on the leader, and ends equal to a fresh list; from the others it gets
	// 410.
	leaderList, err := leader.store.List(Filter{}, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := list(t, next.store, Filter{}), fullState(leaderList); !maps.Equal(got, want) {
		t.Fatalf("after taking over, the follower's views differ from the leader's:\n got %v\nwant %v", got, want)
	}
	resumed, refused := 0, 0
	for _, fl := range onBoth[0] {
		for _, at := range fl.seen {
			atRV, _ := strconv.ParseUint(at.rv, 10, 64)
			w, err := next.store.Watch(t.Context(), fl.f, watchstream.WatchOptions{ResourceVersion: at.rv})
			if atRV > followed {
				if !apierrors.IsResourceExpired(err) {
					t.Errorf("%s resumed from %d, which only the leader numbered (it sent up to %d): %v, want 410", fl.name, atRV, followed, err)
				}
				refused++
				continue
			}
			if err != nil {
				// As the leader would: a watch across its node's deletion is.
				onTheLeader, leaderErr := leader.store.Watch(t.Context(), fl.f, watchstream.WatchOptions{ResourceVersion: at.rv})
				if leaderErr == nil {
					onTheLeader.Stop()
					t.Fatalf("%s resumed from %d, which the follower numbered too: %v; the leader resumes", fl.name, atRV, err)
				}
				continue
			}
			r := &follower{name: fl.name + " resumed from " + at.rv, f: fl.f, w: w, state: maps.Clone(at.state), last: atRV}
			synctest.Wait()
			r.drain(t, false)
			w.Stop()
			if got, want := r.state, list(t, next.store, fl.f); !maps.Equal(got, want) {
				t.Errorf("%s differs from a fresh list:\n got %v\nwant %v", r.name, got, want)
			}
			resumed++
		}
	}
	if resumed == 0 || refused == 0 {
		t.Fatalf("resumed %d times, refused %d times: the test proves nothing", resumed, refused)
	}
}

// TestAReplicaThatCannotReadTheLeaderAppliesItsInformers checks that a
// replica whose leader cannot be read (its RBAC refuses, the network drops
// the connection) keeps its own views current meanwhile.
func TestAReplicaThatCannotReadTheLeaderAppliesItsInformers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newReplica(t)
		r.write(change{kind: nodeKind, key: types.NamespacedName{Name: "edge-1"}, object: node("edge-1", "a")}, 1)
		r.load(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			_ = r.feed.Follow(ctx, func(context.Context, *Position) (io.ReadCloser, error) {
				return nil, errors.New("403 Forbidden")
			})
		}()
		synctest.Wait()
		before := r.store.resourceVersion()
		r.write(change{kind: nodeKind, key: types.NamespacedName{Name: "edge-1"}, object: node("edge-1", "b")}, 2)
		r.feed.apply(inputKey{kind: nodeKind, NamespacedName: types.NamespacedName{Name: "edge-1"}})
		if r.store.resourceVersion() == before {
			t.Error("a node moved while the leader could not be read, and the views did not change")
		}
	})
}

// TestAReplicaServesNoInputsBeforeItsViewsAreLoaded checks that a replica
// restarted in place, which the Lease may still name, gives its followers
// no empty state.
func TestAReplicaServesNoInputsBeforeItsViewsAreLoaded(t *testing.T) {
	r := newReplica(t)
	if err := r.feed.ServeInputs(t.Context(), io.Discard, func() {}, nil); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("serving the inputs of views not loaded: %v, want %v", err, ErrNotLoaded)
	}
}

// TestAReplicaThatTakesOverSendsNoEventTheLeaderSent checks that the
// rules the leader chose, and reported, while a replica followed it are not
// news to that replica once it applies its informers again.
func TestAReplicaThatTakesOverSendsNoEventTheLeaderSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader, next := newReplica(t), newReplica(t)
		key := types.NamespacedName{Namespace: "demo", Name: "echo"}
		echo := func(annotations map[string]string, labels map[string]string) change {
			return change{kind: serviceKind, key: key, object: service("demo", "echo", labels, annotations)}
		}
		gridviewOnly := map[string]string{topology.AnnotationGridviewKeys: "unit"}
		several := map[string]string{topology.AnnotationGridviewKeys: "unit", topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}
		leader.write(echo(gridviewOnly, nil), 1)
		next.write(echo(gridviewOnly, nil), 1)
		// A Service whose rules the leader chose before the follower
		// started, and whose first version the follower's informers
		// missed: the follower learns them from the leader's state.
		otherKey := types.NamespacedName{Namespace: "demo", Name: "other"}
		other := func(labels map[string]string) change {
			return change{kind: serviceKind, key: otherKey, object: service("demo", "other", labels, several)}
		}
		leader.write(other(nil), 1)
		leader.load(t)
		next.load(t)
		stop := next.follow(t, leader)
		synctest.Wait()

		leader.write(echo(several, nil), 2)
		leader.drain()
		leader.feed.apply(inputKey{kind: serviceKind, NamespacedName: key})
		synctest.Wait()
		if len(leader.recorder.Events) != 1 {
			t.Fatalf("the leader sent %d Events for the rules it chose, want 1", len(leader.recorder.Events))
		}
		stop()
		// Its informers bring a later change of the same Service, with
		// the same rules.
		next.write(echo(several, map[string]string{"app": "echo"}), 3)
		next.write(other(map[string]string{"app": "other"}), 4)
		next.drain()
		select {
		case event := <-next.recorder.Events:
			t.Errorf("the replica that took over reported the leader's choice again: %q", event)
		default:
		}
	})
}

// A follower says how long it has held the leader's state, which its
// readiness waits on: from the load on, and nothing once it no longer
// follows.
func TestFollowedForCountsFromTheLeadersState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader, next := newReplica(t), newReplica(t)
		leader.write(change{kind: nodeKind, key: types.NamespacedName{Name: "edge-1"}, object: node("edge-1", "a")}, 1)
		leader.load(t)
		next.load(t)
		time.Sleep(time.Minute) // its own views' age does not count
		if got := next.feed.FollowedFor(); got != 0 {
			t.Errorf("before following: FollowedFor = %v, want 0", got)
		}
		stop := next.follow(t, leader)
		synctest.Wait()
		time.Sleep(40 * time.Second)
		if got := next.feed.FollowedFor(); got != 40*time.Second {
			t.Errorf("40 s after loading the leader's state: FollowedFor = %v", got)
		}
		stop()
		if got := next.feed.FollowedFor(); got != 0 {
			t.Errorf("after following: FollowedFor = %v, want 0", got)
		}
	})
}

// TestAFollowerLeavesOnlyASilentLeader checks the follower's watchdog: a
// leader that sends nothing for three heartbeats is left, one whose state
// arrives slowly, a few bytes at a time, then heartbeats, is not.
func TestAFollowerLeavesOnlyASilentLeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		// gap is the pause before each chunk of the leader's state, and
		// chunk its size in bytes.
		gap        time.Duration
		chunk      int
		heartbeats bool
		wantLeave  bool
	}{
		{name: "the state at once, then silence", chunk: 1 << 20, wantLeave: true},
		{name: "the state a few bytes every 5 s, then heartbeats", gap: 5 * time.Second, chunk: 16, heartbeats: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				leader, next := newReplica(t), newReplica(t)
				for i, n := range []string{"edge-1", "edge-2"} {
					leader.write(change{kind: nodeKind, key: types.NamespacedName{Name: n}, object: node(n, "a")}, i+1)
				}
				leader.write(change{kind: sliceKind, key: types.NamespacedName{Namespace: "demo", Name: "echo-x"}, object: slice("demo", "echo", "edge-1", "edge-2")}, 3)
				leader.load(t)
				next.load(t)
				state := leaderState(t, leader)
				if len(state)/tc.chunk < 3 && !tc.wantLeave {
					t.Fatalf("a state of %d bytes in chunks of %d: the test proves nothing", len(state), tc.chunk)
				}
				ctx, cancel := context.WithCancel(t.Context())
				var leaderWrites sync.WaitGroup
				opened, done := 0, make(chan error, 1)
				defer func() {
					cancel()
					<-done
					leaderWrites.Wait()
				}()
				go func() {
					done <- next.feed.Follow(ctx, func(ctx context.Context, _ *Position) (io.ReadCloser, error) {
						if opened++; opened > 1 {
							return nil, errors.New("connection refused")
						}
						in, out := io.Pipe()
						context.AfterFunc(ctx, func() { in.Close() })
						leaderWrites.Go(func() {
							for rest := state; len(rest) > 0; {
								time.Sleep(tc.gap)
								n := min(tc.chunk, len(rest))
								if _, err := out.Write(rest[:n]); err != nil {
									return
								}
								rest = rest[n:]
							}
							for tc.heartbeats {
								time.Sleep(heartbeatInterval)
								w := bufio.NewWriter(out)
								if writeHeartbeat(w) != nil || w.Flush() != nil {
									return
								}
							}
						})
						return in, nil
					})
				}()
				sent := time.Duration(len(state)/tc.chunk+1) * tc.gap
				time.Sleep(sent + 3*heartbeatInterval - time.Second)
				synctest.Wait()
				if !next.store.following.Load() {
					t.Fatalf("not following %s after the leader began its state", sent+3*heartbeatInterval-time.Second)
				}
				time.Sleep(2*time.Second + followGrace + 2*time.Second)
				synctest.Wait()
				select {
				case err := <-done:
					done <- err
					if !tc.wantLeave {
						t.Errorf("the follower left a leader that was still sending: %v", err)
					}
				default:
					if tc.wantLeave {
						t.Errorf("the follower still follows a leader silent for %s", 3*heartbeatInterval+followGrace+3*time.Second)
					}
				}
			})
		})
	}
}

// leaderState is what a leader sends a new follower first: its state.
func leaderState(t *testing.T, leader *replica) []byte {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := leader.feed.ServeInputs(ctx, &out, cancel, nil); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestAFollowerWaitsForAResourceVersionTheLeaderIssued checks a read on a
// follower from a resourceVersion the leader issued for an input the
// follower has yet to apply, as when the leader's clients come the moment
// it goes: the read waits and is served. One beyond anything the leader
// issued gets "Too large resource version" with a Retry-After, not 410.
func TestAFollowerWaitsForAResourceVersionTheLeaderIssued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader, next := newReplica(t), newReplica(t)
		echo := func(nodes ...string) change {
			return change{kind: sliceKind, key: types.NamespacedName{Namespace: "demo", Name: "echo-x"}, object: slice("demo", "echo", nodes...)}
		}
		for _, r := range []*replica{leader, next} {
			r.write(change{kind: nodeKind, key: types.NamespacedName{Name: "edge-1"}, object: node("edge-1", "a")}, 1)
			r.write(change{kind: serviceKind, key: types.NamespacedName{Namespace: "demo", Name: "echo"}, object: service("demo", "echo", nil, nil)}, 2)
			r.write(echo("edge-1"), 3)
			r.load(t)
		}
		// Once armed, what the leader sends reaches the follower only when
		// the gate opens.
		var armed atomic.Bool
		gate := make(chan struct{})
		release := sync.OnceFunc(func() { close(gate) })
		stop := next.followThrough(t, leader, func(in io.ReadCloser) io.ReadCloser { return gatedReader{in, &armed, gate} })
		defer func() {
			release()
			stop()
		}()
		synctest.Wait()
		if !next.store.following.Load() {
			t.Fatal("the replica does not follow the leader")
		}

		armed.Store(true)
		leader.write(echo("edge-1", "edge-2"), 4)
		leader.feed.apply(inputKey{kind: sliceKind, NamespacedName: types.NamespacedName{Namespace: "demo", Name: "echo-x"}})
		issued := leader.store.resourceVersion()
		rv := strconv.FormatUint(issued, 10)
		waited := make(chan error, 1)
		go func() { waited <- next.store.AwaitFresh(t.Context(), rv, "") }()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case err := <-waited:
			t.Fatalf("a read from resourceVersion %s, which the follower has yet to reach, did not wait: %v", rv, err)
		default:
		}
		release()
		if err := <-waited; err != nil {
			t.Fatalf("a read from resourceVersion %s, which the leader issued: %v", rv, err)
		}
		w, err := next.store.Watch(t.Context(), nodeWatch("edge-1"), watchstream.WatchOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatalf("a watch from resourceVersion %s, which the leader issued, after the wait: %v", rv, err)
		}
		w.Stop()

		beyond := strconv.FormatUint(issued+1<<eventBits, 10)
		if err := next.store.AwaitFresh(t.Context(), beyond, ""); !storage.IsTooLargeResourceVersion(err) {
			t.Errorf("a read from resourceVersion %s, which no replica issued: %v, want Too large resource version", beyond, err)
		}
		token := continueToken{RV: issued + 1<<eventBits}.encode()
		if err := next.store.AwaitFresh(t.Context(), "", token); !storage.IsTooLargeResourceVersion(err) {
			t.Errorf("a page from a continue token at resourceVersion %s, which no replica issued: %v, want Too large resource version", beyond, err)
		}
	})
}

// gatedReader holds what it read, once armed, until gate is closed.
type gatedReader struct {
	io.ReadCloser
	armed *atomic.Bool
	gate  <-chan struct{}
}

func (r gatedReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if r.armed.Load() {
		<-r.gate
	}
	return n, err
}

// A follower that numbers an input of the leader's otherwise than the leader
// stops following and ends the watches it served as the leader's follower:
// they were sent resourceVersions that name other changes on the leader.
func TestADivergedFollowerEndsTheWatchesItServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader, next := newReplica(t), newReplica(t)
		echoKey := inputKey{kind: sliceKind, NamespacedName: types.NamespacedName{Namespace: "demo", Name: "echo-x"}}
		leader.write(change{kind: nodeKind, key: types.NamespacedName{Name: "edge-1"}, object: node("edge-1", "a")}, 1)
		leader.write(change{kind: serviceKind, key: types.NamespacedName{Namespace: "demo", Name: "echo"}, object: service("demo", "echo", nil, nil)}, 2)
		leader.write(change{kind: sliceKind, key: echoKey.NamespacedName, object: slice("demo", "echo", "edge-1")}, 3)
		leader.load(t)
		next.load(t)
		followed := make(chan error, 1)
		go func() {
			followed <- next.feed.Follow(t.Context(), func(ctx context.Context, from *Position) (io.ReadCloser, error) {
				in, out := io.Pipe()
				go func() { out.CloseWithError(leader.feed.ServeInputs(ctx, out, func() {}, from)) }()
				return in, nil
			})
		}()
		synctest.Wait()
		from := strconv.FormatUint(next.store.resourceVersion(), 10)
		served, err := next.store.Watch(AsFollower(t.Context()), nodeWatch("edge-1"), watchstream.WatchOptions{ResourceVersion: from})
		if err != nil {
			t.Fatalf("a watch served as the leader's follower: %v", err)
		}
		defer served.Stop()

		// A change the leader never made, as a bug in the follower's engine
		// would number one: it moves its resourceVersion alone.
		next.store.SetNode(node("edge-9", "b"))
		leader.write(change{kind: sliceKind, key: echoKey.NamespacedName, object: slice("demo", "echo", "edge-1", "edge-9")}, 4)
		leader.feed.apply(echoKey)
		synctest.Wait()
		select {
		case err := <-followed:
			if !errors.As(err, &divergedError{}) {
				t.Fatalf("following ended with %v, want the divergence: the test proves nothing", err)
			}
		default:
			t.Fatal("the follower goes on following a leader it numbers otherwise than")
		}
		for {
			synctest.Wait()
			select {
			case _, open := <-served.ResultChan():
				if open {
					continue
				}
			default:
				t.Error("the watch served as the leader's follower goes on after the follower diverged")
			}
			return
		}
	})
}

// A follower serves a watch itself only where it answers as the leader
// would: from any state, or from a resourceVersion it reached since it
// loaded the leader's state; and none once it numbers changes on its own.
// The watches it served end when another replica leads, and go on when it
// may lead itself.
func TestAFollowerServesTheWatchesItHoldsTheHistoryOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cause   error
		wantEnd bool
	}{
		{name: "another replica leads", cause: ErrAnotherLeads, wantEnd: true},
		{name: "this replica may lead", cause: nil, wantEnd: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { followerServesWatches(t, tc.cause, tc.wantEnd) })
		})
	}
}

func followerServesWatches(t *testing.T, cause error, wantEnd bool) {
	leader, next := newReplica(t), newReplica(t)
	echoKey := inputKey{kind: sliceKind, NamespacedName: types.NamespacedName{Namespace: "demo", Name: "echo-x"}}
	echo := func(rv int, nodes ...string) {
		leader.write(change{kind: sliceKind, key: echoKey.NamespacedName, object: slice("demo", "echo", nodes...)}, rv)
		leader.feed.apply(echoKey)
	}
	leader.write(change{kind: nodeKind, key: types.NamespacedName{Name: "edge-1"}, object: node("edge-1", "a")}, 1)
	leader.write(change{kind: serviceKind, key: types.NamespacedName{Namespace: "demo", Name: "echo"}, object: service("demo", "echo", nil, nil)}, 2)
	leader.load(t)
	next.load(t)
	echo(3, "edge-1")
	beforeLoad := leader.store.resourceVersion()
	echo(4, "edge-1", "edge-2")
	stop := next.followStoppedBy(t, leader, func(in io.ReadCloser) io.ReadCloser { return in })
	defer stop(nil)
	synctest.Wait()
	loaded := next.store.resourceVersion()
	echo(5, "edge-1", "edge-2", "edge-3")
	synctest.Wait()
	reached := next.store.resourceVersion()
	if !next.store.following.Load() || loaded <= beforeLoad || reached <= loaded {
		t.Fatalf("following %v, resourceVersions %d before the load, %d loaded, %d reached: the test proves nothing",
			next.store.following.Load(), beforeLoad, loaded, reached)
	}
	format := func(rv uint64) string { return strconv.FormatUint(rv, 10) }
	for _, tc := range []struct {
		name, resourceVersion string
		want                  bool
	}{
		{name: "any state", resourceVersion: "0", want: true},
		{name: "the latest state", resourceVersion: ""},
		{name: "the loaded state", resourceVersion: format(loaded), want: true},
		{name: "a change since", resourceVersion: format(reached), want: true},
		{name: "before the load", resourceVersion: format(beforeLoad)},
		{name: "not reached yet", resourceVersion: format(reached + 1)},
		{name: "malformed", resourceVersion: "x"},
	} {
		// No t.Run: a synctest bubble cannot start subtests.
		if got := next.store.ServesWatch(t.Context(), tc.resourceVersion); got != tc.want {
			t.Errorf("%s: ServesWatch(%q) = %v, want %v", tc.name, tc.resourceVersion, got, tc.want)
		}
	}
	// A re-watch from a change the leader numbered a moment ago, which
	// the follower reaches while the watch waits.
	echo(6, "edge-1", "edge-3")
	numbered := leader.store.resourceVersion()
	if next.store.resourceVersion() >= numbered {
		t.Fatalf("the follower reached %d before the watch came: the test proves nothing", numbered)
	}
	if !next.store.ServesWatch(t.Context(), format(numbered)) {
		t.Errorf("ServesWatch(%d), reached by the follower within %s: false, want true", numbered, followerWait)
	}
	reached = numbered
	served, err := next.store.Watch(AsFollower(t.Context()), nodeWatch("edge-1"), watchstream.WatchOptions{ResourceVersion: format(reached)})
	if err != nil {
		t.Fatalf("a watch from resourceVersion %d, served as the leader's follower: %v", reached, err)
	}
	defer served.Stop()

	stop(cause)
	if next.store.ServesWatch(t.Context(), format(reached)) {
		t.Errorf("a replica that numbers changes on its own serves watches as a follower")
	}
	synctest.Wait()
	select {
	case ev, open := <-served.ResultChan():
		switch {
		case open:
			t.Errorf("the watch served as the leader's follower got %s %v", ev.Type, ev.Object)
		case !wantEnd:
			t.Errorf("the watch served as the leader's follower ended, though this replica may lead next")
		}
	default:
		if wantEnd {
			t.Errorf("the watch served as the leader's follower goes on after another replica leads")
		}
	}
	// One that ServesWatch gave it just before it stopped is refused, to
	// be watched again through the leader or as this replica's own.
	if _, err := next.store.Watch(AsFollower(t.Context()), nodeWatch("edge-1"), watchstream.WatchOptions{ResourceVersion: format(reached)}); !apierrors.IsTooManyRequests(err) {
		t.Errorf("a watch given to the replica as the leader's follower, started after it stopped following: %v, want 429", err)
	}
	if w, err := next.store.Watch(t.Context(), nodeWatch("edge-1"), watchstream.WatchOptions{ResourceVersion: format(reached)}); err != nil {
		t.Errorf("a watch from resourceVersion %d on the replica that numbers on its own: %v", reached, err)
	} else {
		w.Stop()
	}
}

// Replicas that stop following one leader at the same change number on past
// all it may have numbered, and apart from each other: pairs of them land
// within a takeover's changes of each other (65,536) hardly ever, where a
// jump by whole multiples of the gap made every pair that drew the same
// multiple collide, one in 256.
func TestReplicasThatStopFollowingAtOneChangeNumberApart(t *testing.T) {
	const (
		at, pairs = uint64(1) << 40, 10000
		takeover  = 1 << 16
	)
	near := 0
	for range pairs {
		a, b := takeoverJump(at), takeoverJump(at)
		for _, jump := range []uint64{a, b} {
			if jump < at+takeoverGap || jump >= at+257*takeoverGap {
				t.Fatalf("from change %d: jumped to %d, want at least %d and within 257 gaps", at, jump, at+takeoverGap)
			}
		}
		if max(a, b)-min(a, b) < takeover {
			near++
		}
	}
	// About 0.5 expected; 39 with whole multiples.
	if near >= 10 {
		t.Errorf("%d pairs of %d landed within %d changes of each other", near, pairs, takeover)
	}
}
