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
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/test/localcluster"
)

const (
	leaseNamespace = "gridview-system"
	leaseName      = "gridview-servicegrid-controller"
	// failoverBudget is what the issue allows the survivor: the Lease
	// (15 s) must expire before it may take over.
	failoverBudget = 30 * time.Second
)

// Two replicas on one etcd behind one APIService: ServiceGrid writes on
// either, exactly one controller leader, failover within 30 s when the
// leader is killed, and the same NodeEndpoints from both.
func TestTwoReplicas(t *testing.T) {
	ctx := context.Background()
	s := newSite(t)
	direct := []versioned.Interface{directClient(t, replicas[0]), directClient(t, replicas[1])}

	t.Run("ServiceGrid writes on either replica", func(t *testing.T) {
		writers := map[string]versioned.Interface{"via-0": direct[0], "via-1": direct[1], "via-aggregator": gridview}
		for name, client := range writers {
			if _, err := client.TopologyV1alpha1().ServiceGrids(s.ns).Create(ctx, newServiceGrid(name), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
		}
		for name := range writers {
			waitReady(t, s.ns, name, 10*time.Second)
			a, errA := direct[0].TopologyV1alpha1().ServiceGrids(s.ns).Get(ctx, name, metav1.GetOptions{})
			b, errB := direct[1].TopologyV1alpha1().ServiceGrids(s.ns).Get(ctx, name, metav1.GetOptions{})
			if err := errors.Join(errA, errB); err != nil {
				t.Fatalf("get %s from both replicas: %v", name, err)
			}
			// One etcd: the same object, resourceVersion included.
			if a.UID != b.UID || a.ResourceVersion != b.ResourceVersion {
				t.Errorf("%s: replica 0 has uid %s rv %s, replica 1 uid %s rv %s", name, a.UID, a.ResourceVersion, b.UID, b.ResourceVersion)
			}
		}
	})

	t.Run("NodeEndpoints consistent from both replicas", func(t *testing.T) {
		if err := s.relabel(ctx, kubeClient, "b1", "a"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the same views from both replicas", func(ctx context.Context) error {
			a, errA := viewsIn(ctx, direct[0], s.ns)
			b, errB := viewsIn(ctx, direct[1], s.ns)
			if err := errors.Join(errA, errB); err != nil {
				return err
			}
			// b1 joined unit a: it now sees every endpoint of grid.
			if got := a[s.gridView("b1")]; !strings.HasSuffix(got, "[10.1.0.1 10.1.0.2 10.1.0.3]") {
				return fmt.Errorf("replica 0 has b1's view of grid as %q", got)
			}
			if !maps.Equal(a, b) {
				return fmt.Errorf("replica 0 %v\nreplica 1 %v", a, b)
			}
			return nil
		})
	})

	var leader *localcluster.GridviewReplica
	t.Run("exactly one controller leader", func(t *testing.T) {
		eventually(t, 30*time.Second, "one leader", func(context.Context) error {
			leaders, err := leading()
			if err == nil && len(leaders) != 1 {
				err = fmt.Errorf("%d replicas lead", len(leaders))
			}
			if err == nil {
				leader = leaders[0]
			}
			return err
		})
		// And it stays one: the other keeps campaigning without winning.
		time.Sleep(3 * time.Second)
		if leaders, err := leading(); err != nil || len(leaders) != 1 || leaders[0] != leader {
			t.Fatalf("leaders %v (%v), want only %s", names(leaders), err, leader.Name)
		}
		t.Logf("%s leads", leader.Name)
	})
	if leader == nil {
		t.FailNow()
	}

	t.Run("the survivor takes over when the leader is killed", func(t *testing.T) {
		before, err := kubeClient.CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
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
		if err := kubeClient.CoreV1().Services(s.ns).Delete(ctx, "via-0-svc", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := kubeClient.CoreV1().Services(s.ns).Delete(ctx, "via-1-svc", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, failoverBudget, "the deleted Services recreated by the survivor", func(ctx context.Context) error {
			for _, name := range []string{"via-0-svc", "via-1-svc"} {
				if _, err := kubeClient.CoreV1().Services(s.ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
					return err
				}
			}
			return nil
		})
		t.Logf("the survivor repaired the drift %s after the leader was killed", time.Since(killed).Round(100*time.Millisecond))
		// A ServiceGrid change through the aggregator, now served by the
		// survivor, reaches its Service too.
		patch := []byte(`{"metadata":{"labels":{"tier":"edited"}}}`)
		if _, err := gridview.TopologyV1alpha1().ServiceGrids(s.ns).Patch(ctx, "via-aggregator", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the ServiceGrid's new label on its Service", func(ctx context.Context) error {
			svc, err := kubeClient.CoreV1().Services(s.ns).Get(ctx, "via-aggregator-svc", metav1.GetOptions{})
			if err == nil && svc.Labels["tier"] != "edited" {
				err = fmt.Errorf("labels %v", svc.Labels)
			}
			return err
		})
		after, err := kubeClient.CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *after.Spec.HolderIdentity == *before.Spec.HolderIdentity {
			t.Errorf("Lease still held by %s, the killed leader", *before.Spec.HolderIdentity)
		}
		if leaders, err := leading(); err != nil || len(leaders) != 1 || leaders[0] == leader {
			t.Errorf("leaders %v (%v), want the survivor only", names(leaders), err)
		}
	})
}

// leading returns the running replicas whose current process says it leads
// the ServiceGrid controller: both replicas have the same hostname, so the
// Lease's holder identity does not tell them apart, but their logs do.
func leading() ([]*localcluster.GridviewReplica, error) {
	var out []*localcluster.GridviewReplica
	for _, r := range cluster.GridviewReplicas() {
		if !r.Running() {
			continue
		}
		data, err := os.ReadFile(r.LogFile)
		if err != nil {
			return nil, err
		}
		log := string(data)
		// The harness appends one "=== <time> starting" line per start.
		if i := strings.LastIndex(log, "=== "); i >= 0 {
			log = log[i:]
		}
		if strings.Count(log, startedLeading) > strings.Count(log, stoppedLeading) {
			out = append(out, r)
		}
	}
	return out, nil
}

// What a replica logs when it starts and stops leading.
const (
	startedLeading = "Leading: reconciling every ServiceGrid"
	stoppedLeading = "Stopped leading the ServiceGrid controller"
)

// leadershipChanges counts the times a replica started or stopped leading,
// over every start of every replica. A replica that stops also logs that it
// stopped leading, whether it led or not.
func leadershipChanges() (int, error) {
	started, stopped, err := leadershipLines()
	changes := 0
	for name := range started {
		changes += started[name] + stopped[name]
	}
	return changes, err
}

// startsOfLeading counts, for each replica, the times it started leading
// over all its starts.
func startsOfLeading(t *testing.T) map[string]int {
	t.Helper()
	started, _, err := leadershipLines()
	if err != nil {
		t.Fatal(err)
	}
	return started
}

// leadershipLines counts each replica's log lines that say it started and
// stopped leading.
func leadershipLines() (started, stopped map[string]int, err error) {
	started, stopped = map[string]int{}, map[string]int{}
	for _, r := range cluster.GridviewReplicas() {
		data, err := os.ReadFile(r.LogFile)
		if err != nil {
			return nil, nil, err
		}
		started[r.Name] = strings.Count(string(data), startedLeading)
		stopped[r.Name] = strings.Count(string(data), stoppedLeading)
	}
	return started, stopped, nil
}

func names(replicas []*localcluster.GridviewReplica) []string {
	var out []string
	for _, r := range replicas {
		out = append(out, r.Name)
	}
	return out
}
