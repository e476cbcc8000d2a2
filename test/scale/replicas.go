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
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/gridview/gridview/test/localcluster"
)

// Follower is what the replica that follows the leader's inputs measured
// once the churn was over (SCALE_REPLICAS=2).
type Follower struct {
	Name         string
	RSS, PeakRSS int64
	CPU          time.Duration // since it started, before the ingest
	Following    bool          // its gridview_nodeendpoints_following_leader
	// Its views' resourceVersion and the leader's, once both were quiet:
	// equal when it numbered every change as the leader did.
	RV, LeaderRV string
	// The watches it served itself, as the leader's follower, and the reads
	// it sent to the leader.
	WatchesServed, ReadsForwarded float64
}

// leaderTimeout bounds how long the harness waits for one replica to lead:
// a Lease that was not released expires after 15 s.
const leaderTimeout = time.Minute

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

// checkFollower reads, once the churn is over, whether the other replica
// follows the leader and numbered every change as it did, and its memory
// and CPU.
func (h *Harness) checkFollower(ctx context.Context) error {
	if h.cfg.Replicas == 1 {
		return nil
	}
	var follower *localcluster.GridviewReplica
	for _, r := range h.cluster.GridviewReplicas() {
		if r != h.gridview && r.Running() {
			follower = r
		}
	}
	if follower == nil {
		return fmt.Errorf("no replica runs beside the leader %s", h.gridview.Name)
	}
	f := &Follower{Name: follower.Name}
	h.R.Follower = f
	following, err := metricValue(ctx, follower, "gridview_nodeendpoints_following_leader")
	if err != nil {
		return err
	}
	f.Following = following == 1
	// The follower applies what the leader sends after the leader applied
	// it: it may be a moment behind.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if f.LeaderRV, err = ownViewsRV(ctx, h.gridview); err != nil {
			return err
		}
		if f.RV, err = ownViewsRV(ctx, follower); err != nil {
			return err
		}
		if f.RV == f.LeaderRV || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	st, err := replicaStat(follower)
	if err != nil {
		return err
	}
	f.RSS, f.PeakRSS, f.CPU = st.RSS, st.PeakRSS, st.CPU
	metrics, err := getPath(ctx, follower.Config(), "/metrics", nil)
	if err != nil {
		return fmt.Errorf("%s: %w", follower.Name, err)
	}
	// A count of labels never counted has no sample: none.
	if f.WatchesServed, err = localcluster.MetricSample(string(metrics), `gridview_apiserver_leader_reads_total{served_by="follower"}`); err != nil && !errors.Is(err, localcluster.ErrNoSample) {
		return err
	}
	if f.ReadsForwarded, err = localcluster.MetricSample(string(metrics), `gridview_apiserver_leader_reads_total{served_by="leader"}`); err != nil && !errors.Is(err, localcluster.ErrNoSample) {
		return err
	}
	h.logf("%s: following the leader %t, resourceVersion %s (the leader's %s), RSS %s (peak %s), %.1f CPU-s; %.0f watches served itself, %.0f reads sent to the leader",
		f.Name, f.Following, f.RV, f.LeaderRV, mb(f.RSS), mb(f.PeakRSS), f.CPU.Seconds(), f.WatchesServed, f.ReadsForwarded)
	if !f.Following || f.RV != f.LeaderRV {
		h.R.fail("%s does not number changes as the leader %s: following %t, resourceVersion %s, the leader's %s", f.Name, h.gridview.Name, f.Following, f.RV, f.LeaderRV)
	}
	return nil
}

// awaitFollowing waits until a replica follows the leader's inputs, at most
// 30 s.
func awaitFollowing(ctx context.Context, r *localcluster.GridviewReplica) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		following, err := metricValue(ctx, r, "gridview_nodeendpoints_following_leader")
		if err == nil && following == 1 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gridview_nodeendpoints_following_leader %v (%v) after 30 s", following, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ownViewsRV reads the resourceVersion of one replica's own views: a
// replica serves a read marked as forwarded itself.
func ownViewsRV(ctx context.Context, r *localcluster.GridviewReplica) (string, error) {
	client, err := kubernetes.NewForConfig(r.Config())
	if err != nil {
		return "", err
	}
	data, err := client.Discovery().RESTClient().Get().AbsPath(nodeEndpointsPath).Param("limit", "1").
		SetHeader("X-Gridview-Forwarded-By", "scale-harness").DoRaw(ctx)
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
