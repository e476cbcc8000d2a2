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

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// Watch streams the changes of the views the filter selects; see
// watchstream.Stream.Watch.
func (s *Store) Watch(ctx context.Context, f Filter, opts watchstream.WatchOptions) (watch.Interface, error) {
	// Watches start concurrently; changes wait, so that no change falls
	// between a snapshot and the watch that follows it.
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stream == nil {
		return nil, errNotLoaded
	}
	if s.closed {
		return nil, errClosed
	}
	return s.stream.Watch(ctx, f, opts, func() []runtime.Object { return s.snapshot(f) })
}

// snapshot is the current state of the selected views.
func (s *Store) snapshot(f Filter) []runtime.Object {
	var out []runtime.Object
	s.forEach(f, nil, func(key topology.ViewKey) bool {
		view, _ := s.engine.View(key.Node, key.Service)
		out = append(out, s.object(key, view, s.viewRV(key)))
		return true
	})
	return out
}

var errClosed = apierrors.NewServiceUnavailable("gridview-apiserver is shutting down: watch another replica or again later")

// Close ends every watch and refuses new ones: at shutdown, so that the
// server does not wait on streams that would never end.
func (s *Store) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.stream != nil {
		s.stream.Close()
	}
}

// Run sends bookmarks to the watchers that asked for them until ctx ends.
func (s *Store) Run(ctx context.Context) {
	watchstream.BookmarkEvery(ctx, s.options.BookmarkInterval, func() {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if s.stream != nil {
			s.stream.SendBookmarks()
		}
	})
}
