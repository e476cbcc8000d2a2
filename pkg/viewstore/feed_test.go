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
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// startFeed runs a feed on a fake cluster that holds objects, and returns
// once its informers watch.
func startFeed(t *testing.T, objects ...runtime.Object) (*fake.Clientset, *Store, *record.FakeRecorder) {
	t.Helper()
	kube := fake.NewClientset(objects...)
	// The fake clientset's watch does not resume from a resourceVersion: an
	// object created between an informer's list and its watch is lost. Wait
	// for the four watches before creating any.
	watching := make(chan struct{}, 4)
	kube.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := kube.Tracker().Watch(action.GetResource(), action.GetNamespace())
		watching <- struct{}{}
		return true, w, err
	})
	factory := informers.NewSharedInformerFactory(kube, 0)
	store := New(testOptions)
	recorder := record.NewFakeRecorder(10)
	feed, err := NewFeed(store, factory.Core().V1().Nodes(), factory.Core().V1().Services(), factory.Discovery().V1().EndpointSlices(),
		factory.Core().V1().Namespaces(), recorder)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	go feed.Run(ctx)
	for range 4 {
		select {
		case <-watching:
		case <-time.After(5 * time.Second):
			t.Fatal("the informers did not start watching")
		}
	}
	return kube, store, recorder
}

// awaitView waits until a NodeEndpoints satisfies ok; nil for none.
func awaitView(t *testing.T, store *Store, name, what string, ok func(*topologyapi.NodeEndpoints) bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		view, err := store.Get("demo", name)
		if apierrors.IsNotFound(err) {
			return ok(nil), nil
		}
		return err == nil && ok(view), nil
	}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// awaitEvent waits for the next Event and checks it starts with want.
func awaitEvent(t *testing.T, recorder *record.FakeRecorder, want string) {
	t.Helper()
	select {
	case event := <-recorder.Events:
		if !strings.HasPrefix(event, want) {
			t.Errorf("event %q, want a %s", event, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s Event", want)
	}
}

func TestFeedLoadsThenFollowsTheCluster(t *testing.T) {
	kube, store, recorder := startFeed(t, node("edge-1", "a"), service("demo", "echo", nil, anyMatchUnit))
	ctx := t.Context()
	if _, err := kube.DiscoveryV1().EndpointSlices("demo").Create(ctx, slice("demo", "echo", "edge-2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Nodes().Create(ctx, node("edge-2", "a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitView(t, store, "edge-1..echo-x", "edge-1 never saw edge-2's endpoint in its unit", func(view *topologyapi.NodeEndpoints) bool {
		return view != nil && len(view.Slice.Endpoints) == 1
	})

	bad := service("demo", "echo", nil, map[string]string{"topologyKeys": "[bad"})
	bad.ResourceVersion = "2"
	if _, err := kube.CoreV1().Services("demo").Update(ctx, bad, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitEvent(t, recorder, corev1.EventTypeWarning+" MalformedTopology")

	if err := kube.DiscoveryV1().EndpointSlices("demo").Delete(ctx, "echo-x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitView(t, store, "edge-1..echo-x", "the deleted slice's NodeEndpoints stayed", func(view *topologyapi.NodeEndpoints) bool { return view == nil })
}

func TestFeedFollowsNamespaceDefaultsAndReportsRules(t *testing.T) {
	demo := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Annotations: map[string]string{topology.AnnotationGridviewKeys: "unit"}}}
	kube, store, recorder := startFeed(t, node("edge-1", "a"), node("edge-2", "b"), demo,
		service("demo", "echo", nil, nil), slice("demo", "echo", "edge-2"))
	ctx := t.Context()
	awaitView(t, store, "edge-2..echo-x", "edge-2 does not see its own endpoint", func(view *topologyapi.NodeEndpoints) bool {
		return view != nil && view.Topology.Rule == topology.RuleNamespace
	})
	if _, err := store.Get("demo", "edge-1..echo-x"); !apierrors.IsNotFound(err) {
		t.Errorf("edge-1 sees edge-2's endpoint in another unit, though the Namespace's default was loaded first: %v", err)
	}

	// The fake clientset keeps the resourceVersion it is given.
	updateNamespace := func(annotations map[string]string, resourceVersion string) {
		t.Helper()
		ns := demo.DeepCopy()
		ns.Annotations, ns.ResourceVersion = annotations, resourceVersion
		if _, err := kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	updateNamespace(nil, "2")
	awaitView(t, store, "edge-1..echo-x", "the default's removal did not unprune the Service", func(view *topologyapi.NodeEndpoints) bool {
		return view != nil && view.Topology.Rule == ""
	})
	updateNamespace(map[string]string{topology.AnnotationGridviewKeys: "*,unit"}, "3")
	awaitEvent(t, recorder, corev1.EventTypeWarning+" MalformedTopology")

	several := service("demo", "echo", nil, map[string]string{topology.AnnotationGridviewKeys: "unit", topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"})
	for i, labels := range []map[string]string{nil, {"app": "echo"}} {
		several.Labels, several.ResourceVersion = labels, fmt.Sprint(i+2)
		if _, err := kube.CoreV1().Services("demo").Update(ctx, several, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		awaitView(t, store, "edge-2..echo-x", "the Service's labels", func(view *topologyapi.NodeEndpoints) bool {
			return view != nil && view.Labels["app"] == labels["app"] && view.Topology.Rule == topology.RuleGridview
		})
	}
	awaitEvent(t, recorder, corev1.EventTypeNormal+" TopologyRuleChosen The Service carries several topology rules (Gridview, OpenYurt): Gridview applies")
	select {
	case event := <-recorder.Events:
		t.Errorf("the same rules were reported again: %q", event)
	default:
	}
}

// TestFeedReportsRuleChangesOnly checks what is news of a Service's several
// rules: the first TopologyRuleChosen Event must be the last step's, since
// the Events of one informer come in order through one worker.
func TestFeedReportsRuleChangesOnly(t *testing.T) {
	gridviewOpenYurt := map[string]string{topology.AnnotationGridviewKeys: "unit", topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}
	gridviewSuperEdge := map[string]string{topology.AnnotationGridviewKeys: "unit,*", topology.AnnotationTopologyKeys: `["unit","*"]`}
	allThree := map[string]string{topology.AnnotationGridviewKeys: "unit", topology.AnnotationTopologyKeys: `["unit"]`,
		topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}
	rendered := func(name string, annotations map[string]string) *corev1.Service {
		svc := service("demo", name, nil, annotations)
		svc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "topology.gridview.io/v1alpha1", Kind: "ServiceGrid", Name: name, UID: "u", Controller: ptr.To(true)}}
		return svc
	}
	ownedByOthers := rendered("other", gridviewSuperEdge)
	ownedByOthers.OwnerReferences[0].APIVersion = "example.com/v1"
	withUID := func(svc *corev1.Service, uid types.UID) *corev1.Service {
		svc.UID = uid
		return svc
	}
	tests := []struct {
		name    string
		atStart []runtime.Object
		// updates are applied in order; the last must be reported.
		updates []*corev1.Service
		want    string
	}{{
		name:    "rules found at start are not news, nor is another change of their Service",
		atStart: []runtime.Object{service("demo", "echo", nil, gridviewOpenYurt)},
		updates: []*corev1.Service{service("demo", "echo", map[string]string{"app": "echo"}, gridviewOpenYurt), service("demo", "echo", nil, allThree)},
		want:    "(Gridview, SuperEdge, OpenYurt): Gridview applies",
	}, {
		name:    "a ServiceGrid's Service found at start",
		atStart: []runtime.Object{rendered("grid", gridviewSuperEdge)},
		updates: []*corev1.Service{service("demo", "echo", nil, gridviewOpenYurt)},
		want:    "(Gridview, OpenYurt): Gridview applies",
	}, {
		name:    "a ServiceGrid's Service rendered while running",
		updates: []*corev1.Service{rendered("grid", gridviewSuperEdge), service("demo", "echo", nil, gridviewOpenYurt)},
		want:    "(Gridview, OpenYurt): Gridview applies",
	}, {
		name:    "a Service created again, as the worker may see it: an update of another UID",
		atStart: []runtime.Object{withUID(service("demo", "echo", nil, gridviewOpenYurt), "first")},
		updates: []*corev1.Service{withUID(service("demo", "echo", nil, gridviewOpenYurt), "second")},
		want:    "(Gridview, OpenYurt): Gridview applies",
	}, {
		name:    "a Service another group's ServiceGrid controls",
		updates: []*corev1.Service{ownedByOthers},
		want:    "(Gridview, SuperEdge): Gridview applies",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kube, store, recorder := startFeed(t, tc.atStart...)
			// An update before the feed lists its Services would be found at start.
			if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
				return store.Loaded(), nil
			}); err != nil {
				t.Fatalf("the store was not loaded: %v", err)
			}
			for i, svc := range tc.updates {
				svc.ResourceVersion = fmt.Sprint(i + 10)
				_, err := kube.CoreV1().Services("demo").Update(t.Context(), svc, metav1.UpdateOptions{})
				if apierrors.IsNotFound(err) {
					_, err = kube.CoreV1().Services("demo").Create(t.Context(), svc, metav1.CreateOptions{})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			awaitEvent(t, recorder, corev1.EventTypeNormal+" TopologyRuleChosen The Service carries several topology rules "+tc.want)
		})
	}
}

// TestFeedCountsMalformedDefaults follows one Namespace through the gauge
// of malformed defaults, from the load on.
func TestFeedCountsMalformedDefaults(t *testing.T) {
	RegisterMetrics()
	malformed := map[string]string{topology.AnnotationGridviewKeys: "*,unit"}
	demo := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Annotations: malformed}}
	kube, _, _ := startFeed(t, demo, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fine"}})
	awaitGauge := func(want float64) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			return gaugeValue(t, malformedDefaults) == want, nil
		}); err != nil {
			t.Fatalf("%v malformed Namespace defaults, want %v", gaugeValue(t, malformedDefaults), want)
		}
	}
	awaitGauge(1)
	tests := []struct {
		name        string
		annotations map[string]string
		deleted     bool
		want        float64
	}{
		{name: "mended", annotations: map[string]string{topology.AnnotationGridviewKeys: "unit"}, want: 0},
		{name: "broken again", annotations: malformed, want: 1},
		{name: "deleted", deleted: true, want: 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.deleted {
				err = kube.CoreV1().Namespaces().Delete(t.Context(), demo.Name, metav1.DeleteOptions{})
			} else {
				ns := demo.DeepCopy()
				ns.Annotations, ns.ResourceVersion = tc.annotations, fmt.Sprint(i+2)
				_, err = kube.CoreV1().Namespaces().Update(t.Context(), ns, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			awaitGauge(tc.want)
		})
	}
}
