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
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	topologyclient "github.com/gridview/gridview/generated/clientset/versioned/typed/topology/v1alpha1"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// followerCatchUp is how long the replica that does not lead must have
// followed the leader before the leader goes: it replicates the leader's
// inputs, and a survivor that had not caught up would rightly answer a
// resourceVersion it has not reached yet with a relist.
const followerCatchUp = 5 * time.Second

// Clients following their node through the aggregator list once and never
// again when the leader stops, as in a rolling update, and the other replica
// takes the Lease:
// the replicas share one numbering of view changes, so a resourceVersion the
// stopped leader issued means the same to the survivor, and a re-watch from it
// resumes there. Informers with and without streaming lists, and
// gridview-wrapper, end equal to a fresh list. The informers log what ended
// their watches, so that a failure says why they relisted.
func TestClientsFollowTheirNodeAcrossALeaderChange(t *testing.T) {
	// The takeover itself churns for the Lease's duration and more (about
	// 17 s): the test churns half the package's churn before the stop and a
	// quarter after the takeover.
	churn := haDuration(t, "GRIDVIEW_HA_CHURN", 20*time.Second)
	watchTimeout := haDuration(t, "GRIDVIEW_HA_WATCH_TIMEOUT", 3*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newSite(t)
	leader := settledLeader(t)
	follower := runningReplicaBut(t, leader.replica)
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.ns)

	// One node each, so that every client's views change with the churn:
	// a2 moves between the units, which changes a1's view of grid and
	// b1's, and a2's own.
	var followers []*nodeFollower
	for _, c := range []struct {
		node      string
		watchList bool
	}{
		{node: "a1", watchList: true},
		{node: "b1", watchList: false},
	} {
		followers = append(followers, followNode(ctx, t, views, s.node(c.node), c.watchList, watchTimeout))
	}
	// gridview-wrapper takes client-go's WatchListClient gate from the
	// environment, which the test leaves as it is.
	wrapper := startHostWrapper(t, s.node("a2"), "--upstream-watch-timeout", watchTimeout.String())
	setUp := time.Now()

	changes := s.churn(ctx, t, 0, churn/2)
	// The follower replicates the leader's inputs: it must have followed a
	// while and hold the leader's views before the leader goes.
	if wait := followerCatchUp - time.Since(setUp); wait > 0 {
		time.Sleep(wait)
	}
	s.caughtUp(t, leader.replica, follower)
	// What an operator reads before a rolling update: who leads, and
	// that the other replica follows it.
	expectRoles(t, leader.replica, follower)
	for _, f := range followers {
		if lists, gone := f.rec.counts(); lists != 1 || gone != 0 {
			t.Fatalf("%s relisted before the leader changed: %d lists and %d 410 Gone answers (%s)", f, lists, gone, f.summary())
		}
	}
	if lists := wrapper.counts(t, "gridview_wrapper_upstream_lists_total"); !onceEach(lists) {
		t.Fatalf("gridview-wrapper relisted before the leader changed: lists by resource %v", lists)
	}
	// A client between two watches when the leader goes resumes from a
	// resourceVersion the leader issued: no stream of its is cut, so it
	// shows how the survivor reads that resourceVersion alone.
	between, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.node("a1")})
	if err != nil {
		t.Fatal(err)
	}
	localBefore := servedLocally(t, follower)

	// Later tests expect two replicas; the Lease stays with the survivor.
	t.Cleanup(func() {
		if err := leader.replica.Start(context.Background()); err != nil {
			t.Errorf("starting %s again: %v", leader.replica.Name, err)
		}
	})
	// Stopped, not killed: a killed leader's watch streams are cut, on the
	// follower that forwarded them and in kube-apiserver's proxy alike, and
	// client-go relists after a cut stream whatever the resourceVersion
	// (TestTwoReplicas kills one). A stopping leader ends them, and each
	// client watches again from its resourceVersion.
	if err := leader.replica.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	t.Logf("stopped %s, the leader, after %d changes in %s", leader.replica.Name, changes, stopped.Sub(setUp).Round(100*time.Millisecond))
	// Churn on while the survivor waits for the Lease to expire: the
	// clients' re-watches meet it in the meantime.
	for {
		changes = s.churn(ctx, t, changes, 500*time.Millisecond)
		leaders, err := leading()
		if err != nil {
			t.Fatal(err)
		}
		if len(leaders) == 1 && leaders[0] == follower {
			break
		}
		if time.Since(stopped) > failoverBudget {
			t.Fatalf("%s does not lead %s after %s was stopped (leading: %v)", follower.Name, failoverBudget, leader.replica.Name, names(leaders))
		}
	}
	tookOver := time.Since(stopped)
	lease, err := kubeClient.CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	acquired := "no acquireTime"
	if lease.Spec.AcquireTime != nil {
		acquired = lease.Spec.AcquireTime.Sub(stopped).Round(100 * time.Millisecond).String()
	}
	t.Logf("takeover: %s leads %.1f s after %s was stopped (the Lease, held by %s, acquired after %s); %v reads served by %s itself meanwhile",
		follower.Name, tookOver.Seconds(), leader.replica.Name, ptr.Deref(lease.Spec.HolderIdentity, ""), acquired,
		servedLocally(t, follower)-localBefore, follower.Name)

	// The new leader numbers on its own; nothing follows it while the old
	// leader is down.
	eventually(t, 10*time.Second, follower.Name+" leading and numbering on its own", func(ctx context.Context) error {
		return roles(ctx, role{follower, 1, 0})
	})
	changes = s.churn(ctx, t, changes, churn/4)
	t.Logf("%d changes in all, the last %s after the takeover", changes, (time.Since(stopped) - tookOver).Round(100*time.Millisecond))
	// The stopped leader logs that it stopped leading, and the follower
	// that it started.
	if moved, err := leadershipChanges(); err != nil || moved-leader.changes != 2 {
		t.Errorf("replicas started or stopped leading %d times since the test started (%v), want twice: %s stopping, %s taking over", moved-leader.changes, err, leader.replica.Name, follower.Name)
	}

	if err := resumeWatch(ctx, views, s.node("a1"), between.ResourceVersion); err != nil {
		t.Errorf("a watch of %s's views resumed through %s from resourceVersion %s, which %s issued before it stopped: %v",
			s.node("a1"), follower.Name, between.ResourceVersion, leader.replica.Name, err)
	}
	for _, f := range followers {
		lists, gone := f.rec.counts()
		t.Logf("%s: %s", f, f.summary())
		if lists != 1 || gone != 0 {
			t.Errorf("%s: %d lists and %d 410 Gone answers across the leader change, want the first list only: %q", f, lists, gone, f.rec.goneAnswers())
		}
	}
	wrapperLists := wrapper.counts(t, "gridview_wrapper_upstream_lists_total")
	t.Logf("gridview-wrapper for %s: watches %v, lists %v", s.node("a2"), wrapper.counts(t, "gridview_wrapper_upstream_watches_total"), wrapperLists)
	if !onceEach(wrapperLists) {
		t.Errorf("gridview-wrapper's lists by resource across the leader change: %v, want 1 of each", wrapperLists)
	}

	for _, f := range followers {
		eventually(t, 20*time.Second, f.String()+" equal to a fresh list", func(ctx context.Context) error {
			list, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + f.node})
			if err != nil {
				return err
			}
			got, want := informerAndList(f.informer.GetStore(), list)
			if len(want) == 0 {
				return fmt.Errorf("%s has no view: the comparison would prove nothing", f.node)
			}
			if !maps.Equal(got, want) {
				return fmt.Errorf("informer %v\nlist %v", got, want)
			}
			return nil
		})
	}
	eventually(t, 20*time.Second, "gridview-wrapper's slices equal to a fresh list", func(ctx context.Context) error {
		return wrapperEqualsList(ctx, wrapper, s.ns, s.node("a2"))
	})
}

// runningReplicaBut returns a running replica other than r.
func runningReplicaBut(t *testing.T, r *localcluster.GridviewReplica) *localcluster.GridviewReplica {
	t.Helper()
	for _, other := range replicas {
		if other.Running() && other != r {
			return other
		}
	}
	t.Fatalf("no running replica but %s", r.Name)
	return nil
}

// servedLocally is how many reads r, not leading, served itself because the
// leader did not answer in time: a client whose read the dead leader would
// have served meets the survivor's numbering.
func servedLocally(t *testing.T, r *localcluster.GridviewReplica) float64 {
	t.Helper()
	value, err := metric(context.Background(), r, `gridview_apiserver_leader_reads_total{served_by="local"}`)
	if err != nil && !errors.Is(err, localcluster.ErrNoSample) {
		t.Fatal(err)
	}
	return value
}

// nodeFollower is an informer of one node's views, as a node agent's: it
// counts its lists (plain or streaming) and 410 Gone answers in rec, and
// keeps the other errors its lists and watches met, which also make a
// reflector relist (a watch stream cut mid-way, as the aggregator and a
// forwarding replica cut those of a leader that dies, does), so that a
// relist can be told from a 410's.
type nodeFollower struct {
	node      string
	watchList bool
	informer  cache.SharedIndexInformer
	rec       *recordingListWatch
	// Guarded by rec.mu.
	watches, streamingLists int
	otherErrors             []string
}

func (f *nodeFollower) String() string {
	return fmt.Sprintf("informer of %s (WatchListClient=%v)", f.node, f.watchList)
}

// summary is what the informer met, for the test's log.
func (f *nodeFollower) summary() string {
	lists, _ := f.rec.counts()
	gone := f.rec.goneAnswers()
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	return fmt.Sprintf("%d watches, %d lists (%d streaming), %d 410 Gone answers %q, other errors %q",
		f.watches, lists, f.streamingLists, len(gone), gone, f.otherErrors)
}

func (f *nodeFollower) failed(err error) {
	switch {
	case err == nil:
	case isGone(err):
		f.rec.expired(err)
	default:
		f.rec.mu.Lock()
		defer f.rec.mu.Unlock()
		f.otherErrors = append(f.otherErrors, time.Now().Format("15:04:05.000")+" "+err.Error())
	}
}

// followNode starts an informer of node's views through views, with
// client-go's WatchListClient gate as watchList, and waits until it synced.
// Its watches time out after watchTimeout, so that it re-watches often.
// TestInformersFollowTheirNodeAcrossReplicas builds the same list and watch
// inline, one informer at a time.
func followNode(ctx context.Context, t *testing.T, views topologyclient.NodeEndpointsInterface, node string, watchList bool, watchTimeout time.Duration) *nodeFollower {
	t.Helper()
	// A reflector reads the gate once, when the informer creates it: the
	// gate may change for the next informer once this one synced.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
	f := &nodeFollower{node: node, watchList: watchList, rec: &recordingListWatch{}}
	own := "nodeName=" + node
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = own
			list, err := views.List(ctx, opts)
			f.failed(err)
			if err == nil {
				f.rec.listed()
			}
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = own
			opts.TimeoutSeconds = ptr.To(int64(watchTimeout.Seconds()))
			streaming := ptr.Deref(opts.SendInitialEvents, false)
			f.rec.mu.Lock()
			f.watches++
			f.rec.mu.Unlock()
			w, err := views.Watch(ctx, opts)
			f.failed(err)
			if err != nil {
				return nil, err
			}
			if streaming {
				f.rec.listed()
				f.rec.mu.Lock()
				f.streamingLists++
				f.rec.mu.Unlock()
			}
			return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
				if ev.Type == watch.Error {
					f.failed(apierrors.FromObject(ev.Object))
				}
				return ev, true
			}), nil
		},
	}
	f.informer = cache.NewSharedIndexInformer(lw, &topologyv1alpha1.NodeEndpoints{}, 0, cache.Indexers{})
	go f.informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), f.informer.HasSynced) {
		t.Fatalf("the %s did not sync", f)
	}
	f.rec.mu.Lock()
	streamed := f.streamingLists > 0
	f.rec.mu.Unlock()
	if streamed != watchList {
		t.Fatalf("the %s synced from a streaming list: %v: it does not test what it says (%s)", f, streamed, f.summary())
	}
	return f
}

// resumeWatch watches node's views from resourceVersion rv until the first
// event, as a reflector's re-watch does, and returns the 410 Gone or other
// error it met there.
func resumeWatch(ctx context.Context, views topologyclient.NodeEndpointsInterface, node, rv string) error {
	w, err := views.Watch(ctx, metav1.ListOptions{
		FieldSelector: "nodeName=" + node, ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](10)})
	if err != nil {
		return err
	}
	defer w.Stop()
	ev, ok := <-w.ResultChan()
	switch {
	case !ok:
		return errors.New("the watch ended before its first event")
	case ev.Type == watch.Error:
		return apierrors.FromObject(ev.Object)
	}
	return nil
}

// wrapperEqualsList compares what w serves of ns's EndpointSlices with a
// fresh list of node's views.
func wrapperEqualsList(ctx context.Context, w hostWrapper, ns, node string) error {
	list, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + node})
	if err != nil {
		return err
	}
	want := map[string]string{}
	for i := range list.Items {
		want[list.Items[i].Slice.Name] = fmt.Sprint(framework.Addresses(&list.Items[i]))
	}
	if len(want) == 0 {
		return fmt.Errorf("%s has no view: the comparison would prove nothing", node)
	}
	got, err := w.slices(ctx, ns)
	if err != nil {
		return err
	}
	if !maps.Equal(got, want) {
		return fmt.Errorf("wrapper %v\nlist %v", got, want)
	}
	return nil
}

// expectRoles fails the test unless leader says it leads and numbers on its
// own, and follower that it follows.
func expectRoles(t *testing.T, leader, follower *localcluster.GridviewReplica) {
	t.Helper()
	eventually(t, 10*time.Second, leader.Name+" leading, "+follower.Name+" following it", func(ctx context.Context) error {
		return roles(ctx, role{leader, 1, 0}, role{follower, 0, 1})
	})
}

// role is what a replica's gridview_apiserver_leading and
// gridview_nodeendpoints_following_leader should say.
type role struct {
	replica          *localcluster.GridviewReplica
	leads, following float64
}

// roles checks each replica's metrics against its role.
func roles(ctx context.Context, want ...role) error {
	for _, w := range want {
		for name, value := range map[string]float64{"gridview_apiserver_leading": w.leads, "gridview_nodeendpoints_following_leader": w.following} {
			got, err := metric(ctx, w.replica, name)
			if err != nil {
				return err
			}
			if got != value {
				return fmt.Errorf("%s: %s %v, want %v", w.replica.Name, name, got, value)
			}
		}
	}
	return nil
}
