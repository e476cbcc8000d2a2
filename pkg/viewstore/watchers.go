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
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// watchers indexes watchers by the node they select, so that a change of one
// node's view reaches its watchers without visiting everyone else's.
type watchers struct {
	mu     sync.Mutex
	byNode map[string]map[*watcher]struct{}
	others map[*watcher]struct{}
}

func newWatchers() *watchers {
	return &watchers{byNode: map[string]map[*watcher]struct{}{}, others: map[*watcher]struct{}{}}
}

func (ws *watchers) add(w *watcher) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	watchersCurrent.Inc()
	node, ok := w.filter.node()
	if !ok {
		ws.others[w] = struct{}{}
		return
	}
	if ws.byNode[node] == nil {
		ws.byNode[node] = map[*watcher]struct{}{}
	}
	ws.byNode[node][w] = struct{}{}
}

func (ws *watchers) remove(w *watcher) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	watchersCurrent.Dec()
	node, ok := w.filter.node()
	if !ok {
		delete(ws.others, w)
		return
	}
	delete(ws.byNode[node], w)
	if len(ws.byNode[node]) == 0 {
		delete(ws.byNode, node)
	}
}

// dispatch sends an event to every watcher it concerns, as the watcher sees
// it: a view that enters a watcher's selection is ADDED to it, one that
// leaves is DELETED.
func (ws *watchers) dispatch(e *event) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for w := range ws.byNode[e.key.Node] {
		deliver(w, e)
	}
	for w := range ws.others {
		deliver(w, e)
	}
}

func deliver(w *watcher, e *event) {
	if typ, ok := e.typeFor(w.filter); ok {
		w.send(watch.Event{Type: typ, Object: e.object})
	}
}

// typeFor is the type of event a watcher with filter f sees, if any.
func (e *event) typeFor(f Filter) (watch.EventType, bool) {
	before, after := e.selectedBefore(f), e.selectedAfter(f)
	switch {
	case before && after:
		return watch.Modified, true
	case after:
		return watch.Added, true
	case before:
		return watch.Deleted, true
	}
	return "", false
}

// bookmark sends every watcher that asked for them the object of a bookmark.
func (ws *watchers) bookmark(object func() watch.Event) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	visit := func(set map[*watcher]struct{}) {
		for w := range set {
			if w.bookmarks {
				w.sendBookmark(object())
			}
		}
	}
	for _, set := range ws.byNode {
		visit(set)
	}
	visit(ws.others)
}
