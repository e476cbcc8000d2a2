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
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"k8s.io/apimachinery/pkg/watch"
)

// watchers indexes watchers by the shard they select, so that a change in
// one shard (a node's views) reaches its watchers without visiting everyone
// else's.
type watchers struct {
	shardOf func(runtime.Object) string
	metrics *Metrics

	mu      sync.Mutex
	byShard map[string]map[*watcher]struct{}
	others  map[*watcher]struct{}
	// reached are the watchers of one shard whose clients the last
	// dispatch found done with every event before: the ones that take its
	// events now. A client that lags, may have stopped reading, or watches
	// every shard is not among them.
	reached []*watcher
}

func newWatchers(shardOf func(runtime.Object) string, metrics *Metrics) *watchers {
	return &watchers{shardOf: shardOf, metrics: metrics, byShard: map[string]map[*watcher]struct{}{}, others: map[*watcher]struct{}{}}
}

func (ws *watchers) add(w *watcher) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.metrics.Watchers.Inc()
	shard, ok := ws.shard(w)
	if !ok {
		ws.others[w] = struct{}{}
		return
	}
	if ws.byShard[shard] == nil {
		ws.byShard[shard] = map[*watcher]struct{}{}
	}
	ws.byShard[shard][w] = struct{}{}
}

// shard is the shard a watcher is indexed under, if the stream is sharded.
func (ws *watchers) shard(w *watcher) (string, bool) {
	if ws.shardOf == nil {
		return "", false
	}
	return w.filter.Shard()
}

func (ws *watchers) remove(w *watcher) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.metrics.Watchers.Dec()
	shard, ok := ws.shard(w)
	if !ok {
		delete(ws.others, w)
		return
	}
	delete(ws.byShard[shard], w)
	if len(ws.byShard[shard]) == 0 {
		delete(ws.byShard, shard)
	}
}

// dispatch sends the events of an entry to every watcher they concern, as
// the watcher sees them: an object that enters a watcher's selection is
// ADDED to it, one that leaves is DELETED.
func (ws *watchers) dispatch(entry Entry) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	clear(ws.reached)
	ws.reached = ws.reached[:0]
	// deliver says whether the event found the watcher idle.
	deliver := func(w *watcher, e *Event) bool {
		event, ok := e.seenBy(w.filter, w.options.Copy)
		return ok && w.send(event)
	}
	if ws.shardOf != nil && len(ws.byShard) > 0 {
		watched := func(shard string) bool { return len(ws.byShard[shard]) > 0 }
		shards := func(yield func(string) bool) {
			for shard := range ws.byShard {
				if !yield(shard) {
					return
				}
			}
		}
		entry.ShardEvents(watched, shards, func(shard string, event func() *Event) {
			for w := range ws.byShard[shard] {
				// A second event in one dispatch never finds it idle.
				if deliver(w, event()) {
					ws.reached = append(ws.reached, w)
				}
			}
		})
	}
	for w := range ws.others {
		entry.Events(w.filter, 0, func(e *Event) bool {
			deliver(w, e)
			return true
		})
	}
}

// handing says whether a watcher the last dispatch reached is still
// handing events to its client, or its client took one within quiet.
func (ws *watchers) handing(quiet time.Duration) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return slices.ContainsFunc(ws.reached, func(w *watcher) bool { return w.handing(quiet) })
}

// stopAll stops every watcher; Stop removes each, so it runs unlocked.
func (ws *watchers) stopAll() {
	ws.mu.Lock()
	var all []*watcher
	for _, set := range ws.byShard {
		for w := range set {
			all = append(all, w)
		}
	}
	for w := range ws.others {
		all = append(all, w)
	}
	ws.mu.Unlock()
	for _, w := range all {
		w.Stop()
	}
}

// bookmark sends every watcher that asked for them the object of a bookmark.
func (ws *watchers) bookmark(object func(Filter) watch.Event) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	visit := func(set map[*watcher]struct{}) {
		for w := range set {
			if w.bookmarks {
				w.sendBookmark(object(w.filter))
			}
		}
	}
	for _, set := range ws.byShard {
		visit(set)
	}
	visit(ws.others)
}
