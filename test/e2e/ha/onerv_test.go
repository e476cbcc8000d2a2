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
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// An informer following its node through the aggregator, which picks a
// replica per request, lists once and never again through churn and
// watches that time out: every replica derives its views from gridview's
// input log in etcd and numbers each change by the etcd revision that
// wrote its input, so a resourceVersion one replica issued means the same
// on the other, and a re-watch resumes where the last ended whichever
// replica serves it. Both replicas serve watches; the informer ends equal to
// a fresh list, and both replicas end at the same revision of the log with
// the same views.
func TestInformersFollowTheirNodeAcrossReplicas(t *testing.T) {
	churn := haDuration(t, "GRIDVIEW_HA_CHURN", 20*time.Second)
	watchTimeout := haDuration(t, "GRIDVIEW_HA_WATCH_TIMEOUT", 3*time.Second)
	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := newSite(t)
			s.converged(t, 20*time.Second)
			views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
			servedBefore := watchesServed(ctx, t)
			f := followNode(ctx, t, views, s.Node("a1"), watchList, watchTimeout)

			changes, churned := s.churnOnEveryReplica(ctx, t, churn, servedBefore)

			f.listedOnce(t, "after the churn")
			f.equalsList(t, views)
			s.converged(t, 20*time.Second)
			served := servedSince(ctx, t, servedBefore)
			t.Logf("%d changes in %s, watches timing out after %s: %d watches (ended, by replica: %v); %s",
				changes, churned.Round(time.Second), watchTimeout, f.watchesStarted(), served, f.summary())
			if f.watchesStarted() < 3 {
				t.Errorf("%d watches started: the informer hardly re-watched, the test proves little", f.watchesStarted())
			}
			expectEveryReplicaServed(t, served)
			f.listedOnce(t, "at the end")
		})
	}
}

// churnOnEveryReplica churns for d, and on while a running replica served
// no watch of NodeEndpoints since before, in steps of d/4 until 4d have
// passed: the aggregator picks a replica per request, so a few re-watches
// may all have gone to one, and the test would prove little. It returns the
// changes made and how long it churned.
func (s site) churnOnEveryReplica(ctx context.Context, t *testing.T, d time.Duration, before map[string]float64) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	changes := s.churn(ctx, t, 0, d)
	for !everyReplicaServed(ctx, t, before) && time.Since(start) < 4*d {
		changes = s.churn(ctx, t, changes, d/4)
	}
	return changes, time.Since(start)
}

// expectEveryReplicaServed fails the test unless every running replica
// served a watch (served is by replica).
func expectEveryReplicaServed(t *testing.T, served map[string]float64) {
	t.Helper()
	for _, r := range runningReplicas() {
		if served[r.Name] == 0 {
			t.Errorf("%s served no watch of NodeEndpoints (by replica: %v): the test proves little", r.Name, served)
		}
	}
}

// churn changes the site until d has passed and returns how many changes
// were made, counting from made: a2 moves between the units (a1's view of
// grid changes), grid's slice changes, and grid's labels.
func (s site) churn(ctx context.Context, t *testing.T, made int, d time.Duration) int {
	t.Helper()
	changes := made
	for start := time.Now(); time.Since(start) < d; changes++ {
		switch changes % 3 {
		case 0:
			if err := s.relabel(ctx, kubeClient, "a2", []string{"b", "a"}[changes/3%2]); err != nil {
				t.Fatal(err)
			}
		case 1:
			s.writeSlice(t, map[string]string{"10.1.0.1": "a1", fmt.Sprintf("10.1.%d.2", changes%250): "a2", "10.1.0.3": "b1"})
		default:
			patch := fmt.Sprintf(`{"metadata":{"labels":{"round":"%d"}}}`, changes)
			if _, err := kubeClient.CoreV1().Services(s.NS).Patch(ctx, "grid", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return changes
}
