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

	"github.com/gridview/gridview/test/localcluster"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Clients following their node through the aggregator across a change of
// the replica that writes gridview's input log, during churn: the replicas
// exchange nothing, each numbers every change by the etcd revision that
// wrote its input, so a resourceVersion the leader that went issued means the
// same on the survivor, which is elected in its place and writes on, and a
// re-watch from it resumes there. Informers with and without streaming
// lists, and gridview-wrapper, end equal to a fresh list, and keep following
// when the replica that went comes back and serves again; both replicas end
// at the same revision of the log with the same views. The informers log
// what ended their watches, so that a failure says why they listed again.
//
// Stopped, as in a rolling update, the leader leaves the Service's endpoints
// first and ends its watches; each client watches again from its
// resourceVersion, on the survivor, and none lists again (unless a re-watch
// races the stop: see listedOnceAcrossStops). Killed, its watch
// streams are cut, in kube-apiserver's proxy too, and client-go lists again
// after a cut stream whatever the resourceVersion: an informer may list
// again then, but only after such an error and from its own
// resourceVersion, which the survivor serves, never 410 Gone.
func TestClientsFollowTheirNodeAcrossALeaderChange(t *testing.T) {
	churn := haDuration(t, "GRIDVIEW_HA_CHURN", 20*time.Second)
	watchTimeout := haDuration(t, "GRIDVIEW_HA_WATCH_TIMEOUT", 3*time.Second)
	for _, c := range []struct {
		name  string
		crash bool
	}{
		{name: "leader stopped"},
		{name: "leader killed", crash: true},
	} {
		t.Run(c.name, func(t *testing.T) { followAcrossALeaderChange(t, c.crash, churn, watchTimeout) })
	}
}

func followAcrossALeaderChange(t *testing.T, crash bool, churn, watchTimeout time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newSite(t)
	s.converged(t, 20*time.Second)
	leader := awaitLeader(t, 30*time.Second)
	survivor := runningReplicaBut(t, leader)
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)

	followers, wrapper := followSite(ctx, t, s, views, watchTimeout)
	setUp := time.Now()

	changes := s.churn(ctx, t, 0, churn/2)
	for _, f := range followers {
		f.listedOnce(t, "before the leader went")
	}
	if lists := wrapper.counts(t, "gridview_wrapper_upstream_lists_total"); !onceEach(lists) {
		t.Fatalf("gridview-wrapper relisted before the leader went: lists by resource %v", lists)
	}
	// A client between two watches when the leader goes resumes from a
	// resourceVersion either replica issued: no stream of its is cut.
	between, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1")})
	if err != nil {
		t.Fatal(err)
	}

	// Later tests expect two replicas.
	t.Cleanup(func() {
		if !leader.Running() {
			if err := leader.Start(context.Background()); err != nil {
				t.Errorf("starting %s again: %v", leader.Name, err)
			}
		}
	})
	how := "stopped"
	stops := []time.Time{time.Now()}
	if crash {
		how = "killed"
		err = leader.Kill()
	} else {
		err = leader.Stop()
	}
	if err != nil {
		t.Fatal(err)
	}
	gone := time.Now()
	t.Logf("%s %s, the leader, after %d changes in %s", how, leader.Name, changes, gone.Sub(setUp).Round(100*time.Millisecond))
	// Churn on while the survivor is elected: a stopped leader hands the
	// election over as it stops, a killed one's etcd session must expire
	// first (10 s). The clients' re-watches meet the survivor meanwhile.
	for {
		changes = s.churn(ctx, t, changes, 500*time.Millisecond)
		leading, err := leaders(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(leading) == 1 && leading[0] == survivor {
			break
		}
		if time.Since(gone) > failoverBudget {
			t.Fatalf("%s does not lead %s after %s was %s (leading: %v)", survivor.Name, failoverBudget, leader.Name, how, names(leading))
		}
	}
	tookOver := time.Since(gone)
	t.Logf("takeover: %s leads %.1f s after %s was %s", survivor.Name, tookOver.Seconds(), leader.Name, how)
	changes = s.churn(ctx, t, changes, churn/4)
	if err := resumeWatch(ctx, directClient(t, survivor).TopologyV1alpha1().NodeEndpoints(s.NS), s.Node("a1"), between.ResourceVersion); err != nil {
		t.Errorf("a watch of %s's views resumed on %s from resourceVersion %s, listed before %s was %s: %v",
			s.Node("a1"), survivor.Name, between.ResourceVersion, leader.Name, how, err)
	}

	// The replica that went comes back, ready once it read the log up to
	// its latest write, and serves the clients' re-watches too.
	if err := leader.Start(ctx); err != nil {
		t.Fatalf("starting %s again: %v", leader.Name, err)
	}
	t.Logf("%s serving again %s after it was %s", leader.Name, time.Since(gone).Round(100*time.Millisecond), how)
	changes = s.churn(ctx, t, changes, churn/4)
	t.Logf("%d changes in all, the last %s after the takeover", changes, (time.Since(gone) - tookOver).Round(100*time.Millisecond))

	for _, f := range followers {
		t.Logf("%s: %s", f, f.summary())
		if crash {
			f.listedOnlyAfterErrors(t, "across the crash of the leader")
		} else {
			f.listedOnceAcrossStops(t, "across the leader change and the old leader's return", stops)
		}
	}
	wrapperLists := wrapper.counts(t, "gridview_wrapper_upstream_lists_total")
	short := wrapper.shortWatches(t)
	t.Logf("gridview-wrapper for %s: watches %v, lists %v, %d watches of NodeEndpoints ended within a second with no event",
		s.Node("a2"), wrapper.counts(t, "gridview_wrapper_upstream_watches_total"), wrapperLists, short)
	if !crash {
		// Every list but the first of NodeEndpoints follows a watch the
		// stopping leader ended at once (see listedOnceAcrossStops).
		relists := wrapperLists["nodeendpoints"] - 1
		ok := relists >= 0 && relists <= float64(min(short, len(stops)))
		for resource, n := range wrapperLists {
			ok = ok && (n == 1 || resource == "nodeendpoints")
		}
		if !ok {
			t.Errorf("gridview-wrapper's lists by resource across the leader change: %v, want 1 of each, "+
				"NodeEndpoints' again only after a watch the stopping leader ended at once (%d such)", wrapperLists, short)
		}
	}

	for _, f := range followers {
		f.equalsList(t, views)
	}
	localcluster.Eventually(t, 20*time.Second, "gridview-wrapper's slices equal to a fresh list", func(ctx context.Context) error {
		return wrapperEqualsList(ctx, wrapper, s.NS, s.Node("a2"))
	})
	s.converged(t, 20*time.Second)
	if leading, err := leaders(ctx); err != nil || len(leading) != 1 || leading[0] != survivor {
		t.Errorf("leading at the end: %v (%v), want %s, which took over, alone", names(leading), err, survivor.Name)
	}
}
