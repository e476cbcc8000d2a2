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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A leader killed and restarted in place (an OOM kill: the same Pod and
// address, a new process) before its Lease expired leaves the history to the
// replica that followed it: that replica does not load the new process's
// views, numbered afresh, but keeps its own, takes the Lease, and a client's
// resourceVersion from before the crash resumes there without 410; the
// restarted process then follows it. Before, the follower reloaded from the
// restarted process and every client relisted.
func TestALeaderRestartedInPlaceLeavesTheHistoryToItsFollower(t *testing.T) {
	ctx := context.Background()
	s := newSite(t)
	leader := settledLeader(t).replica
	follower := runningReplicaBut(t, leader)
	expectRoles(t, leader, follower)
	s.caughtUp(t, leader, follower)
	followerViews := ownViewsClient(t, follower).TopologyV1alpha1().NodeEndpoints(s.ns)
	before, err := followerViews.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.node("a1")})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() {
		// Later tests expect two replicas.
		if !leader.Running() {
			if err := leader.Start(context.Background()); err != nil {
				t.Errorf("starting %s again: %v", leader.Name, err)
			}
		}
	})
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	// Ready only once the Lease moved: the follower asked it for its inputs.
	if err := leader.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s killed and started again in place, ready after %s", leader.Name, time.Since(killed).Round(100*time.Millisecond))
	if err := s.relabel(ctx, kubeClient, "a2", "b"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, follower.Name+" leading, "+leader.Name+" (restarted) following it", func(ctx context.Context) error {
		return roles(ctx, role{follower, 1, 0}, role{leader, 0, 1})
	})
	if err := resumeWatch(ctx, followerViews, s.node("a1"), before.ResourceVersion); err != nil {
		t.Errorf("a watch from resourceVersion %s, listed before the crash, on %s, which leads now: %v", before.ResourceVersion, follower.Name, err)
	}
}
