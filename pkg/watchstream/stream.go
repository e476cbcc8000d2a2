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
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Options bound the memory a stream uses.
type Options struct {
	// HistorySize is how many changes a watch can resume from.
	HistorySize int
	// HistoryWeight, when set, bounds the events the history holds in all.
	HistoryWeight int
	// WatcherBuffer is how many events a watcher may lag behind before it is
	// cut off.
	WatcherBuffer int
	// StallTimeout, when set, cuts off a watcher whose client has taken no
	// event for that long while one waits for it. A client that stopped
	// reading is otherwise cut off only once the buffers on its path fill up
	// and WatcherBuffer more changes come for it.
	StallTimeout time.Duration
	// ShardOf, when set, names the shard of an object: watchers whose filter
	// selects one shard only see its events.
	ShardOf func(runtime.Object) string
	// Bookmark returns an empty object of the kind a watcher with filter f
	// watches, carrying a resourceVersion, and annotations when it ends
	// initial events.
	Bookmark func(f Filter, rv uint64, initialEventsEnd bool) runtime.Object
	// Copy, when set, gives each watcher its own copy of an object before it
	// is sent: encoding an object writes its type meta, so objects shared
	// between watchers must not be encoded as they are.
	Copy    func(runtime.Object) runtime.Object
	Metrics Metrics
}

// Counter and Gauge are what the stream needs of a metric.
type (
	Counter interface{ Inc() }
	Gauge   interface {
		Inc()
		Dec()
	}
)

// Metrics count what the stream does; those left nil are not counted.
type Metrics struct {
	EventsSent Counter
	Watchers   Gauge
	CutOff     Counter
}

type noMetric struct{}

func (noMetric) Inc() {}
func (noMetric) Dec() {}

func (m *Metrics) orNone() {
	if m.EventsSent == nil {
		m.EventsSent = noMetric{}
	}
	if m.Watchers == nil {
		m.Watchers = noMetric{}
	}
	if m.CutOff == nil {
		m.CutOff = noMetric{}
	}
}

// InitialRV starts a new space of resourceVersions: a random epoch in the
// high bits, so that another process's resourceVersions are either older
// than this one's history or newer than its latest, and answered with 410.
func InitialRV() uint64 {
	return rand.Uint64N(1<<20)<<43 + 1
}

// Stream numbers changes and serves watches. It does not lock: its owner
// serializes Publish with everything else, so that a snapshot and the
// resourceVersion it is taken at agree; Watch calls may run concurrently.
type Stream struct {
	options  Options
	rv       uint64
	history  *history
	watchers *watchers
	activity *activity
}

// New starts a stream at resourceVersion rv.
func New(rv uint64, options Options) *Stream {
	options.Metrics.orNone()
	s := &Stream{options: options, rv: rv, history: newHistory(options.HistorySize, options.HistoryWeight), activity: newActivity()}
	s.history.reset(rv)
	s.watchers = newWatchers(options.ShardOf, &s.options.Metrics)
	return s
}

// Delivering says whether the feed looks busy: a change was published
// within window, and some watcher handed an event (bookmarks aside) to its
// client within quiet. The event may be another's, such as a node's initial
// events, but only in the window after a change: a client reading slowly
// makes the feed look busy only while changes keep coming.
func (s *Stream) Delivering(quiet, window time.Duration) bool {
	return s.activity.within(&s.activity.published, window) && s.activity.within(&s.activity.sent, quiet)
}

// HandingOver says whether the last change published is still being handed
// to the clients of the watchers of one shard that it found idle: one of
// them holds events, or its client took one (bookmarks aside) within quiet.
// A client that was behind already does not count, as it may have stopped
// reading, nor one that watches every shard, as an operator's does.
func (s *Stream) HandingOver(quiet time.Duration) bool {
	return s.watchers.handing(quiet)
}

// Idle says whether, for d, no change was published and no event (bookmarks
// aside) went out to a watcher's client: the last change has been handed
// to every client that reads.
func (s *Stream) Idle(d time.Duration) bool {
	return !s.activity.within(&s.activity.published, d) && !s.activity.within(&s.activity.sent, d)
}

// Held returns how many entries the history holds and their weight.
func (s *Stream) Held() (entries, weight int) {
	return s.history.count, s.history.weight
}

// Oldest is the resourceVersion the history starts after: a watch can
// resume from it or later.
func (s *Stream) Oldest() uint64 {
	return s.history.since
}

// Resumable says whether a watch from resourceVersion rv resumes here
// without waiting and without 410: rv is one this stream reached, and its
// history still holds what followed it.
func (s *Stream) Resumable(rv uint64) bool {
	return rv <= s.rv && s.history.reaches(rv)
}

// RV is the resourceVersion of the latest change.
func (s *Stream) RV() uint64 { return s.rv }

// Next is the resourceVersion the next published change must carry.
func (s *Stream) Next() uint64 { return s.rv + 1 }

// Publish records a change made at Next() and sends it to the watchers.
func (s *Stream) Publish(e *Event) {
	s.PublishEntry(single{Event: e, shardOf: s.options.ShardOf})
}

// PublishEntry records an entry whose events are newer than the stream's
// resourceVersion and sends them to the watchers.
func (s *Stream) PublishEntry(e Entry) {
	s.rv = e.ResourceVersion()
	s.history.add(e)
	s.activity.record(&s.activity.published)
	s.watchers.dispatch(e)
}

// Advance moves the stream to resourceVersion rv, newer than its own, for a
// change that changed nothing anyone sees: what the owner derived from it
// is never newer than the stream.
func (s *Stream) Advance(rv uint64) {
	s.rv = rv
}

// RequestedRV reads a request's resourceVersion: empty and "0" mean the
// current one; one newer than the stream's was issued by another process.
func (s *Stream) RequestedRV(value string) (uint64, error) {
	if value == "" || value == "0" {
		return s.rv, nil
	}
	rv, err := strconv.ParseUint(value, 10, 64)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("resourceVersion: invalid value %q: must be a decimal number", value))
	}
	if rv > s.rv {
		return 0, apierrors.NewResourceExpired(fmt.Sprintf("resourceVersion %d is newer than this server's %d: it was issued by another server; list again", rv, s.rv))
	}
	return rv, nil
}

// ChangedSince says whether an object the filter selects changed after rv;
// an error when the history no longer reaches back to rv.
func (s *Stream) ChangedSince(rv uint64, f Filter) (bool, error) {
	events, ok := s.history.after(rv)
	if !ok {
		return false, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, s.history.since))
	}
	changed := false
	for _, entry := range events {
		entry.Events(f, rv, func(e *Event) bool {
			_, changed = e.typeFor(f)
			return !changed
		})
		if changed {
			return true, nil
		}
	}
	return false, nil
}

// WatchOptions are the parameters of a watch besides its filter.
type WatchOptions struct {
	ResourceVersion string
	// SendInitialEvents is the streaming list's parameter; nil when not set.
	SendInitialEvents *bool
	Bookmarks         bool
}

// StartsWithState says whether a watch starts with the current state rather
// than with the changes after its resourceVersion.
func (o WatchOptions) StartsWithState() bool {
	if o.SendInitialEvents != nil {
		return *o.SendInitialEvents
	}
	return o.ResourceVersion == "" || o.ResourceVersion == "0"
}

// Watch streams the changes the filter selects. It starts with the current
// state, from snapshot, as ADDED events when asked (a streaming list, ended by
// the annotated bookmark, or a watch from resourceVersion "" or "0");
// otherwise it replays the changes after the given resourceVersion from the
// history, or answers 410 Gone. snapshot is called once, later, by the
// watcher's own goroutine, without the owner's lock: it must read a state
// captured when Watch was called. The watch ends when ctx does.
func (s *Stream) Watch(ctx context.Context, f Filter, opts WatchOptions, snapshot func() []runtime.Object) (watch.Interface, error) {
	from, err := s.RequestedRV(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	var initial func() []watch.Event
	added := func(bookmark runtime.Object) func() []watch.Event {
		return func() []watch.Event {
			var events []watch.Event
			for _, obj := range snapshot() {
				events = append(events, watch.Event{Type: watch.Added, Object: obj})
			}
			if bookmark != nil {
				events = append(events, watch.Event{Type: watch.Bookmark, Object: bookmark})
			}
			return events
		}
	}
	switch {
	case opts.SendInitialEvents != nil && *opts.SendInitialEvents:
		// As kube-apiserver's watch cache: the end of the initial events is
		// marked only for a watcher that takes bookmarks. k8s.io/apiserver
		// turns a plain watch from "" into sendInitialEvents without them,
		// and does not expect the bookmark then.
		var end runtime.Object
		if opts.Bookmarks {
			end = s.options.Bookmark(f, s.rv, true)
		}
		initial = added(end)
	case opts.SendInitialEvents == nil && (opts.ResourceVersion == "" || opts.ResourceVersion == "0"):
		initial = added(nil)
	default:
		entries, ok := s.history.after(from)
		if !ok {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.history.since))
		}
		// The replay is built under the owner's lock: one longer than the
		// watcher may lag is cut off at once, so answer as that would.
		var events []watch.Event
		for _, entry := range entries {
			entry.Events(f, from, func(e *Event) bool {
				if event, ok := e.seenBy(f, s.options.Copy); ok {
					events = append(events, event)
				}
				return len(events) <= s.options.WatcherBuffer
			})
			if len(events) > s.options.WatcherBuffer {
				return nil, apierrors.NewResourceExpired(fmt.Sprintf("resourceVersion %d: more than %d changes since for this watch; list again", from, s.options.WatcherBuffer))
			}
		}
		initial = func() []watch.Event { return events }
	}
	w := newWatcher(f, opts.Bookmarks, initial, s.watchers.remove, &s.options, s.activity)
	s.watchers.add(w)
	reportBacklog(ctx, w)
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.done:
		}
	}()
	return w, nil
}

// Close ends every watch started so far: at shutdown, so that the server
// does not wait on streams that would never end, or when the owner's state
// or numbering changes under them. Clients re-watch elsewhere or later.
func (s *Stream) Close() {
	s.watchers.stopAll()
}

// SendBookmarks sends a bookmark at the current resourceVersion to every
// watcher that asked for them. The owner calls it periodically, serialized
// with Publish.
func (s *Stream) SendBookmarks() {
	s.watchers.bookmark(func(f Filter) watch.Event {
		return watch.Event{Type: watch.Bookmark, Object: s.options.Bookmark(f, s.rv, false)}
	})
}

// BookmarkEvery calls send every interval until ctx ends; send must take the
// owner's lock and call SendBookmarks.
func BookmarkEvery(ctx context.Context, interval time.Duration, send func()) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			send()
		}
	}
}
