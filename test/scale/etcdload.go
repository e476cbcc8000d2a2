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
	"errors"
	"fmt"
	"time"

	"github.com/gridview/gridview/test/localcluster"
)

// EtcdMark is what gridview's etcd held at the end of a phase, as the
// measured replica's metrics say: the revision its input log reached (etcd's
// revision, which every write transaction moves by one: the writer's batches
// of inputs, ServiceGrids, elections) and the size of the database file.
type EtcdMark struct {
	Phase    string
	At       time.Time
	Revision float64
	DBBytes  float64
}

// markEtcd returns a phase that records gridview's etcd as it is, named
// phase. A replica that serves no figure is logged, not a harness error.
func (h *Harness) markEtcd(phase string) func(context.Context) error {
	return func(ctx context.Context) error {
		text, err := getPath(ctx, h.gridview.Config(), "/metrics", nil)
		if err != nil {
			h.logf("gridview's etcd %s: reading %s's metrics: %v", phase, h.gridview.Name, err)
			return nil
		}
		revision, err := localcluster.MetricSample(string(text), "gridview_nodeendpoints_log_revision")
		if err != nil {
			h.logf("gridview's etcd %s: %v", phase, err)
			return nil
		}
		// gridview's one etcd; the first scrape may come before its monitor
		// reports, and reads no size.
		size, err := localcluster.MetricSample(string(text), `apiserver_storage_size_bytes{storage_cluster_id="etcd-0"}`)
		if err != nil && !errors.Is(err, localcluster.ErrNoSample) {
			h.logf("gridview's etcd %s: %v", phase, err)
		}
		mark := EtcdMark{Phase: phase, At: time.Now(), Revision: revision, DBBytes: size}
		h.R.Etcd = append(h.R.Etcd, mark)
		h.logf("gridview's etcd %s: revision %.0f, database %.1f MiB", phase, mark.Revision, mark.DBBytes/mib)
		return nil
	}
}

// etcdRows renders the write rate between consecutive marks and the
// database's size at each.
func etcdRows(marks []EtcdMark) []row {
	var rows []row
	for i := 1; i < len(marks); i++ {
		from, to := marks[i-1], marks[i]
		took := to.At.Sub(from.At)
		rows = append(rows, row{
			fmt.Sprintf("gridview's etcd from %s to %s: write transactions (rate); database size at the end", from.Phase, to.Phase),
			fmt.Sprintf("%.0f in %s (%.1f/s); %.1f MiB", to.Revision-from.Revision, took.Round(100*time.Millisecond),
				(to.Revision-from.Revision)/took.Seconds(), to.DBBytes/mib),
			"reported", "",
		})
	}
	return rows
}
