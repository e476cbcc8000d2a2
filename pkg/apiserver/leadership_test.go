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
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// A replica knows the leader, and may be ready, only once its elector has
// read the Lease: the first replica holds it, the second sends its reads
// there. Before, each would serve reads the leader should answer.
func TestAReplicaKnowsTheLeaderOnceItReadTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kube := fake.NewClientset()
		// Reads of the Lease wait while held is set, holding the fake's
		// lock: only one replica may read meanwhile. They are refused while
		// denied is set.
		var held atomic.Pointer[chan struct{}]
		var denied atomic.Bool
		kube.PrependReactor("get", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
			if denied.Load() {
				return true, nil, apierrors.NewForbidden(action.GetResource().GroupResource(), serviceGridComponentName, errors.New("denied by the test"))
			}
			if release := held.Load(); release != nil {
				<-*release
			}
			return false, nil, nil
		})
		campaigns := newCampaigns(t, kube)
		run := func(l *leadership) {
			campaigns.run(campaigns.ctx, l, func() {})
			synctest.Wait()
		}
		first, second := newLeadership("10.0.0.1:443"), newLeadership("10.0.0.2:443")
		if first.leaderSettled() {
			t.Fatal("a replica that has not read the Lease knows the leader")
		}
		run(first)
		if !first.leaderSettled() || !first.isLeader() {
			t.Fatalf("the only replica: leader known %v, leads %v; want both", first.leaderSettled(), first.isLeader())
		}
		if second.leaderSettled() {
			t.Fatal("the second replica knows the leader before it read the Lease")
		}
		release := make(chan struct{})
		held.Store(&release)
		run(second)
		if second.leaderSettled() {
			t.Error("the second replica knows the leader while its elector waits for the Lease")
		}
		held.Store(nil)
		close(release)
		synctest.Wait()
		if address, ok := second.leaderAddress(); !second.leaderSettled() || !ok || address != "10.0.0.1:443" {
			t.Errorf("the second replica: leader known %v, reads sent to %q (%v); want 10.0.0.1:443", second.leaderSettled(), address, ok)
		}

		// A replica that may not read the Lease is ready after
		// leaderUnknownLimit, serving reads itself, rather than never.
		denied.Store(true)
		third := newLeadership("10.0.0.3:443")
		run(third)
		time.Sleep(leaderUnknownLimit - time.Millisecond)
		if third.leaderSettled() {
			t.Errorf("a replica that has not read the Lease is ready before %s", leaderUnknownLimit)
		}
		time.Sleep(time.Millisecond)
		if !third.leaderSettled() {
			t.Errorf("a replica that may not read the Lease is not ready after %s", leaderUnknownLimit)
		}
		denied.Store(false)
	})
}

// campaigns are replicas' campaigns on one kube, which end with the test:
// it waits until each returned.
type campaigns struct {
	ctx  context.Context
	kube kubernetes.Interface
	done []<-chan struct{}
}

func newCampaigns(t *testing.T, kube kubernetes.Interface) *campaigns {
	ctx, cancel := context.WithCancel(t.Context())
	c := &campaigns{ctx: ctx, kube: kube}
	t.Cleanup(func() {
		cancel()
		for _, done := range c.done {
			<-done
		}
	})
	return c
}

// run campaigns for l until ctx, c.ctx or one derived from it, ends.
func (c *campaigns) run(ctx context.Context, l *leadership, led func()) {
	c.done = append(c.done, runCampaign(ctx, c.kube, l, led))
}

// runCampaign campaigns for l on kube in gridview-system until ctx ends,
// calling led each time the replica starts leading; the channel is closed
// once the campaign has returned.
func runCampaign(ctx context.Context, kube kubernetes.Interface, l *leadership, led func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		campaign(ctx, kube, "gridview-system", l, func(ctx context.Context) {
			led()
			<-ctx.Done()
		})
	}()
	return done
}

// refusedReads checks which reads of NodeEndpoints the server's reads
// filter refuses: a forwarded one and a client's, by name.
func refusedReads(t *testing.T, reads *leaderReads, want map[string]bool) {
	t.Helper()
	for name, forwardedBy := range map[string]string{"a forwarded read": "follower@10.0.0.2:443", "a client's read": ""} {
		req := httptest.NewRequest(http.MethodGet, "/apis/topology.gridview.io/v1alpha1/nodeendpoints", nil)
		if forwardedBy != "" {
			req.Header.Set(forwardedByHeader, forwardedBy)
		}
		rec := httptest.NewRecorder()
		withRequestInfo(t, reads.wrap(&servedBy{name: "restarted"})).ServeHTTP(rec, req)
		if refused := rec.Code == http.StatusServiceUnavailable; refused != want[name] {
			t.Errorf("%s on the replica restarted in place: %d %q, want refused %v", name, rec.Code, rec.Body.String(), want[name])
		}
	}
}

// A replica restarted in place (same address, new process) while the Lease
// still names the process before it knows that predecessor for what it is:
// not a leader to send reads to, and a reason to wait, until the Lease
// expires or moves; another replica sends its reads to that address.
func TestAReplicaRestartedInPlaceKnowsItsPredecessor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kube := fake.NewClientset()
		campaigns := newCampaigns(t, kube)
		predecessor := newLeadership("10.0.0.1:443")
		predecessorCtx, crash := context.WithCancel(campaigns.ctx)
		campaigns.run(predecessorCtx, predecessor, func() {})
		synctest.Wait()
		if !predecessor.isLeader() {
			t.Fatal("the only replica does not lead")
		}
		// Killed: a dead process releases nothing.
		kube.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
			if lease := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease); ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
				return true, nil, errors.New("the process was killed before it released the Lease")
			}
			return false, nil, nil
		})
		crash()
		synctest.Wait()

		restarted, other := newLeadership("10.0.0.1:443"), newLeadership("10.0.0.2:443")
		// Loaded, before it campaigns, a replica cannot tell whether it leads.
		if err := newLeadership("10.0.0.3:443").refusesPeers(); !errors.Is(err, errLeaseUnread) {
			t.Errorf("a replica that has not read the Lease: refusesPeers = %v, want %v", err, errLeaseUnread)
		}
		campaigns.run(campaigns.ctx, restarted, func() {})
		campaigns.run(campaigns.ctx, other, func() {})
		synctest.Wait()
		if !restarted.predecessorLeads() {
			t.Error("the replica restarted in place does not see its predecessor in the Lease")
		}
		if address, ok := restarted.leaderAddress(); ok {
			t.Errorf("the replica restarted in place sends its reads to %s, its own address", address)
		}
		// Alone, as a single replica after a crash, it is ready at once. It
		// refuses forwarded reads, but their header proves no other
		// replica; once another replica asked it for its inputs, which
		// only gridview may, it is not ready, so that reads go there.
		if err := restarted.waitsForPredecessor(); err != nil {
			t.Errorf("the replica restarted in place, asked by none, is not ready: %v", err)
		}
		if restarted.refusesPeers() == nil {
			t.Error("the replica restarted in place serves another replica's forwarded reads")
		}
		if err := restarted.waitsForPredecessor(); err != nil {
			t.Errorf("a forwarded read, whose header anyone may set, made the replica restarted in place unready: %v", err)
		}
		reads := newLeaderReads(restarted)
		refusedReads(t, reads, map[string]bool{"a forwarded read": true, "a client's read": false})
		if restarted.refusesFollower() == nil {
			t.Error("the replica restarted in place serves another replica")
		}
		if err := restarted.waitsForPredecessor(); err == nil {
			t.Error("the replica restarted in place is ready after another replica asked for its inputs")
		}
		refusedReads(t, reads, map[string]bool{"a forwarded read": true, "a client's read": true})
		if other.predecessorLeads() || other.refusesFollower() != nil {
			t.Error("the other replica takes the Lease's holder for a predecessor of its own")
		}
		if address, ok := other.leaderAddress(); !ok || address != "10.0.0.1:443" {
			t.Errorf("the other replica sends its reads to %q (%v), want 10.0.0.1:443", address, ok)
		}
		// Once the Lease expires the other replica takes it (15-19.4 s;
		// the restarted one, asked, yields it until 30 s at least), and
		// the restarted one, which reads it by 23.8 s, waits no longer.
		time.Sleep(25 * time.Second)
		synctest.Wait()
		if restarted.predecessorLeads() || restarted.refusesPeers() != nil || restarted.waitsForPredecessor() != nil {
			t.Error("the replica restarted in place still waits after the Lease moved")
		}
		if restarted.isLeader() || !other.isLeader() {
			t.Errorf("after the Lease expired: the restarted replica leads %v, the other %v; want the other", restarted.isLeader(), other.isLeader())
		}
	})
}
