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
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// With its etcd gone, every gridview-apiserver replica stops being ready
// within 10 s: its ServiceGrids and gridview's input log, which its views
// derive from, live there. It refuses ServiceGrid writes at once with a 5xx
// that names etcd, and a list of NodeEndpoints that must be current (no
// resourceVersion) with a 503 that names etcd; one from resourceVersion 0
// is served the views it derived as they were: no replica's views move
// without the log, so the replicas stay alike. When etcd returns, each is ready again, the change made meanwhile
// reaches every replica's views, and a client resumes on either from a
// resourceVersion listed before the outage.
func TestGridviewEtcdUnavailable(t *testing.T) {
	ctx := context.Background()
	s := newSite(t)
	grids := gridview.TopologyV1alpha1().ServiceGrids(s.NS)
	if _, err := grids.Create(ctx, framework.NewServiceGrid("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitServiceGridReady(t, gridview, s.NS, "before", 10*time.Second)
	localcluster.Eventually(t, 10*time.Second, "a1's view of grid", func(ctx context.Context) error {
		return expectAddresses(ctx, s, "a1", "10.1.0.1", "10.1.0.2")
	})
	for _, r := range runningReplicas() {
		localcluster.Eventually(t, 10*time.Second, r.Name+" ready", readyzOf(r))
	}
	beforeRV, beforeViews := s.convergedViews(t, 20*time.Second)

	if err := cluster.StopGridviewEtcd(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
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

	t.Run("replicas not ready within 10 s", func(t *testing.T) {
		// Each replica asked on its own: a /readyz answer with etcd down
		// takes its etcd checks' timeouts.
		var wg sync.WaitGroup
		for _, r := range runningReplicas() {
			wg.Go(func() {
				for {
					err := readyz(ctx, r)
					at := time.Since(stopped).Round(100 * time.Millisecond)
					if err != nil {
						t.Logf("%s after gridview-etcd stopped: %v", at, err)
						if at > 10*time.Second {
							t.Errorf("%s not ready only %s after gridview-etcd stopped, want 10 s at most", r.Name, at)
						}
						return
					}
					if at > 10*time.Second {
						t.Errorf("%s still ready %s after gridview-etcd stopped", r.Name, at)
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			})
		}
		wg.Wait()
	})

	t.Run("writes fail fast with a 503 naming etcd", func(t *testing.T) {
		writeCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		start := time.Now()
		_, err := grids.Create(writeCtx, framework.NewServiceGrid("during"), metav1.CreateOptions{})
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

	t.Run("NodeEndpoints served as they were, not as current", func(t *testing.T) {
		// A change no replica's views take while the log cannot be written.
		if err := s.relabel(ctx, kubeClient, "a2", "b"); err != nil {
			t.Fatal(err)
		}
		// Observed for a while: what must not happen cannot be waited for.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			for _, r := range runningReplicas() {
				list, err := directClient(t, r).TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
				if err != nil {
					t.Fatalf("a list from resourceVersion 0 on %s: %v", r.Name, err)
				}
				views := map[string]string{}
				for i := range list.Items {
					views[list.Items[i].Name] = content(&list.Items[i])
				}
				if !maps.Equal(views, beforeViews) {
					t.Fatalf("%s lists at resourceVersion %s %v with its etcd down, before it at %s %v: views moved without the log",
						r.Name, list.ResourceVersion, views, beforeRV, beforeViews)
				}
			}
		}
		// A list that must be current, as a list without a resourceVersion
		// is, is refused: the replica cannot know how far the log went.
		for _, r := range runningReplicas() {
			start := time.Now()
			_, err := directClient(t, r).TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{})
			if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "etcd") {
				t.Errorf("a current list on %s with its etcd down: %v, want 503 naming etcd", r.Name, err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("a current list on %s with its etcd down took %s to be refused", r.Name, took.Round(time.Millisecond))
			}
		}
	})

	restart()
	restartedAt := time.Now()
	t.Run("recovers", func(t *testing.T) {
		for _, r := range runningReplicas() {
			localcluster.Eventually(t, 60*time.Second, r.Name+" ready", readyzOf(r))
			t.Logf("%s ready %s after gridview-etcd returned", r.Name, time.Since(restartedAt).Round(100*time.Millisecond))
		}
		localcluster.Eventually(t, 60*time.Second, "a ServiceGrid write after etcd returned", func(ctx context.Context) error {
			_, err := grids.Create(ctx, framework.NewServiceGrid("after"), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
		framework.WaitServiceGridReady(t, gridview, s.NS, "after", 30*time.Second)
		localcluster.Eventually(t, 5*time.Second, "the ServiceGrid written before the outage", func(ctx context.Context) error {
			_, err := grids.Get(ctx, "before", metav1.GetOptions{})
			return err
		})
		// The change made during the outage reaches every replica's views
		// once a replica is elected and writes the log again, and a watch
		// from before the outage resumes on either.
		for _, r := range runningReplicas() {
			localcluster.Eventually(t, 60*time.Second, r.Name+" serving a1's view after a2 left unit a", func(ctx context.Context) error {
				got, err := s.gridAddresses(ctx, directClient(t, r), "a1")
				if err == nil && !slices.Equal(got, []string{"10.1.0.1"}) {
					err = fmt.Errorf("%v", got)
				}
				return err
			})
			t.Logf("%s serving a1's view after a2 left unit a %s after gridview-etcd returned", r.Name, time.Since(restartedAt).Round(100*time.Millisecond))
			seen, err := watchFrom(ctx, directClient(t, r).TopologyV1alpha1().NodeEndpoints(s.NS), s.Node("a1"), beforeRV, s.gridViewIs("a1", "10.1.0.1"))
			if err != nil {
				t.Errorf("a watch on %s from resourceVersion %s, listed before the outage: %v", r.Name, beforeRV, err)
			} else if len(seen) != 1 {
				t.Errorf("a watch on %s from resourceVersion %s, listed before the outage, sent %q: want the one change since", r.Name, beforeRV, seen)
			}
		}
		s.converged(t, 20*time.Second)
	})
}

// readyzOf is a check that r is ready.
func readyzOf(r *localcluster.GridviewReplica) func(context.Context) error {
	return func(ctx context.Context) error { return readyz(ctx, r) }
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
