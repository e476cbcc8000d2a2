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

// Event is one change of one object.
type Event struct {
	RV uint64
	// Old is the object before the change, nil when it did not exist.
	Old runtime.Object
	// Object is the object after the change or, when it went, its last state
	// with the change's resourceVersion.
	Object runtime.Object
	Gone   bool
}

// For is the event as a watcher with filter f sees it, if at all: an object
// that enters its selection is ADDED, one that leaves it is DELETED.
func (e *Event) For(f Filter) (watch.Event, bool) {
	before := e.Old != nil && f.Matches(e.Old)
	after := !e.Gone && f.Matches(e.Object)
	switch {
	case before && after:
		return watch.Event{Type: watch.Modified, Object: e.Object}, true
	case after:
		return watch.Event{Type: watch.Added, Object: e.Object}, true
	case before:
		return watch.Event{Type: watch.Deleted, Object: e.Object}, true
	}
	return watch.Event{}, false
}
