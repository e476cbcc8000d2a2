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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gridview/gridview/pkg/watchstream"
)

// filter selects served objects of one kind.
type filter struct {
	kind      *kind
	namespace string
	fields    fields.Selector
	labels    labels.Selector
}

var _ watchstream.Filter = &filter{}

// Matches reads the objects the state keeps; a watch sees no others.
func (f *filter) Matches(obj runtime.Object) bool {
	s, ok := obj.(*stored)
	if !ok || s.kind != f.kind {
		return false
	}
	if f.namespace != "" && s.namespace != f.namespace {
		return false
	}
	if f.labels != nil && !f.labels.Matches(storedLabels(s.labels)) {
		return false
	}
	return f.fields == nil || f.fields.Matches(storedFields{s})
}

// Shard: watchers are indexed by the kind they watch.
func (f *filter) Shard() (string, bool) { return f.kind.gvr.Resource, true }
