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
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gridview/gridview/test/localcluster"
)

// Heartbeats is what the Nodes' simulated kubelets cost in a quiet window:
// the writes they send kube-apiserver, gridview's input log writes and the
// view changes every watcher received, which should be none.
type Heartbeats struct {
	Window                  time.Duration
	LeaseWrites, NodeWrites float64
	LogWrites               float64
	ViewEvents              int64
}

// heartbeats watches the quiet cluster for HeartbeatWindow when kwok plays
// the kubelets: nothing but their Leases and Node status changes then.
func (h *Harness) heartbeats(ctx context.Context) error {
	if !h.cfg.Kubelets {
		return nil
	}
	before, err := h.quietCounts(ctx)
	if err != nil {
		return err
	}
	h.logf("heartbeats: watching the quiet cluster for %s", h.cfg.HeartbeatWindow)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(h.cfg.HeartbeatWindow):
	}
	after, err := h.quietCounts(ctx)
	if err != nil {
		return err
	}
	hb := &Heartbeats{Window: h.cfg.HeartbeatWindow, LeaseWrites: after.leases - before.leases, NodeWrites: after.nodes - before.nodes,
		LogWrites: after.log - before.log, ViewEvents: after.events - before.events}
	h.R.Heartbeats = hb
	h.logf("heartbeats in %s: %.0f Lease and %.0f Node writes to kube-apiserver, %.0f input log writes, %d view events to the watchers",
		hb.Window, hb.LeaseWrites, hb.NodeWrites, hb.LogWrites, hb.ViewEvents)
	if hb.LeaseWrites == 0 {
		h.R.fail("heartbeats: no Lease renewed in %s: kwok did not play the kubelets", hb.Window)
	}
	if hb.ViewEvents > 0 {
		h.R.fail("heartbeats: the kubelets' heartbeats changed %d views in %s", hb.ViewEvents, hb.Window)
	}
	return nil
}

type quietCounts struct {
	leases, nodes, log float64
	events             int64
}

// quietCounts reads kube-apiserver's writes of Leases and Nodes (every
// update and patch it served, status included), gridview's input log
// revision and the view events every watcher received.
func (h *Harness) quietCounts(ctx context.Context) (quietCounts, error) {
	var c quietCounts
	kube, err := getPath(ctx, h.cluster.AdminConfig, "/metrics", nil)
	if err != nil {
		return c, fmt.Errorf("reading kube-apiserver's metrics: %w", err)
	}
	c.leases = sumWrites(string(kube), "leases")
	c.nodes = sumWrites(string(kube), "nodes")
	gridview, err := getPath(ctx, h.gridview.Config(), "/metrics", nil)
	if err != nil {
		return c, fmt.Errorf("reading %s's metrics: %w", h.gridview.Name, err)
	}
	if c.log, err = localcluster.MetricSample(string(gridview), "gridview_nodeendpoints_log_revision"); err != nil {
		return c, err
	}
	for _, w := range h.watchers {
		c.events += w.events.Load()
	}
	return c, nil
}

// sumWrites sums apiserver_request_total over the updates and patches of
// resource.
func sumWrites(metrics, resource string) float64 {
	var sum float64
	for line := range strings.Lines(metrics) {
		write := strings.Contains(line, `verb="PUT"`) || strings.Contains(line, `verb="PATCH"`) || strings.Contains(line, `verb="APPLY"`)
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="`+resource+`"`) || !write {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}
