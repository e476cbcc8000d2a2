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

package ha

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

func newServiceGrid(name string) *topologyv1alpha1.ServiceGrid {
	return &topologyv1alpha1.ServiceGrid{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: topologyv1alpha1.ServiceGridSpec{
			GridUniqKey: unitKey,
			Template: corev1.ServiceSpec{
				Selector: map[string]string{"app": name},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
			},
		},
	}
}

// waitReady waits until the ServiceGrid's status says its Service matches
// its current generation.
func waitReady(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "ServiceGrid "+name+" Ready", func(ctx context.Context) error {
		sg, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(sg.Status.Conditions, "Ready")
		if sg.Status.ObservedGeneration != sg.Generation || cond == nil || cond.Status != metav1.ConditionTrue {
			return errors.New("not Ready yet")
		}
		return nil
	})
}

// With its etcd gone, gridview-apiserver refuses ServiceGrid writes at once
// with a 5xx that names etcd, keeps serving NodeEndpoints (computed from
// kube-apiserver's informers, not stored), and recovers when etcd returns.
func TestGridviewEtcdUnavailable(t *testing.T) {
	ctx := context.Background()
	s := newSite(t)
	grids := gridview.TopologyV1alpha1().ServiceGrids(s.ns)
	if _, err := grids.Create(ctx, newServiceGrid("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, s.ns, "before", 10*time.Second)
	eventually(t, 10*time.Second, "a1's view of grid", func(ctx context.Context) error {
		return expectAddresses(ctx, s, "a1", "10.1.0.1", "10.1.0.2")
	})

	if err := cluster.StopGridviewEtcd(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	restart := func() {
		if !restarted {
			restarted = true
			if err := cluster.StartGridviewEtcd(context.Background()); err != nil {
				t.Fatalf("starting gridview-etcd again: %v", err)
			}
		}
	}
	t.Cleanup(restart)

	t.Run("writes fail fast with a 503 naming etcd", func(t *testing.T) {
		writeCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		start := time.Now()
		_, err := grids.Create(writeCtx, newServiceGrid("during"), metav1.CreateOptions{})
		elapsed := time.Since(start)
		t.Logf("create with etcd down: %v after %s", err, elapsed.Round(time.Millisecond))
		var status apierrors.APIStatus
		if !errors.As(err, &status) || !apierrors.IsServiceUnavailable(err) {
			t.Fatalf("create: %v, want 503 Service Unavailable", err)
		}
		if msg := strings.ToLower(status.Status().Message); !strings.Contains(msg, "etcd") && !strings.Contains(msg, "storage") {
			t.Errorf("message %q names neither etcd nor storage", status.Status().Message)
		}
		if elapsed > 15*time.Second {
			t.Errorf("create took %s to fail, want a prompt answer", elapsed)
		}
	})

	t.Run("NodeEndpoints keep serving", func(t *testing.T) {
		for _, r := range replicas {
			if _, err := viewsIn(ctx, directClient(t, r), s.ns); err != nil {
				t.Errorf("list from %s: %v", r.Name, err)
			}
		}
		w, err := gridview.TopologyV1alpha1().NodeEndpoints(s.ns).Watch(ctx, metav1.ListOptions{
			FieldSelector: "nodeName=" + s.node("a1"), AllowWatchBookmarks: true})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		if err := s.relabel(ctx, kubeClient, "a2", "b"); err != nil {
			t.Fatal(err)
		}
		timeout := time.After(20 * time.Second)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("watch closed")
				}
				if view, isView := ev.Object.(*topologyv1alpha1.NodeEndpoints); isView && ev.Type != watch.Deleted &&
					view.ServiceName == "grid" && slices.Equal(addresses(view), []string{"10.1.0.1"}) {
					return
				}
			case <-timeout:
				t.Fatal("no event with a1's view of grid after a2 left unit a")
			}
		}
	})

	restart()
	t.Run("recovers", func(t *testing.T) {
		eventually(t, 60*time.Second, "a ServiceGrid write after etcd returned", func(ctx context.Context) error {
			_, err := grids.Create(ctx, newServiceGrid("after"), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
		waitReady(t, s.ns, "after", 30*time.Second)
		// The write above may have reached one replica only; the other's etcd
		// guard probes at most once a second, so it may answer 503 for up to
		// a second more.
		eventually(t, 5*time.Second, "the ServiceGrid written before the outage", func(ctx context.Context) error {
			_, err := grids.Get(ctx, "before", metav1.GetOptions{})
			return err
		})
		// Both replicas, whichever the aggregator picks, write again.
		for _, r := range replicas {
			eventually(t, 30*time.Second, r.Name+" readyz", func(ctx context.Context) error {
				_, err := directClient(t, r).Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
				return err
			})
		}
	})
}

// expectAddresses checks a node's view of grid through the aggregator.
func expectAddresses(ctx context.Context, s site, node string, want ...string) error {
	got, err := s.gridAddresses(ctx, gridview, node)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return errors.New(node + ": " + strings.Join(got, ",") + ", want " + strings.Join(want, ","))
	}
	return nil
}
