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
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
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
		ctx, cancel := context.WithCancel(t.Context())
		var campaigns []<-chan struct{}
		defer func() {
			cancel()
			for _, done := range campaigns {
				<-done
			}
		}()
		run := func(l *leadership) {
			campaigns = append(campaigns, runCampaign(ctx, kube, l, func() {}))
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
