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
		{name: "leader change, ready after following", r: Results{Restarts: []Restart{{LeaderChange: true, Ready: 55 * time.Second}}}, row: "leader stopped", want: "PASS"},
		{name: "leader change slow to restart", r: Results{Restarts: []Restart{{LeaderChange: true, Ready: 61 * time.Second}}}, row: "leader stopped", want: "FAIL"},
		{name: "follower numbers alike", r: Results{Follower: &Follower{Name: "b", Following: true, RV: "9", LeaderRV: "9"}}, row: "b, following", want: "PASS"},
		{name: "follower numbers otherwise", r: Results{Follower: &Follower{Name: "b", Following: true, RV: "8", LeaderRV: "9"}}, row: "b, following", want: "FAIL"},
		{name: "follower numbers on its own", r: Results{Follower: &Follower{Name: "b", RV: "9", LeaderRV: "9"}}, row: "b, following", want: "FAIL"},
		{name: "nothing measured", r: Results{}, row: "gridview-apiserver RSS peak", want: "not measured"},
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
