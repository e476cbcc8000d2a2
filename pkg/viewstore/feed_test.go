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
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

func TestFeedLoadsThenFollowsTheCluster(t *testing.T) {
	kube := fake.NewClientset(node("edge-1", "a"), service("demo", "echo", nil, anyMatchUnit))
	// The fake clientset's watch does not resume from a resourceVersion: an
	// object created between an informer's list and its watch is lost. Wait
	// for the three watches before creating any.
	watching := make(chan struct{}, 3)
	kube.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := kube.Tracker().Watch(action.GetResource(), action.GetNamespace())
		watching <- struct{}{}
		return true, w, err
	})
	factory := informers.NewSharedInformerFactory(kube, 0)
	store := New(testOptions)
	recorder := record.NewFakeRecorder(10)
	feed, err := NewFeed(store, factory.Core().V1().Nodes(), factory.Core().V1().Services(), factory.Discovery().V1().EndpointSlices(), recorder)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	factory.Start(ctx.Done())
	go feed.Run(ctx)
	for range 3 {
		select {
		case <-watching:
		case <-time.After(5 * time.Second):
			t.Fatal("the informers did not start watching")
		}
	}

	endpointsOf := func(name string) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			view, err := store.Get("demo", name)
			return err == nil && len(view.Slice.Endpoints) == 1, nil
		}
	}
	if _, err := kube.DiscoveryV1().EndpointSlices("demo").Create(ctx, slice("demo", "echo", "edge-2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Nodes().Create(ctx, node("edge-2", "a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, endpointsOf("edge-1..echo-x")); err != nil {
		t.Fatalf("edge-1 never saw edge-2's endpoint in its unit: %v", err)
	}

	bad := service("demo", "echo", nil, map[string]string{"topologyKeys": "[bad"})
	bad.ResourceVersion = "2"
	if _, err := kube.CoreV1().Services("demo").Update(ctx, bad, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case event := <-recorder.Events:
		if want := corev1.EventTypeWarning + " MalformedTopology"; !strings.HasPrefix(event, want) {
			t.Errorf("event %q, want a %s", event, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no Event for the malformed annotation")
	}

	if err := kube.DiscoveryV1().EndpointSlices("demo").Delete(ctx, "echo-x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, err := store.Get("demo", "edge-1..echo-x")
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("the deleted slice's NodeEndpoints stayed: %v", err)
	}
}
