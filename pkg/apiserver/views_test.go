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

package apiserver

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

var kubeletFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1"}}

// kubeletNode is a Node as a kubelet keeps it.
func kubeletNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"unit": "a"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}, ManagedFields: kubeletFields},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24"},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Images:     []corev1.ContainerImage{{Names: []string{"registry.example.com/app:v1"}, SizeBytes: 1 << 20}},
		},
	}
}

// The views' inputs are cached trimmed, whether they came with the informer's
// list or through its watch.
func TestViewInputsAreCachedTrimmed(t *testing.T) {
	kube := fake.NewClientset(kubeletNode("listed"))
	// The fake clientset's watch does not resume from a resourceVersion:
	// objects are created once both watches started.
	watching := make(chan struct{}, 2)
	kube.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := kube.Tracker().Watch(action.GetResource(), action.GetNamespace())
		watching <- struct{}{}
		return true, w, err
	})
	inputs := viewInputs(kube)
	nodes, services := inputs.Core().V1().Nodes().Lister(), inputs.Core().V1().Services().Lister()
	inputs.Start(t.Context().Done())
	for range 2 {
		select {
		case <-watching:
		case <-time.After(5 * time.Second):
			t.Fatal("the informers did not start watching")
		}
	}
	ctx := t.Context()
	if _, err := kube.CoreV1().Nodes().Create(ctx, kubeletNode("watched"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo", Labels: map[string]string{"app": "echo"}, ManagedFields: kubeletFields}}
	if _, err := kube.CoreV1().Services("demo").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, errNode := nodes.Get("watched")
		_, errService := services.Services("demo").Get("echo")
		return errNode == nil && errService == nil, nil
	}); err != nil {
		t.Fatalf("the informers never cached the Node and Service created: %v", err)
	}

	for _, name := range []string{"listed", "watched"} {
		n, err := nodes.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if n.Spec.PodCIDR != "" || len(n.Status.Conditions) > 0 || len(n.Status.Images) > 0 || len(n.Annotations) > 0 || len(n.ManagedFields) > 0 {
			t.Errorf("Node %s cached with %+v, want its metadata only", name, n)
		}
		if n.Labels["unit"] != "a" || n.UID == "" {
			t.Errorf("Node %s cached without its labels or UID: %+v", name, n.ObjectMeta)
		}
	}
	cached, err := services.Services("demo").Get("echo")
	if err != nil {
		t.Fatal(err)
	}
	if len(cached.ManagedFields) > 0 || cached.Labels["app"] != "echo" {
		t.Errorf("Service cached with %+v, want it whole but for its managedFields", cached.ObjectMeta)
	}
}
