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

package topology

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ControllingServiceGrid returns the name of the ServiceGrid of this group
// that controls obj, as its controller reference says. A ServiceGrid of
// another group (SuperEdge's superedge.io) is not one.
func ControllingServiceGrid(obj metav1.Object) (string, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "ServiceGrid" {
		return "", false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != GroupName {
		return "", false
	}
	return ref.Name, true
}
