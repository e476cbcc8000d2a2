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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrimInput is the transform of the informers the writer reads. It drops
// what the views never read before an object is cached, so those informers
// must not serve readers that need more, such as an admission policy's
// params. A Node keeps its identity, labels and timestamps: its spec and
// status (addresses, conditions, up to 50 images from the kubelet) would
// otherwise be most of what gridview holds of a large cluster. Other inputs
// lose only their managedFields: the ServiceGrid controller, which reads
// Services from the same informer, never writes a cached object, and
// kube-apiserver keeps the stored managedFields of a write that carries none.
// Idempotent, as a transform must be.
func TrimInput(obj any) (any, error) {
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
