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

package inputlog

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// runEngines runs a replica's Engines until the returned stop, or the
// test's end; its views are current as views says. The replica counts the
// times it was superseded in e.supersededTimes.
func runEngines(t *testing.T, client *clientv3.Client, identity string, generation int64, views *replicaViews) (*testEngines, func()) {
	t.Helper()
	e := &testEngines{Engines: NewEngines(client, "/gridview", identity, generation)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx, views.Current, func() { e.supersededTimes.Add(1) })
	}()
	stop := func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return e, stop
}

type testEngines struct {
	*Engines
	supersededTimes atomic.Int32
}

// replicaViews says whether a replica's views are current, as the test
// sets it, and counts the times its Engines asked.
type replicaViews struct {
	current atomic.Bool
	asked   atomic.Int32
}

func (v *replicaViews) Current() bool {
	v.asked.Add(1)
	return v.current.Load()
}

func isCurrent() *replicaViews {
	var views replicaViews
	views.current.Store(true)
	return &views
}

// readAnnouncements is the generation the announcements in etcd say serves,
// as a replica started now reads them: unlike a running replica's, its
// answer is not a watch that may not have caught up yet. It never
// announces.
func readAnnouncements(t *testing.T, client *clientv3.Client) int64 {
	t.Helper()
	latecomer, stop := runEngines(t, client, "latecomer", 3, &replicaViews{})
	defer stop()
	await(t, 20*time.Second, "a replica started now reading the announcements", func() bool { return latecomer.ServingGeneration() != 0 })
	return latecomer.ServingGeneration()
}

// awaitServing waits until every replica's Engines says generation serves.
func awaitServing(t *testing.T, generation int64, replicas ...*testEngines) {
	t.Helper()
	for _, e := range replicas {
		await(t, 20*time.Second, "the generation serving", func() bool { return e.ServingGeneration() == generation })
	}
}

// The engine generation a replica announced last serves, once that
// replica's views are current: a rolling update moves every replica of the
// old generation aside at the first new one ready, and its rollback moves
// them back; a replica that stops withdraws its announcement at once; one
// whose lease expired announces again without becoming the last.
func TestTheLastAnnouncedEngineServes(t *testing.T) {
	client, _ := startEtcd(t)
	old, _ := runEngines(t, client, "old", 1, isCurrent())
	awaitServing(t, 1, old)
	if _, superseded := old.Superseded(); superseded {
		t.Fatal("the only replica is superseded")
	}

	// Nothing else writes to etcd now: a revision that moved is an
	// announcement, however short-lived.
	before := revision(t, client)
	newViews := &replicaViews{}
	updated, _ := runEngines(t, client, "updated", 2, newViews)
	// Asked twice: it decided not to announce, then came back to ask again.
	await(t, 20*time.Second, "generation 2 asking again whether its views are current", func() bool { return newViews.asked.Load() >= 2 })
	if after := revision(t, client); after != before {
		t.Fatalf("a replica of generation 2 whose views are not current yet wrote to etcd: revision %d, then %d", before, after)
	}
	await(t, 20*time.Second, "generation 2 reading the announcements", func() bool { return updated.ServingGeneration() != 0 })
	if got := updated.ServingGeneration(); got != 1 {
		t.Fatalf("a replica of generation 2 whose views are not current yet: generation %d serves, want 1", got)
	}
	newViews.current.Store(true)
	awaitServing(t, 2, old, updated)
	if _, oldSuperseded := old.Superseded(); !oldSuperseded {
		t.Error("generation 1 is not superseded by generation 2")
	}
	if _, updatedSuperseded := updated.Superseded(); updatedSuperseded {
		t.Error("generation 2 is superseded by itself")
	}
	if got := old.supersededTimes.Load(); got != 1 {
		t.Errorf("generation 1 told %d times it was superseded, want once", got)
	}

	// A replica whose views are no longer current withdraws: the others'
	// generation serves until it is current again.
	newViews.current.Store(false)
	awaitServing(t, 1, old, updated)
	newViews.current.Store(true)
	awaitServing(t, 2, old, updated)

	// A replica of generation 1 whose lease expired (revoked here) announces
	// again as of its first announcement: generation 2 keeps serving.
	resp, err := client.Get(t.Context(), "/gridview/engines/old")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading the old replica's announcement: %v, %v", resp, err)
	}
	if _, err := client.Revoke(t.Context(), clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	await(t, 20*time.Second, "the old replica's announcement again", func() bool {
		again, err := client.Get(t.Context(), "/gridview/engines/old")
		return err == nil && len(again.Kvs) == 1 && again.Kvs[0].Lease != resp.Kvs[0].Lease
	})
	if got := readAnnouncements(t, client); got != 2 {
		t.Errorf("after the old replica announced again: the announcements say generation %d serves, want 2", got)
	}
	if got := updated.ServingGeneration(); got != 2 {
		t.Errorf("after the old replica announced again: generation %d serves, want 2", got)
	}

	// An announcement without a lease is no replica's, and ignored.
	if _, err := client.Put(t.Context(), "/gridview/engines/forged", `{"generation":7}`); err != nil {
		t.Fatal(err)
	}
	if got := readAnnouncements(t, client); got != 2 {
		t.Errorf("after an announcement without a lease: the announcements say generation %d serves, want 2", got)
	}
	if got := old.ServingGeneration(); got != 2 {
		t.Errorf("after an announcement without a lease: generation %d serves, want 2", got)
	}

	// A rollback: a replica of generation 1 started last serves.
	rolledBack, stopRolledBack := runEngines(t, client, "rolled-back", 1, isCurrent())
	awaitServing(t, 1, old, updated, rolledBack)
	if _, superseded := updated.Superseded(); !superseded {
		t.Error("generation 2 is not superseded after the rollback's first replica")
	}
	stopRolledBack()
	awaitServing(t, 2, old, updated)
}

// The announcements' watch shares its stream with the reader's; etcd
// answers none of a stream's progress requests while one of its watches
// starts after the revision etcd is at. A reader whose last revision to
// reach changed no input must still learn it reached it, with the
// announcements followed and nothing written since.
func TestFollowingTheAnnouncementsLeavesTheReaderItsProgress(t *testing.T) {
	client, _ := startEtcd(t)
	if _, err := client.Put(t.Context(), "/elsewhere", "not an input"); err != nil {
		t.Fatal(err)
	}
	watcher := &announcementsWatcher{Watcher: client.Watcher}
	client.Watcher = watcher
	runEngines(t, client, "replica", 1, &replicaViews{})
	// The reader's watch, asked after, starts on the stream after it.
	await(t, 20*time.Second, "the replica watching the announcements", watcher.asked.Load)
	reader, _ := read(t, client)
	await(t, 20*time.Second, "the reader current", reader.Current)
}

// announcementsWatcher is a client's Watcher that says when a watch of the
// engine announcements was asked of it: the client creates the watches of a
// stream in the order asked.
type announcementsWatcher struct {
	clientv3.Watcher
	asked atomic.Bool
}

func (w *announcementsWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	ch := w.Watcher.Watch(ctx, key, opts...)
	if key == enginesPrefix("/gridview") {
		w.asked.Store(true)
	}
	return ch
}
