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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func (f *filter) Matches(obj runtime.Object) bool {
	if kindOf(obj) != f.kind {
		return false
	}
	m := obj.(metav1.Object)
	if f.namespace != "" && m.GetNamespace() != f.namespace {
		return false
	}
	if f.labels != nil && !f.labels.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	return f.fields == nil || f.fields.Matches(f.kind.fields(obj))
}

// Shard: watchers are indexed by the kind they watch.
func (f *filter) Shard() (string, bool) { return f.kind.gvr.Resource, true }
