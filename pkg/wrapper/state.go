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
	"reflect"
	"strconv"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/pkg/watchstream"
)

// A node's state is small: a few thousand changes of history and a buffer
// as large as its whole view cover an outage's re-sync.
const (
	historySize      = 10_000
	watcherBuffer    = 10_000
	bookmarkInterval = 30 * time.Second
)

// State is what the wrapper serves: objects of every served kind, each with
// a resourceVersion of the wrapper's own, and the stream of their changes.
// Only changes of content are published, so re-reading the same state
// upstream, after an outage or a restart, sends kube-proxy nothing.
type State struct {
	mu      sync.RWMutex
	stream  *watchstream.Stream
	objects map[*kind]map[types.NamespacedName]runtime.Object
	// synced says the state is complete: loaded from the cache or read
	// upstream.
	synced bool
}

// NewState returns a state at resourceVersion rv holding objects.
func NewState(rv uint64, objects []runtime.Object) *State {
	options := watchstream.Options{
		HistorySize:   historySize,
		WatcherBuffer: watcherBuffer,
		Copy:          shallowCopy,
		Metrics:       watchstream.Metrics{EventsSent: watchEventsSent, Watchers: watchersOpen, CutOff: watchersCutOff},
	}
	options.ShardOf = func(obj runtime.Object) string { return kindOf(obj).gvr.Resource }
	options.Bookmark = func(f watchstream.Filter, rv uint64, end bool) runtime.Object {
		return f.(*filter).kind.bookmark(rv, end)
	}
	s := &State{stream: watchstream.New(rv, options), objects: map[*kind]map[types.NamespacedName]runtime.Object{}}
	for _, k := range kinds {
		s.objects[k] = map[types.NamespacedName]runtime.Object{}
	}
	for _, obj := range objects {
		s.objects[kindOf(obj)][keyOf(obj)] = obj
	}
	for _, k := range kinds {
		objectsServed.WithLabelValues(k.gvr.Resource).Set(float64(len(s.objects[k])))
	}
	s.synced = len(objects) > 0
	return s
}

func keyOf(obj runtime.Object) types.NamespacedName {
	m := obj.(metav1.Object)
	return types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
}

// Set serves obj, unless the same content is served already.
func (s *State) Set(obj runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set(obj)
}

func (s *State) set(obj runtime.Object) {
	k, key := kindOf(obj), keyOf(obj)
	old := s.objects[k][key]
	if old != nil && sameContent(old, obj) {
		return
	}
	served := withoutTypeMeta(obj)
	rv := s.stream.Next()
	served.(metav1.Object).SetResourceVersion(strconv.FormatUint(rv, 10))
	s.objects[k][key] = served
	objectsServed.WithLabelValues(k.gvr.Resource).Set(float64(len(s.objects[k])))
	s.stream.Publish(&watchstream.Event{RV: rv, Old: old, Object: served})
}

// sameContent compares two objects but for their resourceVersions and type
// meta.
func sameContent(a, b runtime.Object) bool {
	a, b = withoutTypeMeta(a), withoutTypeMeta(b)
	a.(metav1.Object).SetResourceVersion("")
	b.(metav1.Object).SetResourceVersion("")
	return apiequality.Semantic.DeepEqual(a, b)
}

// withoutTypeMeta copies an object without its type meta, which informers
// and the cache may or may not fill: encoding sets it. The copy is shallow:
// served objects, the informers' and the rendered ones share their content,
// which nothing modifies, so that a node's view is held once.
func withoutTypeMeta(obj runtime.Object) runtime.Object {
	out := shallowCopy(obj)
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

// shallowCopy copies the top-level struct of an object: enough to set its
// type meta or resourceVersion, which encoding and serving write, without
// copying what it shares.
func shallowCopy(obj runtime.Object) runtime.Object {
	v := reflect.ValueOf(obj).Elem()
	out := reflect.New(v.Type())
	out.Elem().Set(v)
	return out.Interface().(runtime.Object)
}

// Delete stops serving an object.
func (s *State) Delete(k *kind, key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delete(k, key)
}

func (s *State) delete(k *kind, key types.NamespacedName) {
	old, ok := s.objects[k][key]
	if !ok {
		return
	}
	delete(s.objects[k], key)
	objectsServed.WithLabelValues(k.gvr.Resource).Set(float64(len(s.objects[k])))
	rv := s.stream.Next()
	last := shallowCopy(old)
	last.(metav1.Object).SetResourceVersion(strconv.FormatUint(rv, 10))
	s.stream.Publish(&watchstream.Event{RV: rv, Old: old, Object: last, Gone: true})
}

// Replace makes objs the served objects of kind k, publishing only the
// difference, and marks the state synced once every kind has been replaced.
func (s *State) Replace(k *kind, objs []runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := map[types.NamespacedName]bool{}
	for _, obj := range objs {
		keep[keyOf(obj)] = true
		s.set(obj)
	}
	s.retain(k, keep)
}

// Retain stops serving the objects of kind k that keep does not hold.
func (s *State) Retain(k *kind, keep map[types.NamespacedName]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retain(k, keep)
}

func (s *State) retain(k *kind, keep map[types.NamespacedName]bool) {
	for key := range s.objects[k] {
		if !keep[key] {
			s.delete(k, key)
		}
	}
}

// MarkSynced says the state is complete.
func (s *State) MarkSynced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.synced = true
}

// Synced says whether the state is complete, from upstream or the cache.
func (s *State) Synced() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.synced
}
