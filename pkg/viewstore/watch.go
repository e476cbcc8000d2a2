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

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// Watch streams the changes of the views the filter selects; see
// watchstream.Stream.Watch. A node's initial state is read under the lock,
// which is quick; a wider one from a snapshot, by the watcher, after it.
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
	if err := s.checkDeparted(f, opts); err != nil {
		return nil, err
	}
	var snapshot func() []runtime.Object
	if !StateBuiltAfterWatch(f, opts) {
		var objects []runtime.Object
		if opts.StartsWithState() {
			objects = s.liveReader().objects(f)
		}
		snapshot = func() []runtime.Object { return objects }
	} else {
		r := s.snapshotReader()
		snapshot = func() []runtime.Object { return r.objects(f) }
	}
	return s.stream.Watch(ctx, f, opts, snapshot)
}

// StateBuiltAfterWatch says whether a watch's initial state is built by its
// watcher after Watch returned, from a snapshot: a watch of more than one
// node that starts with the state. Any other's work is done by then.
func StateBuiltAfterWatch(f Filter, opts watchstream.WatchOptions) bool {
	_, oneNode := f.node()
	return !oneNode && opts.StartsWithState()
}

// checkDeparted answers 410 to a watch resumed from before a node it may
// select went: what that node had then is not in the history.
func (s *Store) checkDeparted(f Filter, opts watchstream.WatchOptions) error {
	if opts.StartsWithState() {
		return nil
	}
	from, err := s.stream.RequestedRV(opts.ResourceVersion)
	if err != nil {
		return err
	}
	node, oneNode := f.node()
	for departed, rv := range s.departed {
		if rv > from && (!oneNode || departed == node) {
			return apierrors.NewResourceExpired(fmt.Sprintf("resourceVersion %d: node %s went since; list again", from, departed))
		}
	}
	return nil
}

// objects is the state of the selected views.
func (r reader) objects(f Filter) []runtime.Object {
	var out []runtime.Object
	r.forEach(f, nil, func(node string, view *topology.SliceView) bool {
		obj := r.object(node, view)
		out = append(out, &obj)
		return true
	})
	return out
}

// errClosed refuses a watch of a replica that is stopping. A 429 has
// client-go watch again from the same resourceVersion, which every replica
// numbers alike, where a 503 would have it list again.
var errClosed = apierrors.NewTooManyRequests("gridview-apiserver is shutting down: watch again, another replica serves the same resourceVersions", 1)

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

// EndWatches ends every watch started so far, as a stopping replica does;
// the store goes on serving. Clients watch again, from their
// resourceVersion, wherever the aggregator sends them.
func (s *Store) EndWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
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
