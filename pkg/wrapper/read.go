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

package wrapper

import (
	"context"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gridview/gridview/pkg/watchstream"
)

// Snapshot returns every served object, decoded, and the resourceVersion
// they are at.
func (s *State) Snapshot() (uint64, []runtime.Object) {
	rv, kept := s.storedSnapshot()
	out := make([]runtime.Object, 0, len(kept))
	for _, one := range kept {
		out = append(out, one.object())
	}
	return rv, out
}

// RV is the resourceVersion of the latest change.
func (s *State) RV() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stream.RV()
}

// storedSnapshot returns every served object as the state keeps it, sorted
// by kind and key, and the resourceVersion they are at.
func (s *State) storedSnapshot() (uint64, []*stored) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*stored
	for _, k := range kinds {
		out = append(out, s.selected(&filter{kind: k})...)
	}
	return s.stream.RV(), out
}

// selected returns the served objects a filter selects, sorted by key.
func (s *State) selected(f *filter) []*stored {
	out := make([]*stored, 0, len(s.objects[f.kind]))
	for _, obj := range s.objects[f.kind] {
		if f.Matches(obj) {
			out = append(out, obj)
		}
	}
	slices.SortFunc(out, func(a, b *stored) int {
		if a.namespace != b.namespace {
			return strings.Compare(a.namespace, b.namespace)
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// selectedAt returns the selected objects and the resourceVersion of the
// state they are of, for a list at resourceVersion.
func (s *State) selectedAt(f *filter, resourceVersion string) ([]*stored, uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, err := s.stream.RequestedRV(resourceVersion); err != nil {
		return nil, 0, err
	}
	return s.selected(f), s.stream.RV(), nil
}

// List returns the selected objects as the kind's list.
func (s *State) List(f *filter, resourceVersion string) (runtime.Object, error) {
	kept, rv, err := s.selectedAt(f, resourceVersion)
	if err != nil {
		return nil, err
	}
	// Decoded without the lock: stored objects never change.
	items := make([]runtime.Object, 0, len(kept))
	for _, one := range kept {
		items = append(items, one.object())
	}
	return f.kind.list(items, rv)
}

// Get returns one served object.
func (s *State) Get(k *kind, key types.NamespacedName) (runtime.Object, error) {
	s.mu.RLock()
	obj, ok := s.objects[k][key]
	s.mu.RUnlock()
	if !ok {
		return nil, apierrors.NewNotFound(k.gvr.GroupResource(), key.Name)
	}
	return obj.object(), nil
}

// Watch streams the changes of the selected objects. A watch that starts
// with the state takes it now, under the lock, and sends it decoded as the
// client reads.
func (s *State) Watch(ctx context.Context, f *filter, opts watchstream.WatchOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var initial []runtime.Object
	if opts.StartsWithState() {
		for _, one := range s.selected(f) {
			initial = append(initial, one)
		}
	}
	return s.stream.Watch(ctx, f, opts, func() []runtime.Object { return initial })
}

// Close ends every watch of kube-proxy, at shutdown.
func (s *State) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stream.Close()
}

// Run sends bookmarks to the watchers that asked until ctx ends.
func (s *State) Run(ctx context.Context) {
	watchstream.BookmarkEvery(ctx, bookmarkInterval, func() {
		s.mu.RLock()
		defer s.mu.RUnlock()
		s.stream.SendBookmarks()
	})
}
