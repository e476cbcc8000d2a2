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
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyclient "github.com/gridview/gridview/generated/clientset/versioned/typed/topology/v1alpha1"
	"github.com/gridview/gridview/test/localcluster"
)

// Clients following their node through the aggregator while each of three
// replicas is restarted in turn, the one writing gridview's input log is
// killed, and then every replica stops for a while and starts again, during
// churn: every replica derives its views from the log in etcd and numbers
// each change by the etcd revision that wrote its input, so a client's
// resourceVersion means the same on every replica, before and after any
// restart, and its re-watches resume wherever they land. Informers with and
// without streaming lists, and gridview-wrapper, end equal to a fresh list;
// the three replicas end at the same revision of the log with the same views,
// each serving the clients' watches.
//
// What the clients may meet is what TestClientsFollowTheirNodeAcrossALeaderChange
// allows, no more:
//   - the rolling restart: each replica leaves the Service's endpoints and
//     ends its watches; the clients watch again from their resourceVersion
//     and list only after a re-watch that raced a stop (listedOnceAcrossStops).
//   - the killed leader: its streams are cut, and client-go lists again after
//     a cut stream; such a list must follow the error and ask for the
//     client's own resourceVersion, which the survivors serve, never 410 Gone.
//   - every replica stopped: the aggregator answers 503 while no replica is
//     an endpoint, and client-go lists again after a watch that fails so,
//     whatever the resourceVersion: the same rule as for the kill.
//     gridview-wrapper takes the 503 for a 429 and watches again instead.
//
// Once every replica serves again and the clients are current, they neither
// list nor meet an error again.
//
// GRIDVIEW_HA_CHURN scales the churn of every phase (20 s by default, the
// whole test then under two minutes), GRIDVIEW_HA_WATCH_TIMEOUT the clients'
// watch timeouts (3 s; 30 s for a long run), GRIDVIEW_HA_ALL_STOPPED how long
// no replica runs (10 s, or 60 s when GRIDVIEW_HA_CHURN asks for a minute or
// more).
func TestClientsFollowTheirNodeThroughEveryReplicaRestart(t *testing.T) {
	churn := haDuration(t, "GRIDVIEW_HA_CHURN", 20*time.Second)
	watchTimeout := haDuration(t, "GRIDVIEW_HA_WATCH_TIMEOUT", 3*time.Second)
	pause := 10 * time.Second
	if churn >= time.Minute {
		pause = time.Minute
	}
	pause = haDuration(t, "GRIDVIEW_HA_ALL_STOPPED", pause)
	began := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	three := threeReplicas(ctx, t)
	s := newSite(t)
	s.converged(t, 30*time.Second)
	firstLeader := awaitLeader(t, 30*time.Second)
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	tally := newWatchTally(ctx, t)

	followers, wrapper := followSite(ctx, t, s, views, watchTimeout)
	p := newPhases(t, followers, wrapper)
	t.Logf("replicas %v, %s leading; clients set up %s after the start; churn %s, watch timeout %s, every replica stopped for %s",
		names(three), firstLeader.Name, time.Since(began).Round(100*time.Millisecond), churn, watchTimeout, pause)

	changes := s.churn(ctx, t, 0, churn/4)
	p.end("churn before any restart", changes)
	for _, f := range followers {
		f.listedOnce(t, "before any restart")
	}
	if lists := wrapper.counts(t, "gridview_wrapper_upstream_lists_total"); !onceEach(lists) {
		t.Fatalf("gridview-wrapper relisted before any restart: lists by resource %v", lists)
	}

	// (1) A rolling restart: one replica at a time, each ready before the
	// next stops, with changes while each is down.
	var stops []time.Time
	for _, r := range three {
		tally.read(ctx, t)
		stops = append(stops, time.Now())
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		tally.restarted(r)
		stopped := time.Now()
		changes = s.churn(ctx, t, changes, churn/10)
		starting := time.Now()
		if err := r.Start(ctx); err != nil {
			t.Fatalf("starting %s again: %v", r.Name, err)
		}
		localcluster.Eventually(t, 30*time.Second, r.Name+" ready", func(ctx context.Context) error { return readyz(ctx, r) })
		t.Logf("rolling restart: %s stopped in %s, down %s, ready %s after its start",
			r.Name, stopped.Sub(stops[len(stops)-1]).Round(100*time.Millisecond),
			time.Since(stopped).Round(100*time.Millisecond), time.Since(starting).Round(100*time.Millisecond))
		changes = s.churn(ctx, t, changes, churn/10)
	}
	p.end("rolling restart", changes)
	for _, f := range followers {
		f.listedOnceAcrossStops(t, "across the rolling restart", stops)
	}
	// As TestClientsFollowTheirNodeAcrossALeaderChange's stopped leader:
	// NodeEndpoints listed again only after a watch a stopping replica
	// ended at once, every other resource (from kube-apiserver) once.
	wrapperLists, short := wrapper.counts(t, "gridview_wrapper_upstream_lists_total"), wrapper.shortWatches(t)
	if relists := wrapperLists["nodeendpoints"] - 1; relists < 0 || relists > float64(min(short, len(stops))) || !onceEachBut(wrapperLists, "nodeendpoints") {
		t.Errorf("gridview-wrapper's lists by resource across the rolling restart: %v, want 1 of each, "+
			"NodeEndpoints' again only after a watch a stopping replica ended at once (%d such)", wrapperLists, short)
	}
	s.converged(t, 30*time.Second)

	// (2) The replica writing the log killed: another is elected once its
	// etcd session expires, while the churn goes on. It comes back then.
	leader := awaitLeader(t, 30*time.Second)
	tally.read(ctx, t)
	killed := time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	tally.restarted(leader)
	var successor *localcluster.GridviewReplica
	for successor == nil {
		changes = s.churn(ctx, t, changes, 500*time.Millisecond)
		leading, err := leaders(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(leading) == 1 && leading[0] != leader {
			successor = leading[0]
		} else if time.Since(killed) > failoverBudget {
			t.Fatalf("no other replica leads %s after %s, the leader, was killed (leading: %v)", failoverBudget, leader.Name, names(leading))
		}
	}
	tookOver := time.Since(killed)
	changes = s.churn(ctx, t, changes, churn/8)
	starting := time.Now()
	if err := leader.Start(ctx); err != nil {
		t.Fatalf("starting %s again: %v", leader.Name, err)
	}
	t.Logf("kill: %s, the leader, killed; %s leads %.1f s after; %s serving again %s after its start",
		leader.Name, successor.Name, tookOver.Seconds(), leader.Name, time.Since(starting).Round(100*time.Millisecond))
	changes = s.churn(ctx, t, changes, churn/8)
	p.end("leader killed", changes)
	for _, f := range followers {
		f.listedOnlyAfterErrors(t, "across the kill of the leader")
	}
	s.converged(t, 30*time.Second)

	// (3) Every replica stopped at once, changes while none runs, every
	// replica started again at once. A change after they all serve again
	// touches every client's view, so that a client holding it is current.
	tally.read(ctx, t)
	wrapperListsBefore := wrapper.counts(t, "gridview_wrapper_upstream_lists_total")["nodeendpoints"]
	stopping := time.Now()
	if err := eachReplica(three, (*localcluster.GridviewReplica).Stop); err != nil {
		t.Fatal(err)
	}
	for _, r := range three {
		tally.restarted(r)
	}
	allDown := time.Now()
	changes = s.churn(ctx, t, changes, pause)
	starting = time.Now()
	if err := eachReplica(three, func(r *localcluster.GridviewReplica) error { return r.Start(ctx) }); err != nil {
		t.Fatalf("starting every replica again: %v", err)
	}
	allUp := time.Now()
	leaderAfter := awaitLeader(t, 30*time.Second)
	t.Logf("every replica: stopped in %s, none running for %s, all serving again %s after their start, %s leading",
		allDown.Sub(stopping).Round(100*time.Millisecond), starting.Sub(allDown).Round(100*time.Millisecond),
		allUp.Sub(starting).Round(100*time.Millisecond), leaderAfter.Name)
	s.writeSlice(t, map[string]string{marker + "1": "a1", marker + "2": "a2", marker + "3": "b1"})
	changes++
	for _, f := range followers {
		f.currentAfter(t, views, 2*time.Minute)
		t.Logf("%s current %s after every replica serves again", f, time.Since(allUp).Round(100*time.Millisecond))
	}
	localcluster.Eventually(t, 2*time.Minute, "gridview-wrapper current: its slices equal to a fresh list, with "+marker+"*", func(ctx context.Context) error {
		return wrapperCurrent(ctx, wrapper, s.NS, s.Node("a2"))
	})
	t.Logf("gridview-wrapper current %s after every replica serves again", time.Since(allUp).Round(100*time.Millisecond))
	p.end("every replica stopped", changes)
	for _, f := range followers {
		f.listedOnlyAfterErrors(t, "across the stop of every replica")
	}
	// The wrapper watches again after the aggregator's 503s, as after a
	// 429, rather than list.
	if got := wrapper.counts(t, "gridview_wrapper_upstream_lists_total")["nodeendpoints"]; got != wrapperListsBefore {
		t.Errorf("gridview-wrapper listed NodeEndpoints %v times while no replica ran, want none", got-wrapperListsBefore)
	}
	s.converged(t, 30*time.Second)

	// Every replica serving, the clients current: they re-watch on every
	// replica, and neither list nor meet an error again. Long enough for a
	// few re-watches each, which the aggregator spreads over the replicas
	// at random, whatever the watch timeout.
	quiet := p.marks()
	servedBefore := watchesServed(ctx, t)
	more, churned := s.churnOnEveryReplica(ctx, t, max(churn/4, 2*watchTimeout), servedBefore)
	changes += more
	served := servedSince(ctx, t, servedBefore)
	p.end("churn after every replica's return", changes)
	for i, f := range followers {
		if got := f.mark().since(quiet.followers[i]); got.lists != 0 || got.gone != 0 || got.errors != 0 || got.short != 0 {
			t.Errorf("%s, current, with every replica serving, met in %s: %s; want no list, no error: %s", f, churned.Round(time.Second), got, f.summary())
		}
	}
	if got := wrapper.counts(t, "gridview_wrapper_upstream_lists_total"); got["nodeendpoints"] != quiet.wrapperLists || !onceEachBut(got, "nodeendpoints") {
		t.Errorf("gridview-wrapper, current, with every replica serving, listed: %v, NodeEndpoints %v before; want no list", got, quiet.wrapperLists)
	}
	expectEveryReplicaServed(t, served)

	// The end: every client equal to a fresh list, no 410 Gone, no list
	// from scratch, none but after an error; the replicas alike.
	for _, f := range followers {
		t.Logf("%s: %s", f, f.summary())
		f.listedOnlyAfterErrors(t, "at the end")
		f.equalsList(t, views)
	}
	localcluster.Eventually(t, 20*time.Second, "gridview-wrapper's slices equal to a fresh list", func(ctx context.Context) error {
		return wrapperEqualsList(ctx, wrapper, s.NS, s.Node("a2"))
	})
	s.converged(t, 30*time.Second)
	tally.read(ctx, t)
	t.Logf("gridview-wrapper for %s: watches %v, lists %v, %d watches of NodeEndpoints ended within a second with no event",
		s.Node("a2"), wrapper.counts(t, "gridview_wrapper_upstream_watches_total"), wrapper.counts(t, "gridview_wrapper_upstream_lists_total"), wrapper.shortWatches(t))
	t.Logf("%d changes; watches of NodeEndpoints served to their end, by replica: %v over the test (as read before each stop), %v in the last %s; elected over all runs: %v; %s in all",
		changes, tally.total, served, churned.Round(time.Second), startsOfLeading(t), time.Since(began).Round(time.Second))
}

// marker starts the addresses of the slice written once every replica
// serves again: churn never writes them.
const marker = "10.1.255."

// threeReplicas returns the suite's two replicas and a third, running, on
// the same etcd behind the APIService; it adds the third the first time.
// Later tests expect two: when the test ends, the two run and the third is
// stopped (it stays in cluster.GridviewReplicas, not running).
func threeReplicas(ctx context.Context, t *testing.T) []*localcluster.GridviewReplica {
	t.Helper()
	t.Cleanup(func() {
		for _, r := range replicas {
			if !r.Running() {
				if err := r.Start(context.Background()); err != nil {
					t.Errorf("starting %s again: %v", r.Name, err)
				}
			}
		}
		for _, r := range cluster.GridviewReplicas()[len(replicas):] {
			if err := r.Stop(); err != nil {
				t.Errorf("stopping %s: %v", r.Name, err)
			}
		}
	})
	if all := cluster.GridviewReplicas(); len(all) < 3 {
		if _, err := cluster.AddGridviewReplica(ctx); err != nil {
			t.Fatalf("starting a third gridview-apiserver: %v", err)
		}
	} else if !all[2].Running() {
		if err := all[2].Start(ctx); err != nil {
			t.Fatalf("starting %s again: %v", all[2].Name, err)
		}
	}
	three := cluster.GridviewReplicas()[:3]
	if running := runningReplicas(); len(running) != 3 {
		t.Fatalf("replicas running: %v, want %v", names(running), names(three))
	}
	return three
}

// eachReplica does do to every replica at once and waits for all.
func eachReplica(rs []*localcluster.GridviewReplica, do func(*localcluster.GridviewReplica) error) error {
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() { errs[i] = do(r) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// onceEachBut says whether every resource but except was counted once.
func onceEachBut(counts map[string]float64, except string) bool {
	for resource, n := range counts {
		if n != 1 && resource != except {
			return false
		}
	}
	return len(counts) > 1
}

// currentAfter waits until f holds what a fresh list of its node's views
// holds, and that list has the slice written with marker addresses: f
// listed or watched since.
func (f *nodeFollower) currentAfter(t *testing.T, views topologyclient.NodeEndpointsInterface, timeout time.Duration) {
	t.Helper()
	localcluster.Eventually(t, timeout, f.String()+" current: equal to a fresh list, with "+marker+"*", func(ctx context.Context) error {
		list, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + f.node})
		if err != nil {
			return err
		}
		got, want := informerAndList(f.informer.GetStore(), list)
		if !strings.Contains(fmt.Sprint(want), marker) {
			return fmt.Errorf("a fresh list has no address %s*: %v", marker, want)
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("informer %v\nlist %v", got, want)
		}
		return nil
	})
}

// wrapperCurrent is wrapperEqualsList, once the wrapper serves the slice
// written with marker addresses.
func wrapperCurrent(ctx context.Context, w hostWrapper, ns, node string) error {
	if err := wrapperEqualsList(ctx, w, ns, node); err != nil {
		return err
	}
	got, err := w.slices(ctx, ns)
	if err != nil {
		return err
	}
	if !strings.Contains(fmt.Sprint(got), marker) {
		return fmt.Errorf("the wrapper serves no address %s*: %v", marker, got)
	}
	return nil
}

// followerMark is what an informer met up to a moment.
type followerMark struct{ lists, watches, gone, errors, short int }

func (f *nodeFollower) mark() followerMark {
	f.mu.Lock()
	defer f.mu.Unlock()
	return followerMark{lists: len(f.listedFrom), watches: f.watches, gone: len(f.gone), errors: len(f.otherErrors), short: len(f.shortWatches)}
}

func (m followerMark) since(before followerMark) followerMark {
	return followerMark{lists: m.lists - before.lists, watches: m.watches - before.watches, gone: m.gone - before.gone,
		errors: m.errors - before.errors, short: m.short - before.short}
}

func (m followerMark) String() string {
	return fmt.Sprintf("%d lists, %d watches, %d 410 Gone, %d other errors, %d short watches", m.lists, m.watches, m.gone, m.errors, m.short)
}

// phases logs what the clients met in each phase of the test.
type phases struct {
	t         *testing.T
	followers []*nodeFollower
	wrapper   hostWrapper
	start     time.Time
	changes   int
	last      phaseMark
}

type phaseMark struct {
	followers                    []followerMark
	wrapperLists, wrapperWatches float64
}

func newPhases(t *testing.T, followers []*nodeFollower, wrapper hostWrapper) *phases {
	p := &phases{t: t, followers: followers, wrapper: wrapper, start: time.Now()}
	p.last = p.marks()
	return p
}

func (p *phases) marks() phaseMark {
	m := phaseMark{
		wrapperLists:   p.wrapper.counts(p.t, "gridview_wrapper_upstream_lists_total")["nodeendpoints"],
		wrapperWatches: p.wrapper.counts(p.t, "gridview_wrapper_upstream_watches_total")["nodeendpoints"],
	}
	for _, f := range p.followers {
		m.followers = append(m.followers, f.mark())
	}
	return m
}

// end logs the phase named that ended, changes made by then.
func (p *phases) end(name string, changes int) {
	p.t.Helper()
	now := p.marks()
	var clients []string
	for i, f := range p.followers {
		clients = append(clients, fmt.Sprintf("%s: %s", f, now.followers[i].since(p.last.followers[i])))
	}
	p.t.Logf("phase %q: %s, %d changes; %s; gridview-wrapper: %v lists, %v watches of NodeEndpoints",
		name, time.Since(p.start).Round(100*time.Millisecond), changes-p.changes, strings.Join(clients, "; "),
		now.wrapperLists-p.last.wrapperLists, now.wrapperWatches-p.last.wrapperWatches)
	p.start, p.changes, p.last = time.Now(), changes, now
}

// watchTally adds up, by replica, the watches of NodeEndpoints each served
// to their end over all its runs, for the test's log: a replica counts from
// 0 at each start. Read it before a replica stops: what it served since the
// last reading and until its stop (the watches its stop ended) is not
// counted.
type watchTally struct {
	total, seen map[string]float64
}

func newWatchTally(ctx context.Context, t *testing.T) *watchTally {
	t.Helper()
	return &watchTally{total: map[string]float64{}, seen: watchesServed(ctx, t)}
}

func (w *watchTally) read(ctx context.Context, t *testing.T) {
	t.Helper()
	for name, n := range watchesServed(ctx, t) {
		w.total[name] += n - w.seen[name]
		w.seen[name] = n
	}
}

func (w *watchTally) restarted(r *localcluster.GridviewReplica) { w.seen[r.Name] = 0 }
