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
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// stored is a served object as the state keeps it: its protobuf encoding,
// without resourceVersion and type meta, and the little a filter reads
// (namespace, name, labels, the kind's selectable fields). A node's view
// held decoded costs about five times as much; it is decoded only when
// served, for each watcher, so nothing shares a decoded object either.
// A stored object never changes: a change stores a new one.
type stored struct {
	kind      *kind
	namespace string
	name      string
	// labels are key, value pairs sorted by key.
	labels []string
	// fields are the values of the kind's extra selectable fields, in the
	// order of kind.extraFields.
	fields []string
	rv     uint64
	data   []byte
	// parts, for Endpoints, are the EndpointSlices whose subsets it holds:
	// an Endpoints object is assembled when served, from the slices it was
	// rendered from, and holds nothing of its own but its metadata.
	parts []*stored
}

var _ runtime.Object = &stored{}

// GetObjectKind: a stored object is never encoded as it is.
func (s *stored) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the record; its content is immutable and shared.
func (s *stored) DeepCopyObject() runtime.Object {
	out := *s
	return &out
}

func (s *stored) key() types.NamespacedName {
	return types.NamespacedName{Namespace: s.namespace, Name: s.name}
}

// protoMessage is what the generated protobuf code of k8s.io/api gives
// every type.
type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// store encodes an object for the state. The object is not modified: it may
// be shared.
func store(obj runtime.Object) (*stored, error) {
	k := kindOf(obj)
	m := obj.(metav1.Object)
	s := &stored{kind: k, namespace: m.GetNamespace(), name: m.GetName(), labels: compactLabels(m.GetLabels())}
	if k.extraFields != nil {
		s.fields = k.extraFields(obj)
	}
	bare := shallowCopy(obj)
	bare.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	bare.(metav1.Object).SetResourceVersion("")
	data, err := bare.(protoMessage).Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s: %w", k.gvr.Resource, s.namespace, s.name, err)
	}
	s.data = data
	return s, nil
}

// storeEndpoints is the Endpoints object meta names, with the subsets of
// parts.
func storeEndpoints(meta metav1.ObjectMeta, parts []*stored) *stored {
	s, err := store(&corev1.Endpoints{ObjectMeta: meta})
	if err != nil {
		// Only a type without generated protobuf code fails to encode.
		panic(err)
	}
	s.parts = parts
	return s
}

// restore reads what a filter needs of a stored object loaded with its
// encoding only, and checks that the encoding decodes.
func (s *stored) restore() error {
	obj := s.kind.newObject()
	if err := obj.(protoMessage).Unmarshal(s.data); err != nil {
		return fmt.Errorf("decoding %s: %w", s.kind.gvr.Resource, err)
	}
	m := obj.(metav1.Object)
	s.namespace, s.name, s.labels = m.GetNamespace(), m.GetName(), compactLabels(m.GetLabels())
	if s.kind.extraFields != nil {
		s.fields = s.kind.extraFields(obj)
	}
	return nil
}

// object decodes a stored object into the API object served: a new one,
// which the caller owns.
func (s *stored) object() runtime.Object {
	obj := s.kind.newObject()
	if err := obj.(protoMessage).Unmarshal(s.data); err != nil {
		// The state encoded it: it decodes.
		panic(fmt.Errorf("decoding %s %s/%s: %w", s.kind.gvr.Resource, s.namespace, s.name, err))
	}
	if len(s.parts) > 0 {
		ep := obj.(*corev1.Endpoints)
		for _, part := range s.parts {
			if subset, ok := renderSubset(part.object().(*discoveryv1.EndpointSlice)); ok {
				ep.Subsets = append(ep.Subsets, subset)
			}
		}
	}
	if s.rv != 0 {
		obj.(metav1.Object).SetResourceVersion(strconv.FormatUint(s.rv, 10))
	}
	return obj
}

// sameContent says whether two stored objects serve the same content, but
// for their resourceVersions.
func (s *stored) sameContent(o *stored) bool {
	if s.kind != o.kind || !bytes.Equal(s.data, o.data) || len(s.parts) != len(o.parts) {
		return false
	}
	for i := range s.parts {
		if s.parts[i] != o.parts[i] && !s.parts[i].sameContent(o.parts[i]) {
			return false
		}
	}
	return true
}

// served decodes an object the state keeps and copies any other (a
// bookmark, or an object decoded already) so that encoding, which writes
// the type meta, writes only the watcher's own.
func served(obj runtime.Object) runtime.Object {
	if s, ok := obj.(*stored); ok {
		return s.object()
	}
	return shallowCopy(obj)
}

// compactLabels keeps a label map as sorted pairs: a map of two labels
// costs four times as much.
func compactLabels(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, 2*len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k, m[k])
	}
	return out
}

// labelMap turns compact labels back into a map.
func labelMap(pairs []string) map[string]string {
	if len(pairs) == 0 {
		return nil
	}
	out := make(map[string]string, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out[pairs[i]] = pairs[i+1]
	}
	return out
}

// storedLabels reads compact labels as labels.Labels.
type storedLabels []string

func (l storedLabels) Lookup(key string) (string, bool) {
	i := sort.Search(len(l)/2, func(i int) bool { return l[2*i] >= key })
	if 2*i < len(l) && l[2*i] == key {
		return l[2*i+1], true
	}
	return "", false
}

func (l storedLabels) Has(key string) bool {
	_, ok := l.Lookup(key)
	return ok
}

func (l storedLabels) Get(key string) string {
	value, _ := l.Lookup(key)
	return value
}

// storedFields reads a stored object's selectable fields as fields.Fields.
type storedFields struct{ s *stored }

func (f storedFields) Get(field string) string {
	value, _ := f.lookup(field)
	return value
}

func (f storedFields) Has(field string) bool {
	_, ok := f.lookup(field)
	return ok
}

func (f storedFields) lookup(field string) (string, bool) {
	switch field {
	case "metadata.name":
		return f.s.name, true
	case "metadata.namespace":
		return f.s.namespace, true
	}
	if i := slices.Index(f.s.kind.extraFieldNames, field); i >= 0 {
		return f.s.fields[i], true
	}
	return "", false
}
