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

// Package watchstream numbers changes of objects with resourceVersions, keeps
// a bounded history of them and streams them to watchers the way
// kube-apiserver's watch cache does: a resumable stream per watcher, 410 Gone
// past the history, streaming lists, bookmarks, and DELETED when an object
// leaves a watcher's selection.
package watchstream

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Filter selects the objects a watcher or a list gets.
type Filter interface {
	Matches(obj runtime.Object) bool
	// Shard is the one shard whose objects the filter can match, if any:
	// watchers are indexed by it.
	Shard() (string, bool)
}

// Event is one change of one object, an API object with ObjectMeta.
type Event struct {
	RV uint64
	// Old is the object before the change, nil when it did not exist.
	Old runtime.Object
	// Object is the object after the change or, when it went, its last state
	// with the change's resourceVersion.
	Object runtime.Object
	Gone   bool
}

// typeFor is the type of the event as a watcher with filter f sees it, if
// it sees it at all: an object that enters its selection is ADDED, one that
// leaves it is DELETED.
func (e *Event) typeFor(f Filter) (watch.EventType, bool) {
	before := e.Old != nil && f.Matches(e.Old)
	after := !e.Gone && f.Matches(e.Object)
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

// seenBy is the event as a watcher with filter f sees it, if at all. An
// object that leaves the watcher's selection is DELETED in the last state the
// watcher saw, which its selector matched, at the change's resourceVersion,
// as kube-apiserver's watch cache sends it. That state is the change's Old:
// it is copied, with copy (nil: a deep copy), only for the watchers it
// leaves, so that nothing is kept per watcher or twice in the history.
func (e *Event) seenBy(f Filter, copy func(runtime.Object) runtime.Object) (watch.Event, bool) {
	t, ok := e.typeFor(f)
	if !ok || t != watch.Deleted || e.Gone {
		return watch.Event{Type: t, Object: e.Object}, ok
	}
	if copy == nil {
		copy = runtime.Object.DeepCopyObject
	}
	left := copy(e.Old)
	left.(metav1.Object).SetResourceVersion(strconv.FormatUint(e.RV, 10))
	return watch.Event{Type: watch.Deleted, Object: left}, true
}
