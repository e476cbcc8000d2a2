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
	"strings"
	"time"

	"github.com/gridview/gridview/test/localcluster"
)

// Replica is what one gridview-apiserver replica measured once the churn
// was over (SCALE_REPLICAS=2). Every replica reads gridview's input log
// from etcd and derives and serves its views itself: all of them must be
// at the same revision of the log, with the same resourceVersion.
type Replica struct {
	Name         string
	Leading      bool // its gridview_apiserver_leading: it writes the log
	RSS, PeakRSS int64
	CPU          time.Duration // since it started, before the ingest
	// LogRevision is its gridview_nodeendpoints_log_revision, the revision
	// of the log its views are at, and RV its own views' resourceVersion.
	LogRevision int64
	RV          string
	Watchers    float64 // its gridview_nodeendpoints_watchers
}

// replicasAgree says whether every replica is at the same revision of the
// log and numbers its views alike.
func replicasAgree(replicas []*Replica) bool {
	for _, r := range replicas {
		if r.LogRevision != replicas[0].LogRevision || r.RV != replicas[0].RV || r.RV == "" {
			return false
		}
	}
	return len(replicas) > 0
}

// leaderTimeout bounds how long the harness waits for one replica to lead:
// the etcd session of a replica that stopped without revoking it expires
// after 10 s.
const leaderTimeout = time.Minute

// replicasTimeout bounds how long the replicas may take to agree once the
// churn is over: each reads the log on its own, and one may be a moment
// behind.
const replicasTimeout = 30 * time.Second

// findLeader sets h.gridview to the replica that leads, waiting until
// exactly one of the running replicas says it does.
func (h *Harness) findLeader(ctx context.Context) error {
	if h.cfg.Replicas == 1 {
		return nil
	}
	deadline := time.Now().Add(leaderTimeout)
	for {
		var leaders []*localcluster.GridviewReplica
		var errs []string
		for _, r := range h.cluster.GridviewReplicas() {
			if !r.Running() {
				continue
			}
			leads, err := metricValue(ctx, r, "gridview_apiserver_leading")
			if err != nil {
				errs = append(errs, err.Error())
			}
			if leads == 1 {
				leaders = append(leaders, r)
			}
		}
		if len(leaders) == 1 {
			if leaders[0] != h.gridview {
				h.logf("%s leads", leaders[0].Name)
			}
			h.gridview = leaders[0]
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d replicas lead after %s (want 1): %s", len(leaders), leaderTimeout, strings.Join(errs, "; "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// checkReplicas reads, once the churn is over, whether every replica reached
// the same revision of the log and numbers its views alike, waiting at most
// replicasTimeout, and each one's memory, CPU and watchers.
func (h *Harness) checkReplicas(ctx context.Context) error {
	if h.cfg.Replicas == 1 {
		return nil
	}
	var running []*localcluster.GridviewReplica
	for _, r := range h.cluster.GridviewReplicas() {
		if r.Running() {
			running = append(running, r)
		}
	}
	if len(running) != h.cfg.Replicas {
		return fmt.Errorf("%d replicas run, want %d", len(running), h.cfg.Replicas)
	}
	start := time.Now()
	var replicas []*Replica
	for {
		replicas = replicas[:0]
		for _, r := range running {
			revision, err := metricValue(ctx, r, "gridview_nodeendpoints_log_revision")
			if err != nil {
				return err
			}
			rv, err := ownViewsRV(ctx, r)
			if err != nil {
				return err
			}
			replicas = append(replicas, &Replica{Name: r.Name, LogRevision: int64(revision), RV: rv})
		}
		if replicasAgree(replicas) || time.Since(start) > replicasTimeout {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	took := time.Since(start)
	for i, r := range running {
		rep := replicas[i]
		st, err := replicaStat(r)
		if err != nil {
			return err
		}
		rep.RSS, rep.PeakRSS, rep.CPU = st.RSS, st.PeakRSS, st.CPU
		leading, err := metricValue(ctx, r, "gridview_apiserver_leading")
		if err != nil {
			return err
		}
		rep.Leading = leading == 1
		if rep.Watchers, err = metricValue(ctx, r, "gridview_nodeendpoints_watchers"); err != nil {
			return err
		}
		h.logf("%s (leading: %t): log revision %d, resourceVersion %s, RSS %s (peak %s), %.1f CPU-s, %.0f watchers",
			rep.Name, rep.Leading, rep.LogRevision, rep.RV, mb(rep.RSS), mb(rep.PeakRSS), rep.CPU.Seconds(), rep.Watchers)
	}
	h.R.Replicas = replicas
	if !replicasAgree(replicas) {
		var at []string
		for _, rep := range replicas {
			at = append(at, fmt.Sprintf("%s at log revision %d, resourceVersion %s", rep.Name, rep.LogRevision, rep.RV))
		}
		h.R.fail("the replicas' views differ %s after the churn: %s", replicasTimeout, strings.Join(at, "; "))
	} else {
		h.logf("the replicas agree within %s of the churn's end", took.Round(time.Millisecond))
	}
	return nil
}

// awaitReady waits until a replica's own /readyz passes, at most 30 s:
// its views then read the log up to its latest write at its start.
func awaitReady(ctx context.Context, r *localcluster.GridviewReplica) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := getPath(ctx, r.Config(), "/readyz", nil)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after 30 s: %w", r.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ownViewsRV reads the resourceVersion of one replica's views, listing
// from it directly rather than through the aggregator.
func ownViewsRV(ctx context.Context, r *localcluster.GridviewReplica) (string, error) {
	data, err := getPath(ctx, r.Config(), nodeEndpointsPath, map[string]string{"limit": "1"})
	if err != nil {
		return "", fmt.Errorf("listing the views of %s: %w", r.Name, err)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return "", fmt.Errorf("reading the list of %s: %w", r.Name, err)
	}
	return list.Metadata.ResourceVersion, nil
}

// metricValue reads an unlabelled sample of a replica's /metrics.
func metricValue(ctx context.Context, r *localcluster.GridviewReplica, name string) (float64, error) {
	text, err := getPath(ctx, r.Config(), "/metrics", nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", r.Name, err)
	}
	value, err := localcluster.MetricSample(string(text), name)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", r.Name, err)
	}
	return value, nil
}

// replicaStat reads a replica's memory and CPU.
func replicaStat(r *localcluster.GridviewReplica) (localcluster.ProcStat, error) {
	pid, ok := r.Pid()
	if !ok {
		return localcluster.ProcStat{}, fmt.Errorf("%s is not running", r.Name)
	}
	return localcluster.ReadProcStat(pid)
}
