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
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// bookmark carries a resourceVersion; initialEventsEnd marks the end of a
// streaming list's initial events.
func bookmark(_ watchstream.Filter, rv uint64, initialEventsEnd bool) runtime.Object {
	object := &topologyapi.NodeEndpoints{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(rv, 10)}}
	if initialEventsEnd {
		object.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return object
}

// createdOf is when a view came to be: when the later of its node and its
// Service was created.
func createdOf(services map[types.NamespacedName]serviceMeta, nodeCreated map[string]metav1.Time, node string, svc types.NamespacedName) metav1.Time {
	return laterOf(services[svc].created, nodeCreated[node])
}

func laterOf(a, b metav1.Time) metav1.Time {
	if a.Before(&b) {
		return b
	}
	return a
}

func newObject(node string, view *topology.SliceView, rv uint64, created metav1.Time) *topologyapi.NodeEndpoints {
	obj := objectOf(node, view, rv, created)
	return &obj
}

// objectOf is newObject as a value, which a list appends to its items
// without a copy on the heap first.
func objectOf(node string, view *topology.SliceView, rv uint64, created metav1.Time) topologyapi.NodeEndpoints {
	return topologyapi.NodeEndpoints{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         view.Service.Namespace,
			Name:              topology.Name(node, view.Slice.Name),
			ResourceVersion:   strconv.FormatUint(rv, 10),
			Labels:            labelsOf(view),
			CreationTimestamp: created,
		},
		NodeName:    node,
		ServiceName: view.Service.Name,
		Topology:    view.Topology,
		Slice:       view.Slice,
	}
}

// pending is a node's NodeEndpoints of a slice view, built when a watcher
// sends it; what it reads of the store is taken when it is made, under the
// store's lock.
type pending struct {
	node    string
	view    *topology.SliceView
	rv      uint64
	created metav1.Time
}

var _ runtime.Object = &pending{}

func (p *pending) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject builds the object: it shares only the slice view's
// content, which nothing modifies.
func (p *pending) DeepCopyObject() runtime.Object {
	return newObject(p.node, p.view, p.rv, p.created)
}

// build is what a watcher sends of an object: a pending one built, any other
// as it is (each watcher's own already).
func build(obj runtime.Object) runtime.Object {
	if p, ok := obj.(*pending); ok {
		return p.DeepCopyObject()
	}
	return obj
}
