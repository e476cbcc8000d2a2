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

package inputlog

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// encode is an input as the log holds it: Kubernetes protobuf, reduced to
// what the views derive from. Its resourceVersion is left out, so that a
// kubelet's status update, which changes nothing the views read, encodes
// as before and is never written.
func encode(obj metav1.Object) ([]byte, error) {
	switch obj := obj.(type) {
	case *corev1.Node:
		return (&corev1.Node{ObjectMeta: reduced(obj.ObjectMeta, false)}).Marshal()
	case *corev1.Namespace:
		return (&corev1.Namespace{ObjectMeta: reduced(obj.ObjectMeta, true)}).Marshal()
	case *corev1.Service:
		return (&corev1.Service{ObjectMeta: reduced(obj.ObjectMeta, true), Spec: obj.Spec}).Marshal()
	case *discoveryv1.EndpointSlice:
		slice := *obj
		slice.ObjectMeta = reduced(obj.ObjectMeta, true)
		return slice.Marshal()
	}
	return nil, fmt.Errorf("an input of type %T", obj)
}

// reduced is the metadata the views read: no resourceVersion, managed
// fields, nor the annotations of a Node.
func reduced(meta metav1.ObjectMeta, annotations bool) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID,
		CreationTimestamp: meta.CreationTimestamp, Labels: meta.Labels, OwnerReferences: meta.OwnerReferences,
	}
	if annotations {
		out.Annotations = meta.Annotations
	}
	return out
}

// decode reads an input of a kind as encode wrote it.
func decode(key Key, data []byte) (metav1.Object, error) {
	var obj interface {
		metav1.Object
		Unmarshal([]byte) error
	}
	switch key.Kind {
	case Nodes:
		obj = &corev1.Node{}
	case Namespaces:
		obj = &corev1.Namespace{}
	case Services:
		obj = &corev1.Service{}
	case EndpointSlices:
		obj = &discoveryv1.EndpointSlice{}
	default:
		return nil, fmt.Errorf("an input of kind %v", key.Kind)
	}
	if err := obj.Unmarshal(data); err != nil {
		return nil, fmt.Errorf("decoding %v %v: %w", key.Kind, key.NamespacedName, err)
	}
	if obj.GetNamespace() != key.Namespace || obj.GetName() != key.Name {
		return nil, fmt.Errorf("the %v at %v holds %s/%s", key.Kind, key.NamespacedName, obj.GetNamespace(), obj.GetName())
	}
	return obj, nil
}
