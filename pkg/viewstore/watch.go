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
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// WatchOptions are the parameters of a watch besides its filter.
type WatchOptions struct {
	ResourceVersion string
	// SendInitialEvents is the streaming list's parameter; nil when not set.
	SendInitialEvents *bool
	Bookmarks         bool
}

// Watch streams the changes of the views the filter selects. It starts with
// the current state as ADDED events when asked (a streaming list, or a watch
// from resourceVersion "" or "0"); otherwise it replays the changes after the
// given resourceVersion from the history, or answers 410 Gone.
func (s *Store) Watch(ctx context.Context, f Filter, opts WatchOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		return nil, errNotLoaded
	}
	from, err := s.requestedRV(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	var initial []watch.Event
	switch {
	case opts.SendInitialEvents != nil && *opts.SendInitialEvents:
		initial = append(s.snapshot(f), watch.Event{Type: watch.Bookmark, Object: s.bookmarkObject(true)})
	case opts.SendInitialEvents == nil && (opts.ResourceVersion == "" || opts.ResourceVersion == "0"):
		initial = s.snapshot(f)
	default:
		events, ok := s.history.after(from)
		if !ok {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.history.since))
		}
		for _, e := range events {
			if typ, ok := e.typeFor(f); ok {
				initial = append(initial, watch.Event{Type: typ, Object: e.object})
			}
		}
	}
	w := newWatcher(f, opts.Bookmarks, initial, s.options.WatcherBuffer, s.watchers.remove)
	s.watchers.add(w)
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.done:
		}
	}()
	return w, nil
}

// snapshot is the current state of the selected views as ADDED events.
func (s *Store) snapshot(f Filter) []watch.Event {
	var out []watch.Event
	s.forEach(f, nil, func(key topology.ViewKey) bool {
		view, _ := s.engine.View(key.Node, key.Service)
		out = append(out, watch.Event{Type: watch.Added, Object: s.object(key, view, s.viewRV(key))})
		return true
	})
	return out
}

// bookmarkObject carries the current resourceVersion; initialEventsEnd marks
// the end of a streaming list's initial events.
func (s *Store) bookmarkObject(initialEventsEnd bool) *topologyapi.NodeEndpoints {
	object := &topologyapi.NodeEndpoints{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(s.rv, 10)}}
	if initialEventsEnd {
		object.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return object
}

// Run sends bookmarks to the watchers that asked for them until ctx ends.
func (s *Store) Run(ctx context.Context) {
	ticker := time.NewTicker(s.options.BookmarkInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			s.mu.RLock()
			if s.loaded {
				s.watchers.bookmark(func() watch.Event {
					return watch.Event{Type: watch.Bookmark, Object: s.bookmarkObject(false)}
				})
			}
			s.mu.RUnlock()
		}
	}
}
