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
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// Sink applies the log: every replica's views derive from it alone.
type Sink interface {
	// Load replaces the state with the log's objects at a revision.
	Load(revision int64, objects []metav1.Object)
	// Apply applies the changes one revision made, in the order written.
	Apply(revision int64, changes []Change)
	// Progress says that the log holds no change after those applied up
	// to a revision: the state is that revision's too.
	Progress(revision int64)
}

// Reader reads the log into a sink: the state at the oldest revision etcd
// still holds, then every revision after it, in order, so that the sink's
// history reaches back as far as etcd's and a client resumes across a
// restart of any replica. It loads again only when it falls behind etcd's
// compaction.
type Reader struct {
	client *clientv3.Client
	prefix string
	sink   Sink
	// caughtUp is the revision the reader must reach, current when it last
	// loaded, before its views are current; reached is where it is.
	caughtUp, reached atomic.Int64
	// unreadable is set while the next revision holds an input this
	// replica cannot decode (one a newer writer wrote, say).
	unreadable atomic.Bool
	// heard is when the watch of the log last answered (Unix nanoseconds),
	// 0 while there is none.
	heard atomic.Int64
}

// NewReader returns a reader of the log under prefix into sink.
func NewReader(client *clientv3.Client, prefix string, sink Sink) *Reader {
	return &Reader{client: client, prefix: prefix, sink: sink}
}

// Current says whether the reader loaded the log, reached the revision etcd
// was at when its watch started, can read what it holds, and heard from
// its watch within silenceLimit: otherwise the views it fed may be older
// than what another replica serves.
func (r *Reader) Current() bool {
	reached := r.reached.Load()
	heard := r.heard.Load()
	return reached > 0 && reached >= r.caughtUp.Load() && !r.unreadable.Load() &&
		heard > 0 && time.Since(time.Unix(0, heard)) < silenceLimit
}

// RequestProgress asks etcd to tell the reader how far the log is read,
// for a read that waits to reach a revision in which the log holds no
// change: another replica may have loaded at it.
func (r *Reader) RequestProgress() {
	// The watch's stream is the one of the same metadata.
	ctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(context.Background()), 5*time.Second)
	defer cancel()
	r.askProgress(ctx)
}

func (r *Reader) askProgress(ctx context.Context) {
	if err := r.client.RequestProgress(ctx); err != nil && ctx.Err() == nil {
		klog.V(2).InfoS("Cannot ask etcd how far gridview's input log was read", "err", err)
	}
}

// Revision is the revision etcd is at: a read that must be current waits
// for the reader to get there.
func (r *Reader) Revision(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := r.client.Get(ctx, r.prefix, clientv3.WithCountOnly(), clientv3.WithLimit(1))
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// Run reads the log until ctx ends. A watch that fails is opened again
// where it stopped: only one that fell behind etcd's compaction, whose
// revisions are gone, loads the log again, at a newer revision.
func (r *Reader) Run(ctx context.Context) {
	var reached int64
	for ctx.Err() == nil {
		var err error
		if reached == 0 {
			reached, err = r.load(ctx)
		}
		if err == nil {
			reached, err = r.follow(ctx, reached)
			if errors.Is(err, errCompacted) {
				reached = 0
			}
		}
		if ctx.Err() != nil {
			return
		}
		klog.ErrorS(err, "Reading gridview's input log again", "revision", reached)
		pause(ctx, time.Second)
	}
}

// errOutOfOrder ends a watch that sent a revision already applied.
var errOutOfOrder = errors.New("gridview's input log was sent out of order")

// errWatchClosed ends a watch whose channel etcd's client closed.
var errWatchClosed = errors.New("etcd's client closed the watch")

// errCompacted ends a watch whose next revision etcd no longer holds.
var errCompacted = errors.New("gridview's input log was compacted past the revision this replica read")

// load loads the sink with the log at the oldest revision etcd holds and
// returns it.
func (r *Reader) load(ctx context.Context) (int64, error) {
	oldest, err := r.oldest(ctx)
	if err != nil {
		return 0, err
	}
	resp, err := r.client.Get(ctx, r.prefix, clientv3.WithPrefix(), clientv3.WithRev(oldest))
	if err != nil {
		return 0, fmt.Errorf("reading gridview's input log at revision %d: %w", oldest, err)
	}
	objects := make([]metav1.Object, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		change, err := r.decode(kv)
		if err != nil {
			return 0, err
		}
		objects = append(objects, change.Object)
	}
	// etcd's revision now, which may be a deletion's, or another key's: the
	// watch learns it has passed it from a progress notification.
	caughtUp := max(oldest, resp.Header.Revision)
	r.caughtUp.Store(caughtUp)
	r.sink.Load(oldest, objects)
	r.reached.Store(oldest)
	klog.InfoS("Loaded gridview's input log", "revision", oldest, "etcdRevision", caughtUp, "inputs", len(objects))
	return oldest, nil
}

// oldest is the oldest revision etcd can still read: its compaction's, or
// the first.
func (r *Reader) oldest(ctx context.Context) (int64, error) {
	_, err := r.client.Get(ctx, r.prefix, clientv3.WithPrefix(), clientv3.WithRev(1), clientv3.WithCountOnly())
	if err == nil {
		return 1, nil
	}
	if !errors.Is(err, rpctypes.ErrCompacted) {
		return 0, fmt.Errorf("reading gridview's input log: %w", err)
	}
	// Only a watch says where compaction left off.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for resp := range r.client.Watch(ctx, r.prefix, clientv3.WithPrefix(), clientv3.WithRev(1)) {
		if resp.CompactRevision > 0 {
			return resp.CompactRevision, nil
		}
		if err := resp.Err(); err != nil {
			return 0, fmt.Errorf("finding the oldest revision of gridview's input log: %w", err)
		}
	}
	return 0, fmt.Errorf("finding the oldest revision of gridview's input log: %w", ctx.Err())
}

// follow applies every revision after from until the watch fails, and
// returns the last it applied.
func (r *Reader) follow(ctx context.Context, from int64) (int64, error) {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	// From from itself, whose changes the sink holds already: etcd notifies
	// the progress of a watch only once it started at or before the
	// revision it is at, and an idle log's next revision is still to come.
	watch := r.client.Watch(ctx, r.prefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify(), clientv3.WithCreatedNotify())
	// A replica whose watch failed is behind until it answers again.
	defer r.heard.Store(0)
	go r.requestProgress(ctx)
	for resp := range watch {
		r.heard.Store(time.Now().UnixNano())
		if resp.Created {
			// Current again once it reached what etcd holds now.
			r.caughtUp.Store(max(r.caughtUp.Load(), resp.Header.Revision))
			continue
		}
		if resp.IsProgressNotify() {
			if revision := resp.Header.Revision; revision > from {
				r.sink.Progress(revision)
				r.reached.Store(revision)
				from = revision
			}
			continue
		}
		if err := resp.Err(); err != nil {
			if resp.CompactRevision > 0 {
				return from, fmt.Errorf("%w: %d, compacted at %d: %w", errCompacted, from, resp.CompactRevision, err)
			}
			return from, fmt.Errorf("watching gridview's input log: %w", err)
		}
		// etcd sends a revision's events in one response, in the order
		// written, and revisions in order.
		for i := 0; i < len(resp.Events); {
			revision := resp.Events[i].Kv.ModRevision
			var changes []Change
			for ; i < len(resp.Events) && resp.Events[i].Kv.ModRevision == revision; i++ {
				change, err := r.decode(resp.Events[i].Kv)
				if err != nil {
					// What this replica cannot read, it cannot serve views
					// of: it is not ready until it reads on.
					r.unreadable.Store(true)
					return from, err
				}
				if resp.Events[i].Type == mvccpb.DELETE {
					change.Object = nil
				}
				changes = append(changes, change)
			}
			switch {
			case revision == from:
				continue // the sink holds it
			case revision < from:
				// etcd sends revisions in order, and each whole: applied
				// again or in part, it would number changes anew.
				return from, fmt.Errorf("%w: revision %d after %d", errOutOfOrder, revision, from)
			}
			r.sink.Apply(revision, changes)
			r.reached.Store(revision)
			r.unreadable.Store(false)
			from = revision
		}
	}
	// A watch channel closed while ctx is live: the etcd client was closed.
	return from, fmt.Errorf("the watch of gridview's input log ended: %w", cmp.Or(ctx.Err(), errWatchClosed))
}

// A reader asks etcd how far its watch got every progressInterval, and
// takes a watch that said nothing for silenceLimit to be cut off: the
// etcd client keeps a watch open while it cannot reach etcd, and resumes
// it, so no error says so.
const (
	progressInterval = 5 * time.Second
	silenceLimit     = 15 * time.Second
	// behindReport is how often a reader that is not current says so.
	behindReport = 30 * time.Second
)

// requestProgress asks etcd for the revision the reader's watch reached:
// often until the reader is current (no event shows that a watch passed a
// revision that changed no input, and etcd notifies progress unasked only
// every few minutes), then every progressInterval, until ctx ends.
func (r *Reader) requestProgress(ctx context.Context) {
	behindSince, reported := time.Now(), time.Now()
	for {
		r.askProgress(ctx)
		wait := progressInterval
		if !r.Current() {
			wait = 100 * time.Millisecond
			// Say why a replica stays unready, which /readyz does not.
			if time.Since(reported) >= behindReport {
				reported = time.Now()
				klog.InfoS("The node views are not current yet", "for", time.Since(behindSince).Round(time.Second),
					"reached", r.reached.Load(), "caughtUp", r.caughtUp.Load(), "unreadable", r.unreadable.Load(), "heard", time.Unix(0, r.heard.Load()))
			}
		} else {
			behindSince = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (r *Reader) decode(kv *mvccpb.KeyValue) (Change, error) {
	key, err := parsePath(r.prefix, string(kv.Key))
	if err != nil {
		return Change{}, err
	}
	if len(kv.Value) == 0 {
		return Change{Key: key}, nil
	}
	obj, err := decode(key, kv.Value)
	if err != nil {
		return Change{}, err
	}
	return Change{Key: key, Object: obj}, nil
}
