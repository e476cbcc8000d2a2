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

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/util/retry"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	topologyapply "github.com/gridview/gridview/generated/applyconfiguration/topology/v1alpha1"
	"github.com/gridview/gridview/test/e2e/framework"
)

func TestServiceGridLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	client := gridview.TopologyV1alpha1().ServiceGrids(ns)

	watcher, err := client.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer watcher.Stop()

	created, err := client.Create(ctx, framework.NewServiceGrid("echo"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Spec.Fallback != topologyv1alpha1.FallbackNone || created.Generation != 1 || created.UID == "" {
		t.Errorf("created: fallback %q, generation %d, uid %q; want None, 1 and a uid", created.Spec.Fallback, created.Generation, created.UID)
	}
	expectEvent(t, watcher, watch.Added, "echo")

	got, err := client.Get(ctx, "echo", metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Fatalf("get: %v, uid %q, want %q", err, got.UID, created.UID)
	}

	if _, err := client.Create(ctx, framework.NewServiceGrid("other"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create other: %v", err)
	}
	expectEvent(t, watcher, watch.Added, "other")
	for _, tc := range []struct {
		name string
		opts metav1.ListOptions
		want int
	}{
		{name: "all", opts: metav1.ListOptions{}, want: 2},
		{name: "label selector", opts: metav1.ListOptions{LabelSelector: "app=echo"}, want: 1},
		{name: "metadata.name", opts: metav1.ListOptions{FieldSelector: "metadata.name=other"}, want: 1},
		{name: "spec.gridUniqKey", opts: metav1.ListOptions{FieldSelector: "spec.gridUniqKey=zone"}, want: 0},
		{name: "paged", opts: metav1.ListOptions{Limit: 1}, want: 1},
	} {
		t.Run("list/"+tc.name, func(t *testing.T) {
			list, err := client.List(ctx, tc.opts)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if len(list.Items) != tc.want || list.ResourceVersion == "" {
				t.Errorf("list = %d items, rv %q; want %d items and a resourceVersion", len(list.Items), list.ResourceVersion, tc.want)
			}
		})
	}

	// The reconciler writes the status too: every read-modify-write retries
	// on conflicts, and the watch may carry its status writes in between.
	update := func(what string, write func(*topologyv1alpha1.ServiceGrid) (*topologyv1alpha1.ServiceGrid, error),
		change func(*topologyv1alpha1.ServiceGrid)) *topologyv1alpha1.ServiceGrid {
		t.Helper()
		var result *topologyv1alpha1.ServiceGrid
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			current, err := client.Get(ctx, "echo", metav1.GetOptions{})
			if err != nil {
				return err
			}
			change(current)
			result, err = write(current)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return result
	}
	updateMain := func(sg *topologyv1alpha1.ServiceGrid) (*topologyv1alpha1.ServiceGrid, error) {
		return client.Update(ctx, sg, metav1.UpdateOptions{})
	}

	// A label change is metadata: the generation stays.
	updated := update("update labels", updateMain, func(sg *topologyv1alpha1.ServiceGrid) { sg.Labels["tier"] = "web" })
	if updated.Generation != 1 {
		t.Errorf("generation after a label change = %d, want 1", updated.Generation)
	}
	expectEvent(t, watcher, watch.Modified, "echo")

	// A spec change bumps the generation.
	patched, err := client.Patch(ctx, "echo", types.MergePatchType, []byte(`{"spec":{"fallback":"Any"}}`), metav1.PatchOptions{})
	if err != nil || patched.Spec.Fallback != topologyv1alpha1.FallbackAny || patched.Generation != 2 {
		t.Fatalf("merge patch: %v, fallback %q, generation %d; want Any and 2", err, patched.Spec.Fallback, patched.Generation)
	}
	expectEvent(t, watcher, watch.Modified, "echo")

	// The status subresource writes the status and nothing else.
	withStatus := update("update status", func(sg *topologyv1alpha1.ServiceGrid) (*topologyv1alpha1.ServiceGrid, error) {
		return client.UpdateStatus(ctx, sg, metav1.UpdateOptions{})
	}, func(sg *topologyv1alpha1.ServiceGrid) {
		sg.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "written.by.test"}}
		sg.Spec.GridUniqKey = "ignored.example.com/key"
	})
	if len(withStatus.Status.LoadBalancer.Ingress) != 1 || withStatus.Spec.GridUniqKey != "superedge.io/nodeunit" || withStatus.Generation != 2 {
		t.Errorf("after status update: status %+v, gridUniqKey %q, generation %d", withStatus.Status, withStatus.Spec.GridUniqKey, withStatus.Generation)
	}

	// A spec update through the main resource keeps the status.
	afterSpec := update("update spec", updateMain, func(sg *topologyv1alpha1.ServiceGrid) {
		sg.Spec.Template.Ports = append(sg.Spec.Template.Ports, corev1.ServicePort{Name: "https", Port: 443})
		sg.Status = topologyv1alpha1.ServiceGridStatus{}
	})
	if afterSpec.Status.ServiceName != "echo-svc" || meta.FindStatusCondition(afterSpec.Status.Conditions, "Ready") == nil {
		t.Errorf("spec update dropped the status: %+v", afterSpec.Status)
	}

	if err := client.Delete(ctx, "echo", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	expectEvent(t, watcher, watch.Deleted, "echo")
	if _, err := client.Get(ctx, "echo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
}

func TestServiceGridServerSideApply(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	client := gridview.TopologyV1alpha1().ServiceGrids(ns)

	apply := func(manager, key string, ports ...string) (*topologyv1alpha1.ServiceGrid, error) {
		tmpl := corev1apply.ServiceSpec().WithSelector(map[string]string{"app": "web"})
		for i, name := range ports {
			tmpl.WithPorts(corev1apply.ServicePort().WithName(name).WithPort(int32(8000 + i)))
		}
		return client.Apply(ctx, topologyapply.ServiceGrid("web", ns).
			WithSpec(topologyapply.ServiceGridSpec().WithGridUniqKey(key).WithTemplate(tmpl)),
			metav1.ApplyOptions{FieldManager: manager})
	}
	first, err := apply("team-a", "superedge.io/nodeunit", "http", "metrics")
	if err != nil {
		t.Fatalf("first apply: %v", err)
	}
	if len(first.Spec.Template.Ports) != 2 || first.Spec.Fallback != topologyv1alpha1.FallbackNone {
		t.Fatalf("after first apply: %+v", first.Spec)
	}
	// Applying again without a port removes it: the manager owns what it sent.
	second, err := apply("team-a", "superedge.io/nodeunit", "http")
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if len(second.Spec.Template.Ports) != 1 || second.Generation != 2 {
		t.Errorf("after second apply: %d ports, generation %d; want 1 port and generation 2", len(second.Spec.Template.Ports), second.Generation)
	}
	// The reconciler manages the status subresource; the object is team-a's alone.
	var managers []string
	for _, entry := range second.ManagedFields {
		if entry.Subresource == "" {
			managers = append(managers, entry.Manager)
		}
	}
	if len(managers) != 1 || managers[0] != "team-a" {
		t.Errorf("managers of the object = %v, want team-a only", managers)
	}
	// Another manager setting a field team-a owns to another value conflicts.
	if _, err := apply("team-b", "topology.kubernetes.io/zone", "http"); !apierrors.IsConflict(err) {
		t.Errorf("conflicting apply: %v, want a 409 Conflict", err)
	}
}

// expectEvent waits for an event of the given type for the named object,
// passing over others (such as the reconciler's status writes).
func expectEvent(t *testing.T, w watch.Interface, wantType watch.EventType, wantName string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed while waiting for %s %s", wantType, wantName)
			}
			if sg, isSG := ev.Object.(*topologyv1alpha1.ServiceGrid); isSG && ev.Type == wantType && sg.Name == wantName {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event for %s within 10s", wantType, wantName)
		}
	}
}
