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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// failoverBudget is what the issue allows the survivor: a killed leader's
// etcd session (10 s) must expire before another replica is elected.
const failoverBudget = 30 * time.Second

// Two replicas on one etcd behind one APIService: ServiceGrid writes on
// either; each serves the same NodeEndpoints at the same resourceVersion,
// derived from gridview's input log alone, and a client lists, pages and
// watches on one and resumes on the other; exactly one leader, and
// failover within 30 s when the leader is killed.
func TestTwoReplicas(t *testing.T) {
	ctx := context.Background()
	s := newSite(t)
	direct := []versioned.Interface{directClient(t, replicas[0]), directClient(t, replicas[1])}

	t.Run("ServiceGrid writes on either replica", func(t *testing.T) {
		writers := map[string]versioned.Interface{"via-0": direct[0], "via-1": direct[1], "via-aggregator": gridview}
		for name, client := range writers {
			if _, err := client.TopologyV1alpha1().ServiceGrids(s.NS).Create(ctx, framework.NewServiceGrid(name), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
		}
		for name := range writers {
			framework.WaitServiceGridReady(t, gridview, s.NS, name, 10*time.Second)
			a, errA := direct[0].TopologyV1alpha1().ServiceGrids(s.NS).Get(ctx, name, metav1.GetOptions{})
			b, errB := direct[1].TopologyV1alpha1().ServiceGrids(s.NS).Get(ctx, name, metav1.GetOptions{})
			if err := errors.Join(errA, errB); err != nil {
				t.Fatalf("get %s from both replicas: %v", name, err)
			}
			// One etcd: the same object, resourceVersion included.
			if a.UID != b.UID || a.ResourceVersion != b.ResourceVersion {
				t.Errorf("%s: replica 0 has uid %s rv %s, replica 1 uid %s rv %s", name, a.UID, a.ResourceVersion, b.UID, b.ResourceVersion)
			}
		}
	})

	t.Run("NodeEndpoints the same from both replicas at the same resourceVersion", func(t *testing.T) {
		if err := s.relabel(ctx, kubeClient, "b1", "a"); err != nil {
			t.Fatal(err)
		}
		localcluster.Eventually(t, 10*time.Second, "b1's view of grid on both replicas", func(ctx context.Context) error {
			for i, client := range direct {
				views, err := viewsIn(ctx, client, s.NS)
				if err != nil {
					return err
				}
				// b1 joined unit a: it now sees every endpoint of grid.
				if got := views[s.gridView("b1")]; !strings.HasSuffix(got, "[10.1.0.1 10.1.0.2 10.1.0.3]") {
					return fmt.Errorf("%s has b1's view of grid as %q", replicas[i].Name, got)
				}
			}
			return nil
		})
		rv := s.converged(t, 10*time.Second)
		// An exact list of that state on either replica.
		for i, client := range direct {
			list, err := client.TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{
				ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			if err != nil {
				t.Errorf("an exact list at resourceVersion %s on %s: %v", rv, replicas[i].Name, err)
			} else if list.ResourceVersion != rv {
				t.Errorf("an exact list at resourceVersion %s on %s answered at %s", rv, replicas[i].Name, list.ResourceVersion)
			}
		}
	})

	t.Run("a list on one replica resumes on the other", func(t *testing.T) {
		// a2 leaves unit a and comes back: a1's view of grid changes each
		// time. The list on one replica, the watch on the other.
		for i, step := range []struct {
			unit string
			want []string
		}{
			{unit: "b", want: []string{"10.1.0.1", "10.1.0.3"}},
			{unit: "a", want: []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"}},
		} {
			from, to := replicas[i%2], replicas[(i+1)%2]
			list, err := direct[i%2].TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1")})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.relabel(ctx, kubeClient, "a2", step.unit); err != nil {
				t.Fatal(err)
			}
			seen, err := watchFrom(ctx, direct[(i+1)%2].TopologyV1alpha1().NodeEndpoints(s.NS), s.Node("a1"), list.ResourceVersion, s.gridViewIs("a1", step.want...))
			if err != nil {
				t.Errorf("a watch on %s from resourceVersion %s, listed on %s, waiting for a1's view of grid %v after a2 moved to unit %s: %v",
					to.Name, list.ResourceVersion, from.Name, step.want, step.unit, err)
			} else if len(seen) != 1 {
				t.Errorf("a watch on %s from resourceVersion %s, listed on %s, sent %q: want the one change since", to.Name, list.ResourceVersion, from.Name, seen)
			}
		}
	})

	t.Run("a paged list continues on the other replica", func(t *testing.T) {
		// Its pages alternate between the replicas, at the first page's
		// resourceVersion, and hold what either lists whole there.
		localcluster.Eventually(t, 20*time.Second, "a paged list across the replicas", func(ctx context.Context) error {
			rv, want, err := sameViews(ctx, t, s.NS)
			if err != nil {
				return err
			}
			got := map[string]string{}
			opts := metav1.ListOptions{Limit: 1}
			for page := 0; ; page++ {
				if page > len(want) {
					return fmt.Errorf("more pages than the %d views", len(want))
				}
				r := replicas[page%2]
				list, err := direct[page%2].TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, opts)
				if err != nil {
					return fmt.Errorf("page %d on %s: %w", page+1, r.Name, err)
				}
				if list.ResourceVersion != rv {
					return fmt.Errorf("page %d on %s at resourceVersion %s, the whole lists at %s", page+1, r.Name, list.ResourceVersion, rv)
				}
				for i := range list.Items {
					got[list.Items[i].Name] = content(&list.Items[i])
				}
				if list.Continue == "" {
					break
				}
				opts.Continue = list.Continue
			}
			if !maps.Equal(got, want) {
				return fmt.Errorf("pages across the replicas %v\nwhole list %v", got, want)
			}
			return nil
		})
	})

	var leader *localcluster.GridviewReplica
	t.Run("exactly one leader", func(t *testing.T) {
		leader = awaitLeader(t, 30*time.Second)
		// And it stays one: the other keeps campaigning without winning.
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if leading, err := leaders(ctx); err != nil || len(leading) != 1 || leading[0] != leader {
				t.Fatalf("leaders %v (%v), want only %s", names(leading), err, leader.Name)
			}
		}
		t.Logf("%s leads", leader.Name)
	})
	if leader == nil {
		t.FailNow()
	}

	t.Run("the survivor takes over when the leader is killed", func(t *testing.T) {
		survivor := runningReplicaBut(t, leader)
		t.Cleanup(func() {
			// Later tests expect two replicas.
			if err := leader.Start(context.Background()); err != nil {
				t.Errorf("starting %s again: %v", leader.Name, err)
			}
		})
		if err := leader.Kill(); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		// Drift only the leader repairs: a write-free change that the
		// survivor learns of through its informers alone.
		if err := kubeClient.CoreV1().Services(s.NS).Delete(ctx, "via-0-svc", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := kubeClient.CoreV1().Services(s.NS).Delete(ctx, "via-1-svc", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		localcluster.Eventually(t, failoverBudget, "the deleted Services recreated by the survivor", func(ctx context.Context) error {
			for _, name := range []string{"via-0-svc", "via-1-svc"} {
				if _, err := kubeClient.CoreV1().Services(s.NS).Get(ctx, name, metav1.GetOptions{}); err != nil {
					return err
				}
			}
			return nil
		})
		t.Logf("the survivor repaired the drift %s after the leader was killed", time.Since(killed).Round(100*time.Millisecond))
		if leading, err := leaders(ctx); err != nil || len(leading) != 1 || leading[0] != survivor {
			t.Errorf("leaders %v (%v), want %s, the survivor, only", names(leading), err, survivor.Name)
		}
		// A ServiceGrid change through the aggregator, now served by the
		// survivor, reaches its Service too.
		patch := []byte(`{"metadata":{"labels":{"tier":"edited"}}}`)
		if _, err := gridview.TopologyV1alpha1().ServiceGrids(s.NS).Patch(ctx, "via-aggregator", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		localcluster.Eventually(t, 10*time.Second, "the ServiceGrid's new label on its Service", func(ctx context.Context) error {
			svc, err := kubeClient.CoreV1().Services(s.NS).Get(ctx, "via-aggregator-svc", metav1.GetOptions{})
			if err == nil && svc.Labels["tier"] != "edited" {
				err = fmt.Errorf("labels %v", svc.Labels)
			}
			return err
		})
		// And the survivor, elected, writes the input log: a1's view
		// follows a2 out of unit a.
		if err := s.relabel(ctx, kubeClient, "a2", "b"); err != nil {
			t.Fatal(err)
		}
		localcluster.Eventually(t, 10*time.Second, "a1's view of grid after a2 left unit a, through the aggregator", func(ctx context.Context) error {
			return expectAddresses(ctx, s, "a1", "10.1.0.1", "10.1.0.3")
		})
	})
}
