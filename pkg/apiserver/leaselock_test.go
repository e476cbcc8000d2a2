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
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// A replica that could not read the Lease for a while, kube-apiserver being
// down, leaves its holder a whole Lease duration (15 s) to renew from its
// first read after, once per record the holder wrote; a holder that is gone
// loses the Lease as before. The replica reads the Lease every 2 to 4.4 s.
func TestAReplicaLeavesTheHolderTimeToRenewAfterAnOutage(t *testing.T) {
	const (
		namespace = "gridview-system"
		holder    = "old-leader@10.0.0.9:443"
	)
	type span struct{ from, to time.Duration }
	for _, tc := range []struct {
		name string
		// outages are when reads of the Lease fail.
		outages []span
		// renewals are when the holder renews the Lease; releasedAt is when
		// it gives it up.
		renewals   []time.Duration
		releasedAt time.Duration
		// notLeadingAt is when the replica must not lead yet, leadingBy when
		// it must.
		notLeadingAt, leadingBy time.Duration
	}{{
		name:         "the holder is gone, every read succeeds",
		notLeadingAt: 14900 * time.Millisecond, leadingBy: 20 * time.Second,
	}, {
		// Without the grace the replica would take the Lease at its first
		// read after 18 s.
		name:    "the holder is gone, kube-apiserver is down from 1 s to 18 s",
		outages: []span{{time.Second, 18 * time.Second}},
		// The first read after the outage is at 18-22.4 s.
		notLeadingAt: 32900 * time.Millisecond, leadingBy: 42 * time.Second,
	}, {
		name:    "a second outage during the grace does not extend it",
		outages: []span{{time.Second, 18 * time.Second}, {24 * time.Second, 28 * time.Second}},
		// Granted again after the second outage, the Lease would be taken
		// at 43 s at the earliest.
		notLeadingAt: 32900 * time.Millisecond, leadingBy: 42 * time.Second,
	}, {
		name:     "the holder renews during the grace, then is gone",
		outages:  []span{{time.Second, 18 * time.Second}},
		renewals: []time.Duration{30 * time.Second},
		// The renewal is read at 30-34.4 s.
		notLeadingAt: 44900 * time.Millisecond, leadingBy: 54 * time.Second,
	}, {
		name:         "the holder released the Lease during the outage",
		outages:      []span{{time.Second, 18 * time.Second}},
		releasedAt:   5 * time.Second,
		notLeadingAt: 17900 * time.Millisecond, leadingBy: 23 * time.Second,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				kube := fake.NewClientset(&coordinationv1.Lease{
					ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: serviceGridComponentName},
					Spec:       leaseSpec(holder, start),
				})
				var down atomic.Bool
				kube.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
					if down.Load() {
						return true, nil, errors.New("connection refused: kube-apiserver is down in the test")
					}
					return false, nil, nil
				})
				// The holder writes through the tracker: the outage is this
				// replica's.
				leases := coordinationv1.SchemeGroupVersion.WithResource("leases")
				writeLease := func(spec coordinationv1.LeaseSpec) {
					obj, err := kube.Tracker().Get(leases, namespace, serviceGridComponentName)
					if err == nil {
						lease := obj.(*coordinationv1.Lease).DeepCopy()
						lease.Spec = spec
						err = kube.Tracker().Update(leases, lease, namespace)
					}
					if err != nil {
						t.Fatalf("write the Lease: %v", err)
					}
				}

				type step struct {
					at time.Duration
					do func()
				}
				steps := []step{
					{tc.notLeadingAt, func() {}}, // checked before every step
					{tc.leadingBy, func() {}},
				}
				for _, o := range tc.outages {
					steps = append(steps, step{o.from, func() { down.Store(true) }}, step{o.to, func() { down.Store(false) }})
				}
				for _, at := range tc.renewals {
					steps = append(steps, step{at, func() { writeLease(leaseSpec(holder, time.Now())) }})
				}
				if tc.releasedAt > 0 {
					steps = append(steps, step{tc.releasedAt, func() { writeLease(coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](1)}) }})
				}
				slices.SortStableFunc(steps, func(a, b step) int { return cmp.Compare(a.at, b.at) })

				var ledAt atomic.Int64
				ctx, cancel := context.WithCancel(t.Context())
				done := runCampaign(ctx, kube, newLeadership("10.0.0.1:443"), func() { ledAt.Store(int64(time.Since(start))) })
				defer func() { cancel(); <-done }()
				for _, s := range steps {
					time.Sleep(s.at - time.Since(start))
					synctest.Wait()
					if led := time.Duration(ledAt.Load()); led != 0 && led <= tc.notLeadingAt {
						t.Fatalf("the replica took the Lease at %s; want after %s", led, tc.notLeadingAt)
					}
					s.do()
				}
				if ledAt.Load() == 0 {
					t.Errorf("the replica does not lead at %s", tc.leadingBy)
				}
			})
		})
	}
}

func leaseSpec(holder string, renewed time.Time) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(holder),
		LeaseDurationSeconds: ptr.To[int32](15),
		AcquireTime:          &metav1.MicroTime{Time: renewed},
		RenewTime:            &metav1.MicroTime{Time: renewed},
	}
}

// The leader keeps the Lease across a kube-apiserver outage, from 1 s to
// 18 s, longer than the renew deadline: it stops leading, then takes the
// Lease back; the other replica never takes it. Without the grace each round
// is a race the other replica wins about half the time, hence several.
func TestTheLeaderKeepsTheLeaseAcrossAnOutage(t *testing.T) {
	for round := range 10 {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			kube := fake.NewClientset()
			kube.PrependReactor("*", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
				if since := time.Since(start); since >= time.Second && since < 18*time.Second {
					return true, nil, errors.New("connection refused: kube-apiserver is down in the test")
				}
				return false, nil, nil
			})
			campaigns := newCampaigns(t, kube)
			run := func(address string) *atomic.Int32 {
				var led atomic.Int32
				campaigns.run(campaigns.ctx, newLeadership(address), func() { led.Add(1) })
				synctest.Wait()
				return &led
			}
			leader := run("10.0.0.1:443")
			other := run("10.0.0.2:443")
			if leader.Load() != 1 {
				t.Fatal("the first replica does not lead")
			}
			time.Sleep(60 * time.Second)
			synctest.Wait()
			if other.Load() != 0 {
				t.Fatalf("round %d: the other replica took the Lease", round)
			}
			if leader.Load() != 2 {
				t.Fatalf("round %d: the leader started leading %d times; want twice, before and after the outage", round, leader.Load())
			}
		})
	}
}

// The leader gives the Lease up only when its campaign ends: not at the
// renew deadline (12 s here), when kube-apiserver may be back and a
// follower could take it; it takes it back at once. From 1 s kube-apiserver
// refuses the leader's writes, and either its reads right after them too or
// none, until the elector has made its read to release the Lease. The other
// replica reads the Lease all along.
func TestTheLeaderReleasesTheLeaseOnlyAsItStops(t *testing.T) {
	for _, tc := range []struct {
		name string
		// readsFail says whether a read right after a failed write fails.
		readsFail bool
	}{
		// The elector took in no read during the renewal: the Lease is
		// taken back at once, mark or not.
		{name: "reads after failed writes fail too", readsFail: true},
		// The elector read the leader's own record during the renewal, and
		// reads the same one after: it must not wait to renew.
		{name: "only writes fail", readsFail: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				leaderKube, otherKube := fake.NewClientset(), fake.NewClientset()
				otherKube.PrependReactor("*", "*", k8stesting.ObjectReaction(leaderKube.Tracker()))
				// wrote: the last request was a failed write; read: it was
				// a read right after one. A read after that is the release's
				// (its failed renewal ended with a read), or the one after
				// it: the stall is over.
				var wrote, read, over bool
				var released atomic.Int32
				leaderKube.PrependReactor("*", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
					if update, ok := action.(k8stesting.UpdateAction); ok && ptr.Deref(update.GetObject().(*coordinationv1.Lease).Spec.HolderIdentity, "") == "" {
						released.Add(1)
					}
					if time.Since(start) < time.Second || over {
						return false, nil, nil
					}
					switch action.GetVerb() {
					case "update":
						wrote, read = true, false
						return true, nil, errors.New("etcdserver: request timed out")
					case "get":
						if wrote {
							wrote, read = false, true
							if tc.readsFail {
								return true, nil, errors.New("etcdserver: request timed out")
							}
						} else if read {
							over = true
						}
					}
					return false, nil, nil
				})
				leaderCampaign, stopLeader := context.WithCancel(t.Context())
				otherCampaign, stopOther := context.WithCancel(t.Context())
				var mu sync.Mutex
				var leaderLedAt []time.Duration
				var otherLed atomic.Int32
				leaderDone := runCampaign(leaderCampaign, leaderKube, newLeadership("10.0.0.1:443"), func() {
					mu.Lock()
					leaderLedAt = append(leaderLedAt, time.Since(start))
					mu.Unlock()
				})
				synctest.Wait()
				otherDone := runCampaign(otherCampaign, otherKube, newLeadership("10.0.0.2:443"), func() { otherLed.Add(1) })
				defer func() { stopLeader(); stopOther(); <-leaderDone; <-otherDone }()
				time.Sleep(60 * time.Second)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if released.Load() != 0 || otherLed.Load() != 0 || len(leaderLedAt) != 2 || leaderLedAt[1] > 12*time.Second {
					t.Errorf("releases %d, the leader led from %v, the other replica %d times; want no release, from 0s and 12s, never",
						released.Load(), leaderLedAt, otherLed.Load())
				}

				stopLeader()
				<-leaderDone
				obj, err := leaderKube.Tracker().Get(coordinationv1.SchemeGroupVersion.WithResource("leases"), "gridview-system", serviceGridComponentName)
				if err != nil {
					t.Fatal(err)
				}
				if holder := ptr.Deref(obj.(*coordinationv1.Lease).Spec.HolderIdentity, ""); released.Load() != 1 || holder != "" {
					t.Errorf("the leader stopped: releases %d, holder %q; want one release and no holder", released.Load(), holder)
				}
			})
		})
	}
}

// A replica restarted in place leaves its predecessor's Lease to the replica
// that followed the predecessor once that one asked it for what the
// predecessor served: it takes it a Lease duration later than it could, so
// that the other, which saw the last renewal, takes it first. Asked by none,
// as a single replica after a crash, it takes it as soon as it may.
func TestAReplicaRestartedInPlaceYieldsItsPredecessorsLease(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		asked                 bool
		notLeadingAt, leadsBy time.Duration
	}{
		{name: "alone", notLeadingAt: 14900 * time.Millisecond, leadsBy: 20 * time.Second},
		// Marked again at the first read after 15 s, at 15-19.4 s.
		{name: "another replica asked", asked: true, notLeadingAt: 29900 * time.Millisecond, leadsBy: 39 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				kube := fake.NewClientset(&coordinationv1.Lease{
					ObjectMeta: metav1.ObjectMeta{Namespace: "gridview-system", Name: serviceGridComponentName},
					Spec:       leaseSpec("host_before@10.0.0.1:443", start),
				})
				ctx, cancel := context.WithCancel(t.Context())
				restarted := newLeadership("10.0.0.1:443")
				restarted.peerAsked.Store(tc.asked)
				var ledAt atomic.Int64
				done := runCampaign(ctx, kube, restarted, func() { ledAt.CompareAndSwap(0, int64(time.Since(start))) })
				defer func() {
					cancel()
					<-done
				}()
				time.Sleep(tc.notLeadingAt)
				synctest.Wait()
				if led := time.Duration(ledAt.Load()); led != 0 {
					t.Fatalf("the replica took its predecessor's Lease at %s; want after %s", led, tc.notLeadingAt)
				}
				time.Sleep(tc.leadsBy - tc.notLeadingAt)
				synctest.Wait()
				if ledAt.Load() == 0 {
					t.Errorf("the replica does not lead at %s", tc.leadsBy)
				}
			})
		})
	}
}
