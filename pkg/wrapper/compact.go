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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastApplied is kubectl's copy of a whole object in an annotation: as large
// as the object, and read by nobody kube-proxy is.
const lastApplied = corev1.LastAppliedConfigAnnotation

// compact drops, before an object is encoded for the state, what kube-proxy
// never reads: the field managers, kubectl's last applied configuration and
// a Node's image list. What is left is all a node keeps of the object.
func compact(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	m.SetManagedFields(nil)
	if annotations := m.GetAnnotations(); annotations[lastApplied] != "" {
		delete(annotations, lastApplied)
		if len(annotations) == 0 {
			m.SetAnnotations(nil)
		}
	}
	if node, ok := obj.(*corev1.Node); ok {
		node.Status.Images = nil
	}
	return obj, nil
}
