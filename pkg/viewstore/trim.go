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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// trimInput is the transform of the informers that feed the store: it drops
// what no reader of their caches uses before the object is cached. A Node
// keeps only the metadata the views read: its spec and status (a kubelet
// reports addresses, conditions and up to 50 images) would otherwise make up
// most of what gridview holds of a large cluster, and a status update would
// replace them in the cache every few minutes per node. Every other input
// only loses its managedFields, which a write from the cache cannot drop:
// kube-apiserver keeps the stored ones when a request carries none.
// Idempotent, as a transform must be.
func trimInput(obj any) (any, error) {
	switch obj := obj.(type) {
	case *corev1.Node:
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: obj.Name, UID: obj.UID, ResourceVersion: obj.ResourceVersion,
			CreationTimestamp: obj.CreationTimestamp, DeletionTimestamp: obj.DeletionTimestamp, Labels: obj.Labels,
		}}, nil
	case metav1.Object:
		obj.SetManagedFields(nil)
	}
	return obj, nil
}
