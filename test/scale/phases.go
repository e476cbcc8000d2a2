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

package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gridview/gridview/pkg/wrapper"
	"github.com/gridview/gridview/test/localcluster"
)

// Kinds of change, as the table names them.
const (
	KindMove      = "node moved to another unit"
	KindAnyMatch  = "flip: any-match 20-endpoint Service"
	KindOrdered   = "flip: ordered 20-endpoint Service"
	KindNone      = "flip: unannotated 20-endpoint Service"
	KindBig       = "flip: the unannotated big Service"
	KindAnnotate  = "Service annotation change (any-match to ordered)"
	KindNonePaged = "flip: unannotated 20-endpoint Service, paged list looping"
	KindStatus    = "Node status updates, a tenth of the nodes (kubelets' 30 s)"
)

// changes measures each kind of change Repeats times, once the servers are
// quiet after the ingest.
func (h *Harness) changes(ctx context.Context) error {
	if err := h.settle(ctx); err != nil {
		return err
	}
	services := func(mode Mode, big bool) func() change {
		return func() change { return h.flip(h.m.ServicesOf(mode, big)) }
	}
	for _, kind := range []struct {
		name string
		make func() change
	}{
		{KindMove, h.moveNode},
		{KindAnyMatch, services(ModeAnyMatch, false)},
		{KindOrdered, services(ModeOrdered, false)},
		{KindNone, services(ModeNone, false)},
		{KindBig, services(ModeNone, true)},
		{KindAnnotate, h.annotate},
		{KindStatus, h.statusUpdates},
	} {
		d := &Delivery{Kind: kind.name}
		stopProfile := h.profileChanges(ctx, len(h.R.Deliveries))
		for range h.cfg.Repeats {
			if err := h.measure(ctx, d, kind.make()); err != nil {
				stopProfile()
				return err
			}
		}
		stopProfile()
		h.logf("%s: %d/%d watchers current, %d reached, %d B each, p50 %s p99 %s max %s, %.2f CPU-s",
			d.Kind, d.Done, d.Expected, d.Reached, d.BytesPerReached(), d.Percentile(0.5), d.Percentile(0.99), d.Percentile(1), d.CPU.Seconds())
		if d.Done < d.Expected {
			h.R.fail("%s: %d of %d watchers did not reach the model's views within %s", d.Kind, d.Expected-d.Done, d.Expected, probeTimeout)
		}
		h.R.Deliveries = append(h.R.Deliveries, d)
	}
	return h.pagedList(ctx)
}

// pagedList measures the unannotated flip again while a cluster-wide list
// pages through every view (limit=500) in a loop.
func (h *Harness) pagedList(ctx context.Context) error {
	loopCtx, stop := context.WithCancel(ctx)
	var pages atomic.Int64
	var wg sync.WaitGroup
	var failures map[string]int
	wg.Go(func() { failures = h.pagedListLoop(loopCtx, &pages) })
	d := &Delivery{Kind: KindNonePaged}
	stopProfile := h.profileChanges(ctx, len(h.R.Deliveries))
	var err error
	for range h.cfg.Repeats {
		if err = h.measure(ctx, d, h.flip(h.m.ServicesOf(ModeNone, false))); err != nil {
			break
		}
	}
	stopProfile()
	stop()
	wg.Wait()
	h.R.Deliveries = append(h.R.Deliveries, d)
	h.R.ListPages = pages.Load()
	h.logf("%s: p99 %s, %d pages listed meanwhile; pages that failed, by why: %v", d.Kind, d.Percentile(0.99), h.R.ListPages, failures)
	if h.R.ListPages == 0 {
		h.R.fail("the paged list listed no page in %d changes: %v", h.cfg.Repeats, failures)
	}
	return err
}

// pagedListLoop lists every view, a page at a time, until ctx ends, and
// returns the pages that failed, by status or error.
func (h *Harness) pagedListLoop(ctx context.Context, pages *atomic.Int64) map[string]int {
	failures := map[string]int{}
	cont := ""
	for ctx.Err() == nil {
		query := url.Values{"limit": {"500"}}
		if cont != "" {
			query.Set("continue", cont)
		}
		resp, err := h.c.get(ctx, nodeEndpointsPath, query, EncodingJSON)
		if err != nil {
			if ctx.Err() == nil {
				failures[err.Error()]++
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		// Only the continue token is needed; the items are skipped.
		var list struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		switch {
		case resp.StatusCode == http.StatusOK && err == nil:
			pages.Add(1)
			cont = list.Metadata.Continue
		case ctx.Err() != nil:
		default:
			failures[fmt.Sprintf("%s (decoding: %v)", resp.Status, err)]++
			cont = "" // an expired token starts over
		}
		resp.Body.Close()
	}
	return failures
}

// resume stops edge-00000's watcher, makes 1,000 changes — flips in
// random Services, one in ten of an unannotated one and one in a hundred of
// the big one, each of which changes every node's views — and resumes the
// watch from the resourceVersion it had.
func (h *Harness) resume(ctx context.Context) error {
	const changes = 1000
	w := h.watchers[0]
	w.Stop()
	rv, expired, lists := w.ResourceVersion(), w.expired.Load(), w.lists.Load()
	big, unannotated := h.m.ServicesOf(ModeNone, true)[0], h.m.ServicesOf(ModeNone, false)
	var jobs []job
	touched := map[*Service]bool{}
	for i := range changes {
		var svc *Service
		switch {
		case i%100 == 0:
			svc = big
		case i%10 == 0:
			svc = unannotated[h.rng.IntN(len(unannotated))]
		default:
			svc = h.m.Services[h.rng.IntN(len(h.m.Services)-1)]
		}
		jobs = append(jobs, h.flipEndpoint(svc))
		touched[svc] = true
	}
	totals := h.expected()
	if err := runJobs(ctx, jobs); err != nil {
		return fmt.Errorf("making %d changes: %w", changes, err)
	}
	// With Workloads the last change is the EndpointSlice controller's
	// last slice write, which readBack waits for.
	if err := h.readBack(ctx, slices.Collect(maps.Keys(touched))...); err != nil {
		return err
	}
	lastWrite := time.Now()
	w.Start(ctx)
	current, stale := h.waitCurrent(ctx, totals, lastWrite, fmt.Sprintf("after %d changes and %s's resume", changes, w.Node))
	r := h.R
	r.ResumeNode, r.ResumeRV = w.Node, rv
	r.Resume410 = w.expired.Load() > expired
	r.ResumeRelisted = w.lists.Load() > lists
	r.ResumeEqual = stale == 0
	r.ResumeCurrent = current
	if r.Resume410 {
		w.mu.Lock()
		why := w.lastExpired
		w.mu.Unlock()
		r.fail("%s got 410 resuming from resourceVersion %s after %d changes: %v", w.Node, rv, changes, why)
	}
	st, err := h.proc()
	if err != nil {
		return err
	}
	r.SteadyRSS, r.PeakRSS = st.RSS, max(r.PeakRSS, st.PeakRSS)
	return nil
}

// wrapper runs gridview-wrapper for edge-00000 until it has synced and
// reads its RSS and the bytes it read upstream (its own metric).
func (h *Harness) wrapper(ctx context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	cacheDir, err := os.MkdirTemp("", "gridview-scale-wrapper-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cacheDir)
	node := h.m.Nodes[0].Name
	proc, err := h.cluster.StartWrapper(ctx, node, addr, cacheDir)
	if err != nil {
		return fmt.Errorf("starting gridview-wrapper for %s: %w", node, err)
	}
	defer func() {
		if err := proc.Stop(); err != nil {
			h.logf("stopping gridview-wrapper: %v", err)
		}
	}()
	client, err := localcluster.WrapperClient(wrapper.ClientCredentialsDir(cacheDir))
	if err != nil {
		return err
	}
	// Synced: what it read upstream stopped growing for three polls.
	var last, same int64
	for deadline := time.Now().Add(2 * time.Minute); same < 3 && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		n, err := wrapperUpstreamBytes(ctx, client, addr)
		if err != nil {
			return err
		}
		if n > 0 && n == last {
			same++
		} else {
			same = 0
		}
		last = n
	}
	st, err := localcluster.ReadProcStat(proc.Pid())
	if err != nil {
		return err
	}
	h.R.WrapperNode, h.R.WrapperRSS, h.R.WrapperBytes = node, st.RSS, last
	h.logf("gridview-wrapper for %s: RSS %d MiB, %d bytes read upstream", node, st.RSS>>20, last)
	return nil
}

// wrapperUpstreamBytes reads gridview_wrapper_upstream_received_bytes_total.
func wrapperUpstreamBytes(ctx context.Context, client *http.Client, addr string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("reading the wrapper's metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("reading the wrapper's metrics: %w", err)
	}
	value, err := localcluster.MetricSample(string(body), "gridview_wrapper_upstream_received_bytes_total")
	return int64(value), err
}

// restarts restarts gridview-apiserver up to twice (Config.Restarts): as
// is, and with an endpoint of the big Service flipped while it is down.
// With several replicas it is the leader that restarts, as in a rolling update.
func (h *Harness) restarts(ctx context.Context) error {
	for _, flip := range []bool{false, true}[:h.cfg.Restarts] {
		rs, err := h.restart(ctx, flip)
		if err != nil {
			return err
		}
		h.R.Restarts = append(h.R.Restarts, rs)
	}
	return nil
}

// restart stops the leading gridview-apiserver, optionally flips an endpoint
// while it is down, and starts it again, timing until it is ready (its
// /readyz, then its group served through the aggregator) and until every
// watcher has watched again and is current. With one replica the watchers
// wait for the restarted process; with two, those it served watch again on
// the other replica, which takes over the writing of the log, from the
// resourceVersion they had, and the stopped one starts again once they are
// current, reading the log as the other does.
func (h *Harness) restart(ctx context.Context, flip bool) (Restart, error) {
	leaderChange := h.cfg.Replicas > 1
	// A watcher the other replica serves need not watch again when the
	// leader goes: with several replicas, a change written while the leader is
	// down, by the replica that took over, tells when every watcher is
	// current.
	flip = flip || leaderChange
	rs := Restart{FlipWhileDown: flip, LeaderChange: leaderChange}
	lists, expired := h.totalLists(), h.totalExpired()
	watches := make(map[*Watcher]int64, len(h.watchers))
	for _, w := range h.watchers {
		watches[w] = w.watches.Load()
	}
	var flipWrite func(context.Context) error
	if flip {
		big := h.m.ServicesOf(ModeNone, true)[0]
		flipWrite = h.flipWrite(big)
	}
	totals := h.expected()
	stopped := h.gridview
	stoppedAt := time.Now()
	if err := stopped.Stop(); err != nil {
		return rs, err
	}
	if flipWrite != nil {
		if err := flipWrite(ctx); err != nil {
			return rs, fmt.Errorf("flipping an endpoint while %s is down: %w", stopped.Name, err)
		}
	}
	what := fmt.Sprintf("after a restart of %s (flip while down: %t)", stopped.Name, flip)
	if rs.LeaderChange {
		if err := h.findLeader(ctx); err != nil {
			return rs, err
		}
		rs.Takeover = time.Since(stoppedAt)
		rs.Current, rs.Stale = h.waitCurrent(ctx, totals, stoppedAt, what)
		start := time.Now()
		if err := stopped.Start(ctx); err != nil {
			return rs, fmt.Errorf("starting %s again: %w", stopped.Name, err)
		}
		rs.Ready = time.Since(start)
		// The next leader change takes the other replica away: this one's
		// views must have read the log by then, or the watchers that move
		// to it wait.
		if err := awaitReady(ctx, stopped); err != nil {
			h.R.fail("%s started again but is not ready: %v", stopped.Name, err)
		}
	} else {
		start := time.Now()
		if err := stopped.Start(ctx); err != nil {
			return rs, fmt.Errorf("restarting %s: %w", stopped.Name, err)
		}
		rs.Ready = time.Since(start)
		rs.Current, rs.Stale = h.waitCurrentAnd(ctx, totals, start, what, func(w *Watcher) bool {
			return w.watches.Load() > watches[w]
		})
	}
	rs.Relists, rs.Expired = h.totalLists()-lists, h.totalExpired()-expired
	if rs.Expired > 0 {
		for _, w := range h.watchers {
			w.mu.Lock()
			err := w.lastExpired
			w.mu.Unlock()
			if err != nil {
				h.logf("after the restart, %s: %v", w.Node, err)
				break
			}
		}
		if rs.LeaderChange {
			h.R.fail("%d watchers got 410 when %s took over from %s", rs.Expired, h.gridview.Name, stopped.Name)
		}
	}
	st, err := h.proc()
	if err != nil {
		return rs, err
	}
	rs.RSS = st.RSS
	return rs, nil
}

func (h *Harness) totalLists() int64 {
	var n int64
	for _, w := range h.watchers {
		n += w.lists.Load()
	}
	return n
}

func (h *Harness) totalExpired() int64 {
	var n int64
	for _, w := range h.watchers {
		n += w.expired.Load()
	}
	return n
}
