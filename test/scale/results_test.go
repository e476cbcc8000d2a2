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
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	d := &Delivery{}
	for i := 1; i <= 100; i++ {
		d.Latencies = append(d.Latencies, time.Duration(101-i)*time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 50 * time.Millisecond},
		{0.99, 99 * time.Millisecond},
		{1, 100 * time.Millisecond},
	} {
		if got := d.Percentile(tc.q); got != tc.want {
			t.Errorf("Percentile(%v) = %s, want %s", tc.q, got, tc.want)
		}
	}
	if got := (&Delivery{}).Percentile(0.99); got != 0 {
		t.Errorf("Percentile of nothing = %s, want 0", got)
	}
}

// replicas returns two replicas' results, a leading, b not, at the log
// revisions and resourceVersions given.
func replicas(revisionA int64, rvA string, revisionB int64, rvB string) []*Replica {
	return []*Replica{
		{Name: "a", Leading: true, LogRevision: revisionA, RV: rvA, RSS: 100 * mib, PeakRSS: 200 * mib, CPU: time.Second, Watchers: 3},
		{Name: "b", LogRevision: revisionB, RV: rvB, RSS: 100 * mib, PeakRSS: 200 * mib, CPU: time.Second, Watchers: 4},
	}
}

// TestVerdicts checks the targets of issue 12 against figures on either side.
func TestVerdicts(t *testing.T) {
	delivery := func(kind string, p99 time.Duration, reached int, bytes int64) *Delivery {
		return &Delivery{Kind: kind, Changes: 1, Expected: reached, Done: reached, Reached: reached, Bytes: bytes * int64(reached),
			Latencies: []time.Duration{p99}}
	}
	for _, tc := range []struct {
		name string
		r    Results
		row  string // the start of the row
		want string
	}{
		{name: "node move fast", r: Results{Deliveries: []*Delivery{delivery(KindMove, 90*time.Millisecond, 20, 1000)}}, row: KindMove, want: "PASS"},
		{name: "node move slow", r: Results{Deliveries: []*Delivery{delivery(KindMove, 110*time.Millisecond, 20, 1000)}}, row: KindMove, want: "FAIL"},
		{name: "big flip small", r: Results{Config: Config{Watchers: 10}, Deliveries: []*Delivery{delivery(KindBig, time.Second, 10, 20*kb)}}, row: KindBig, want: "PASS"},
		{name: "big flip large", r: Results{Config: Config{Watchers: 10}, Deliveries: []*Delivery{delivery(KindBig, time.Second, 10, 20*kb+1)}}, row: KindBig, want: "FAIL"},
		{name: "big flip not everywhere", r: Results{Config: Config{Watchers: 10}, Deliveries: []*Delivery{delivery(KindBig, time.Second, 9, kb)}}, row: KindBig, want: "FAIL"},
		{name: "status updates unseen", r: Results{Deliveries: []*Delivery{{Kind: KindStatus, Changes: 1}}}, row: KindStatus, want: "PASS"},
		{name: "status updates seen", r: Results{Deliveries: []*Delivery{{Kind: KindStatus, Changes: 1, Reached: 1}}}, row: KindStatus, want: "FAIL"},
		{name: "resume with 410", r: Results{ResumeNode: "edge-00000", ResumeRV: "7", Resume410: true, ResumeEqual: true}, row: "edge-00000 resuming", want: "FAIL"},
		{name: "resume", r: Results{ResumeNode: "edge-00000", ResumeRV: "7", ResumeEqual: true}, row: "edge-00000 resuming", want: "PASS"},
		{name: "steady memory", r: Results{SteadyRSS: 125, Restarts: []Restart{{RSS: 100}}}, row: "RSS after churn", want: "PASS"},
		{name: "steady memory grew", r: Results{SteadyRSS: 126, Restarts: []Restart{{RSS: 100}}}, row: "RSS after churn", want: "FAIL"},
		{name: "steady memory shrank", r: Results{SteadyRSS: 74, Restarts: []Restart{{RSS: 100}}}, row: "RSS after churn", want: "FAIL"},
		{name: "leader change unnoticed", r: Results{Restarts: []Restart{{LeaderChange: true, Ready: time.Second}}}, row: "leader stopped", want: "PASS"},
		{name: "leader change relisted", r: Results{Restarts: []Restart{{LeaderChange: true, Ready: time.Second, Relists: 1}}}, row: "leader stopped", want: "FAIL"},
		{name: "leader change 410", r: Results{Restarts: []Restart{{LeaderChange: true, Ready: time.Second, Expired: 1}}}, row: "leader stopped", want: "FAIL"},
		{name: "leader change stale", r: Results{Restarts: []Restart{{LeaderChange: true, Ready: time.Second, Stale: 1}}}, row: "leader stopped", want: "FAIL"},
		{name: "leader change, ready in time", r: Results{Restarts: []Restart{{LeaderChange: true, Ready: 10 * time.Second}}}, row: "leader stopped", want: "PASS"},
		{name: "leader change slow to restart", r: Results{Restarts: []Restart{{LeaderChange: true, Ready: 11 * time.Second}}}, row: "leader stopped", want: "FAIL"},
		{name: "replicas alike", r: Results{Replicas: replicas(9, "9", 9, "9")}, row: "b (not leading)", want: "PASS"},
		{name: "replicas alike, the leader's row", r: Results{Replicas: replicas(9, "9", 9, "9")}, row: "a (leading)", want: "PASS"},
		{name: "replica behind in the log", r: Results{Replicas: replicas(9, "9", 8, "9")}, row: "b (not leading)", want: "FAIL"},
		{name: "replica behind in the log, the leader's row", r: Results{Replicas: replicas(9, "9", 8, "9")}, row: "a (leading)", want: "FAIL"},
		{name: "replica numbering otherwise", r: Results{Replicas: replicas(9, "9", 9, "8")}, row: "b (not leading)", want: "FAIL"},
		{name: "replica without a resourceVersion", r: Results{Replicas: replicas(9, "", 9, "")}, row: "b (not leading)", want: "FAIL"},
		{name: "nothing measured", r: Results{}, row: "gridview-apiserver RSS peak", want: "not measured"},
		{name: "ingest current in time", r: Results{WriteTime: time.Minute, IngestCurrent: 30 * time.Second}, row: "every watched node's views current, after the last write", want: "PASS"},
		{name: "ingest current late", r: Results{WriteTime: time.Minute, IngestCurrent: 31 * time.Second}, row: "every watched node's views current, after the last write", want: "FAIL"},
		{
			// From the first write the controllers' minutes count: no 30 s target.
			name: "ingest with workloads current", r: Results{Config: Config{Workloads: true}, WriteTime: time.Minute, IngestCurrent: 5 * time.Minute},
			row: "every watched node's views current, from the first write", want: "PASS",
		},
		{
			name: "ingest with workloads stale", r: Results{Config: Config{Workloads: true}, WriteTime: time.Minute, IngestStale: 1},
			row: "every watched node's views current, from the first write", want: "FAIL",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, line := range strings.Split(tc.r.Markdown(), "\n") {
				if strings.HasPrefix(line, "| "+tc.row) {
					if !strings.HasSuffix(line, "| "+tc.want+" |") {
						t.Errorf("row %q, want verdict %s", line, tc.want)
					}
					return
				}
			}
			t.Errorf("no row %q in\n%s", tc.row, tc.r.Markdown())
		})
	}
}

// TestReplicasRows checks that each replica has a row of its own with its
// figures, and none without a second replica.
func TestReplicasRows(t *testing.T) {
	md := (&Results{Replicas: replicas(12, "34", 12, "34")}).Markdown()
	for _, want := range []string{
		"| a (leading) once the churn was over: log revision, resourceVersion; RSS (peak); CPU-s since its start; watchers it serves | 12, 34; 100 MiB (200 MiB); 1.0; 3 | equal on every replica | PASS |",
		"| b (not leading) once the churn was over: log revision, resourceVersion; RSS (peak); CPU-s since its start; watchers it serves | 12, 34; 100 MiB (200 MiB); 1.0; 4 | equal on every replica | PASS |",
	} {
		if !strings.Contains(md, want+"\n") {
			t.Errorf("no row\n%s\nin\n%s", want, md)
		}
	}
	if md := (&Results{}).Markdown(); strings.Contains(md, "once the churn was over") {
		t.Errorf("a replica's row without replicas measured:\n%s", md)
	}
	if replicasAgree(nil) {
		t.Error("no replicas agree")
	}
}
