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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/watchstream"
)

// kube-proxy reads the wrapper on loopback and re-watches within moments of
// its last event or bookmark: a thousand changes of history cover that and
// bound the superseded objects the history keeps (a watch from further back
// gets 410 and lists again, locally). The history is bounded by the bytes
// of the objects its changes hold as well, so that changes of large slices
// (a DaemonSet's rollout with --max-endpoints-per-slice=1000: 100 KiB a
// change) keep no more than a few MiB besides the state. A buffer as large
// as a whole view covers an outage's re-sync; a kube-proxy that takes no
// event for 15 s is cut off, and re-watches.
const (
	historySize      = 1_000
	historyBytes     = 8 << 20
	watcherBuffer    = 10_000
	stallTimeout     = 15 * time.Second
	bookmarkInterval = 30 * time.Second
	// eventOverhead is what a change costs in the history besides its
	// object's encoding.
	eventOverhead = 256
)

// State is what the wrapper serves: objects of every served kind, each with
// a resourceVersion of the wrapper's own, and the stream of their changes.
// Only changes of content are published, so re-reading the same state
// upstream, after an outage or a restart, sends kube-proxy nothing. Objects
// are kept encoded (stored) and decoded for each reader.
type State struct {
	mu      sync.RWMutex
	stream  *watchstream.Stream
	objects map[*kind]map[types.NamespacedName]*stored
	// synced says the state is complete: loaded from the cache or read
	// upstream.
	synced bool
}

// NewState returns a state at resourceVersion rv holding objects: stored
// ones, as the cache loads them, or API objects, which keep their
// resourceVersions.
func NewState(rv uint64, objects []runtime.Object) *State {
	options := watchstream.Options{
		HistorySize:   historySize,
		HistoryWeight: historyBytes,
		WatcherBuffer: watcherBuffer,
		StallTimeout:  stallTimeout,
		Copy:          served,
		Metrics:       watchstream.Metrics{EventsSent: watchEventsSent, Watchers: watchersOpen, CutOff: watchersCutOff},
	}
	options.ShardOf = func(obj runtime.Object) string { return kindOf(obj).gvr.Resource }
	options.Bookmark = func(f watchstream.Filter, rv uint64, end bool) runtime.Object {
		return f.(*filter).kind.bookmark(rv, end)
	}
	s := &State{stream: watchstream.New(rv, options), objects: map[*kind]map[types.NamespacedName]*stored{}}
	for _, k := range kinds {
		s.objects[k] = map[types.NamespacedName]*stored{}
	}
	for _, obj := range objects {
		kept, ok := obj.(*stored)
		if !ok {
			var err error
			if kept, err = store(obj); err != nil {
				klog.ErrorS(err, "Not serving an object")
				continue
			}
			kept.rv, _ = strconv.ParseUint(obj.(metav1.Object).GetResourceVersion(), 10, 64)
		}
		s.objects[kept.kind][kept.key()] = kept
	}
	for _, k := range kinds {
		objectsServed.WithLabelValues(k.gvr.Resource).Set(float64(len(s.objects[k])))
	}
	s.synced = len(objects) > 0
	return s
}

func keyOf(obj runtime.Object) types.NamespacedName {
	if s, ok := obj.(*stored); ok {
		return s.key()
	}
	m := obj.(metav1.Object)
	return types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
}

// Set serves obj, unless the same content is served already, and returns
// what is served. obj is not modified: it may be shared.
func (s *State) Set(obj runtime.Object) *stored {
	kept, err := store(obj)
	if err != nil {
		klog.ErrorS(err, "Not serving an object")
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set(kept)
}

// SetStored serves an object encoded already, which the state takes: the
// caller keeps it only to compare or assemble.
func (s *State) SetStored(kept *stored) *stored {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set(kept)
}

func (s *State) set(kept *stored) *stored {
	k, key := kept.kind, kept.key()
	old := s.objects[k][key]
	if old != nil && old.sameContent(kept) {
		return old
	}
	if kept.rv != 0 {
		// Served before, and maybe still read by a watcher: it keeps its
		// resourceVersion.
		kept = kept.DeepCopyObject().(*stored)
	}
	rv := s.stream.Next()
	kept.rv = rv
	s.objects[k][key] = kept
	objectsServed.WithLabelValues(k.gvr.Resource).Set(float64(len(s.objects[k])))
	e := &watchstream.Event{RV: rv, Object: kept}
	if old != nil {
		e.Old = old
	}
	s.stream.PublishEntry(change{e})
	return kept
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
	last := old.DeepCopyObject().(*stored)
	last.rv = rv
	s.stream.PublishEntry(change{&watchstream.Event{RV: rv, Old: old, Object: last, Gone: true}})
}

// change is one change of the state in the stream's history, weighing the
// bytes it keeps: its object's encoding, superseded once the object changes
// again or, for a deletion, the only thing that still holds it.
type change struct{ *watchstream.Event }

func (c change) ResourceVersion() uint64 { return c.RV }

func (c change) Weight() int { return len(c.Object.(*stored).data) + eventOverhead }

func (c change) Events(_ watchstream.Filter, after uint64, yield func(*watchstream.Event) bool) {
	if c.RV > after {
		yield(c.Event)
	}
}

// ShardEvents sends the change to the watchers of its kind, the stream's
// shards.
func (c change) ShardEvents(watched func(string) bool, _ func(func(string) bool), send func(string, func() *watchstream.Event)) {
	if shard := kindOf(c.Object).gvr.Resource; watched(shard) {
		send(shard, func() *watchstream.Event { return c.Event })
	}
}

// Replace makes objs the served objects of kind k, publishing only the
// difference.
func (s *State) Replace(k *kind, objs []runtime.Object) {
	keep := map[types.NamespacedName]bool{}
	kept := make([]*stored, 0, len(objs))
	for _, obj := range objs {
		one, err := store(obj)
		if err != nil {
			klog.ErrorS(err, "Not serving an object")
			continue
		}
		keep[one.key()] = true
		kept = append(kept, one)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, one := range kept {
		s.set(one)
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
