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
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"k8s.io/klog/v2"
)

// Engines tells which engine generation serves the views when replicas of
// different gridview versions run at once, during a rolling update or its
// rollback. Each replica's resourceVersions carry its engine's generation,
// so no client ever gets another engine's content under a number it holds;
// but a client that lists on one generation and watches on another gets
// 410 and lists again, as many times as it crosses. So one generation
// serves: the one a replica announced last. Each replica announces its
// generation while its views are current, under its own etcd lease, and the
// replicas of every other generation stop serving (not ready, their watches
// ended, reads answered 429) until no replica of the serving one is
// announced. A rolling update thus moves every client across once, at the
// first new replica that is current, and its rollback moves them back once;
// a replica of the old generation started during the update (a restart)
// is the last to announce, and moves them back until the next new one.
type Engines struct {
	client     *clientv3.Client
	prefix     string
	key        string
	generation int64

	mu sync.Mutex
	// serving is the generation last announced by a live replica, 0 while
	// none is known.
	serving int64
	// superseded is called when another generation comes to serve.
	superseded func()
}

// announcement is what a replica writes of itself: its engine's generation,
// and since when it announced (its first announcement's revision), which a
// replica that announces again after its lease expired keeps, so that it
// does not become the last announcement by coming back.
type announcement struct {
	Generation int64 `json:"generation"`
	Since      int64 `json:"since,omitempty"`
}

// NewEngines returns the Engines of a replica named identity whose engine
// is of generation, under gridview's etcd prefix.
func NewEngines(client *clientv3.Client, etcdPrefix, identity string, generation int64) *Engines {
	prefix := enginesPrefix(etcdPrefix)
	return &Engines{client: client, prefix: prefix, key: prefix + identity, generation: generation}
}

// ServingGeneration is the engine generation that serves the views, 0 while no
// replica has announced one.
func (e *Engines) ServingGeneration() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.serving
}

// Superseded says whether another generation than this replica's serves,
// and which serves.
func (e *Engines) Superseded() (serving int64, superseded bool) {
	serving = e.ServingGeneration()
	return serving, serving != 0 && serving != e.generation
}

// Run follows the announcements, and announces this replica's generation
// while current says its views are current, until ctx ends; then it
// withdraws the announcement. superseded is called whenever another
// generation comes to serve.
func (e *Engines) Run(ctx context.Context, current func() bool, superseded func()) {
	e.mu.Lock()
	e.superseded = superseded
	e.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { e.follow(ctx) })
	e.announce(ctx, current)
	wg.Wait()
}

// announce announces while current holds. A replica that is not current
// withdraws: one that fell behind, or lost etcd, would keep the others of
// its generation serving and those of another refusing, while it cannot
// serve itself.
func (e *Engines) announce(ctx context.Context, current func() bool) {
	var since int64
	for ctx.Err() == nil {
		if !current() {
			pause(ctx, time.Second)
			continue
		}
		lease, err := e.put(ctx, since)
		if err != nil {
			klog.ErrorS(err, "Cannot announce this replica's engine generation", "generation", e.generation)
			pause(ctx, time.Second)
			continue
		}
		if since == 0 {
			since = lease.created
		}
		e.hold(ctx, lease, current)
	}
}

// hold keeps an announcement until the replica is no longer current, its
// lease expired, or ctx ends; then it withdraws it.
func (e *Engines) hold(ctx context.Context, lease announced, current func() bool) {
	defer revoke(ctx, e.client, lease.session, "engine announcement")
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		select {
		case <-lease.session.Done():
			klog.InfoS("The etcd lease of this replica's engine announcement expired; announcing again once current", "generation", e.generation)
			return
		case <-ctx.Done():
			return
		case <-check.C:
			if !current() {
				klog.InfoS("Withdrawing this replica's engine announcement while its views are not current", "generation", e.generation)
				return
			}
		}
	}
}

type announced struct {
	session *concurrency.Session
	created int64
}

func (e *Engines) put(ctx context.Context, since int64) (announced, error) {
	value, err := json.Marshal(announcement{Generation: e.generation, Since: since})
	if err != nil {
		return announced{}, err
	}
	session, err := concurrency.NewSession(e.client, concurrency.WithTTL(sessionTTL), concurrency.WithContext(ctx))
	if err != nil {
		return announced{}, fmt.Errorf("opening an etcd session: %w", err)
	}
	resp, err := e.client.Put(ctx, e.key, string(value), clientv3.WithLease(session.Lease()))
	if err != nil {
		session.Close()
		return announced{}, fmt.Errorf("writing %s: %w", e.key, err)
	}
	klog.InfoS("Announced this replica's engine generation", "generation", e.generation, "key", e.key)
	return announced{session: session, created: resp.Header.Revision}, nil
}

// follow keeps serving up to date with the announcements.
func (e *Engines) follow(ctx context.Context) {
	for ctx.Err() == nil {
		if err := e.followOnce(ctx); err != nil && ctx.Err() == nil {
			klog.V(2).InfoS("Following the engine announcements again", "err", err)
			pause(ctx, time.Second)
		}
	}
}

func (e *Engines) followOnce(ctx context.Context) error {
	resp, err := e.client.Get(ctx, e.prefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("reading the engine announcements: %w", err)
	}
	byKey := map[string]announcement{}
	for _, kv := range resp.Kvs {
		byKey[string(kv.Key)] = parseAnnouncement(kv)
	}
	e.update(byKey)
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	// From the read's revision itself, whose changes apply again harmlessly:
	// the watch shares its stream with the reader's, and etcd answers a
	// stream's progress requests only while none of its watches starts
	// after the revision etcd is at, so a watch of the next revision would
	// keep the reader from learning it is current until etcd's next write.
	for wr := range e.client.Watch(ctx, e.prefix, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision)) {
		if err := wr.Err(); err != nil {
			return fmt.Errorf("watching the engine announcements: %w", err)
		}
		for _, ev := range wr.Events {
			if ev.Type == mvccpb.DELETE {
				delete(byKey, string(ev.Kv.Key))
			} else {
				byKey[string(ev.Kv.Key)] = parseAnnouncement(ev.Kv)
			}
		}
		e.update(byKey)
	}
	return ctx.Err()
}

// parseAnnouncement reads an announcement; one announced first is since its
// key was created.
func parseAnnouncement(kv *mvccpb.KeyValue) announcement {
	var a announcement
	if kv.Lease == 0 {
		// Not a replica's: it would never go.
		klog.ErrorS(nil, "Ignoring an engine announcement written without a lease", "key", string(kv.Key))
		return announcement{}
	}
	if err := json.Unmarshal(kv.Value, &a); err != nil {
		klog.ErrorS(err, "Ignoring an engine announcement that cannot be read", "key", string(kv.Key))
		return announcement{}
	}
	if a.Since == 0 {
		a.Since = kv.CreateRevision
	}
	return a
}

func (e *Engines) update(byKey map[string]announcement) {
	var last announcement
	for _, a := range byKey {
		if a.Generation != 0 && a.Since > last.Since {
			last = a
		}
	}
	e.mu.Lock()
	changed := e.serving != last.Generation
	e.serving = last.Generation
	onSuperseded := e.superseded
	e.mu.Unlock()
	isSuperseded := last.Generation != 0 && last.Generation != e.generation
	supersededGauge.Set(boolGauge(isSuperseded))
	if !changed {
		return
	}
	klog.InfoS("The engine generation serving the views changed", "serving", last.Generation, "thisReplica", e.generation)
	if isSuperseded && onSuperseded != nil {
		onSuperseded()
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
