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
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/diff"
)

var unitRule = map[string]string{"topology.gridview.io/keys": "unit"}

func labelledService() *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo", Labels: map[string]string{"app": "echo"}, Annotations: unitRule}}
}

var managedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1"}}

// kubeletNode is a Node as a kubelet keeps it: status, spec, annotations and
// managedFields around the labels the views read.
func kubeletNode(name, unit string) *corev1.Node {
	n := node(name, unit)
	n.UID, n.ResourceVersion, n.CreationTimestamp = types.UID("uid-"+name), "42", metav1.Unix(1700000000, 0)
	n.Annotations = map[string]string{"node.alpha.kubernetes.io/ttl": "0"}
	n.ManagedFields = managedFields
	n.Spec.PodCIDR = "10.244.0.0/24"
	n.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.example.com/app:v1"}, SizeBytes: 1 << 20}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	return n
}

func withManagedFields[T metav1.Object](obj T) T {
	obj.SetManagedFields(managedFields)
	return obj
}

func TestTrimInput(t *testing.T) {
	deleted := metav1.Unix(1700000100, 0)
	deleting := kubeletNode("edge-2", "b")
	deleting.DeletionTimestamp = &deleted
	for name, tc := range map[string]struct {
		in, want any
	}{
		"a Node keeps the metadata the views read": {
			in: kubeletNode("edge-1", "a"),
			want: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "edge-1", UID: "uid-edge-1", ResourceVersion: "42",
				CreationTimestamp: metav1.Unix(1700000000, 0), Labels: map[string]string{"topology.gridview.io/unit": "a"}}},
		},
		"a deleted Node keeps its deletion timestamp": {
			in: deleting,
			want: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "edge-2", UID: "uid-edge-2", ResourceVersion: "42",
				CreationTimestamp: metav1.Unix(1700000000, 0), DeletionTimestamp: &deleted, Labels: map[string]string{"topology.gridview.io/unit": "b"}}},
		},
		"a Service loses its managedFields only": {
			in:   withManagedFields(labelledService()),
			want: labelledService(),
		},
		"an EndpointSlice loses its managedFields only": {
			in:   withManagedFields(slice("demo", "echo", "edge-1", "edge-2")),
			want: slice("demo", "echo", "edge-1", "edge-2"),
		},
		"a Namespace loses its managedFields only": {
			in: withManagedFields(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Annotations: unitRule},
				Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}),
			want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Annotations: unitRule},
				Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := TrimInput(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(tc.want, got) {
				t.Errorf("trimmed (-want +got):\n%s", diff.Diff(tc.want, got))
			}
			again, err := TrimInput(got)
			if err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(got, again) {
				t.Errorf("trimming again changed it (-once +twice):\n%s", diff.Diff(got, again))
			}
		})
	}
}
