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

// Snapshot returns every served object and the resourceVersion they are at.
// The objects are the served ones, shared and never modified: readers must
// not modify them either (encoding writes the type meta: copy them with
// shallowCopy first).
func (s *State) Snapshot() (uint64, []runtime.Object) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []runtime.Object
	for _, k := range kinds {
		out = append(out, s.selected(&filter{kind: k})...)
	}
	return s.stream.RV(), out
}

// selected returns the served objects a filter selects, sorted by key.
func (s *State) selected(f *filter) []runtime.Object {
	keys := make([]types.NamespacedName, 0, len(s.objects[f.kind]))
	for key, obj := range s.objects[f.kind] {
		if f.Matches(obj) {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		if a.Namespace != b.Namespace {
			return strings.Compare(a.Namespace, b.Namespace)
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := make([]runtime.Object, 0, len(keys))
	for _, key := range keys {
		out = append(out, s.objects[f.kind][key])
	}
	return out
}

// List returns the selected objects as the kind's list.
func (s *State) List(f *filter, resourceVersion string) (runtime.Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, err := s.stream.RequestedRV(resourceVersion); err != nil {
		return nil, err
	}
	return f.kind.list(s.selected(f), s.stream.RV())
}

// Get returns one served object.
func (s *State) Get(k *kind, key types.NamespacedName) (runtime.Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, ok := s.objects[k][key]
	if !ok {
		return nil, apierrors.NewNotFound(k.gvr.GroupResource(), key.Name)
	}
	// Encoding writes the type meta: the served object stays untouched.
	return shallowCopy(obj), nil
}

// Watch streams the changes of the selected objects.
func (s *State) Watch(ctx context.Context, f *filter, opts watchstream.WatchOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The stream calls the snapshot later, without the lock: take it now.
	selected := s.selected(f)
	return s.stream.Watch(ctx, f, opts, func() []runtime.Object { return selected })
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
