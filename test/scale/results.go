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
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Results is what a run measured; zero values are phases not reached.
type Results struct {
	Config   Config
	Scenario string

	Objects   int
	WriteTime time.Duration
	// IngestCurrent is from the last write; with Config.Workloads from the
	// first, the controllers' Pods and slices included, which took
	// ControllersSettled (as seen by a poll every second).
	IngestCurrent      time.Duration
	ControllersSettled time.Duration
	IngestStale        int // watchers not current at the timeout
	IngestCPU          time.Duration
	// Of kube-apiserver (writes, and the aggregator's proxy of every
	// watch) and of the harness (writes, and decoding every watch).
	IngestKubeCPU, IngestHarnessCPU time.Duration
	IngestRSS                       int64
	PeakRSS                         int64 // VmHWM, the whole run before the restart

	Deliveries []*Delivery
	ListPages  int64
	// BigSliceBytes is one slice of the big Service in JSON: what vanilla
	// kube-proxy reads of a flip in it.
	BigSliceBytes int

	ResumeNode, ResumeRV string
	Resume410            bool
	ResumeRelisted       bool
	ResumeEqual          bool
	ResumeCurrent        time.Duration
	SteadyRSS            int64

	WrapperNode  string
	WrapperRSS   int64
	WrapperBytes int64

	Replicas []*Replica // with several replicas, once the churn was over
	Etcd     []EtcdMark
	// Heartbeats, with SCALE_KUBELETS=kwok.
	Heartbeats *Heartbeats

	Restarts []Restart

	Failures []string // correctness checks that failed
}

// fail records a failed correctness check; the phases call it from the
// harness's one goroutine.
func (r *Results) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// Restart is one restart of gridview-apiserver: of the leader, with two
// replicas (LeaderChange).
type Restart struct {
	FlipWhileDown bool
	LeaderChange  bool
	Ready         time.Duration // start to /readyz and the group served
	// Takeover is from the stop to the other replica leading, and Current
	// to every watcher current again, with LeaderChange; otherwise Current
	// is from the start.
	Takeover time.Duration
	Current  time.Duration
	Stale    int
	Relists  int64 // lists the watchers made meanwhile
	Expired  int64 // 410s they got
	RSS      int64 // once current
}

// row is one line of the table.
type row struct{ what, measured, target, verdict string }

// verdict is PASS or FAIL, or empty where no figure was measured.
func verdict(measured bool, ok bool) string {
	switch {
	case !measured:
		return "not measured"
	case ok:
		return "PASS"
	}
	return "FAIL"
}

const (
	kb  = 1000
	mib = 1 << 20
	gib = 1 << 30
)

func mb(n int64) string { return fmt.Sprintf("%d MiB", n/mib) }

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func (r *Results) delivery(kind string) *Delivery {
	for _, d := range r.Deliveries {
		if d.Kind == kind {
			return d
		}
	}
	return nil
}

// rows turns the results into the table, with issue 12's targets.
func (r *Results) rows() []row {
	watchers := r.Config.Watchers
	rows := []row{
		{"all objects written through kube-apiserver", fmt.Sprintf("%s (%d objects)", ms(r.WriteTime), r.Objects), "", ""},
	}
	cpu := fmt.Sprintf("CPU-s from the first write: gridview-apiserver %.1f, kube-apiserver %.1f, the harness's watchers and writers %.1f",
		r.IngestCPU.Seconds(), r.IngestKubeCPU.Seconds(), r.IngestHarnessCPU.Seconds())
	if r.Config.Workloads {
		rows = append(rows,
			row{"the controllers settled, from the first write, as a poll every second saw: every Pod scheduled, Ready and in its Service's slices", ms(r.ControllersSettled), "", ""},
			row{"every watched node's views current, from the first write (the scheduler's, kwok's and the controllers' work included)",
				currentText(r.IngestCurrent, r.IngestStale) + "; " + cpu, "all current", verdict(r.WriteTime > 0, r.IngestStale == 0)})
	} else {
		fromFirst := ""
		if r.IngestStale == 0 {
			fromFirst = " (" + ms(r.WriteTime+r.IngestCurrent) + " from the first write)"
		}
		rows = append(rows, row{"every watched node's views current, after the last write", currentText(r.IngestCurrent, r.IngestStale) + fromFirst + "; " + cpu,
			"≤ 30 s", verdict(r.WriteTime > 0, r.IngestStale == 0 && r.IngestCurrent <= 30*time.Second)})
	}
	rows = append(rows,
		row{"gridview-apiserver RSS peak (VmHWM)", mb(r.PeakRSS), "≤ 1 GiB", verdict(r.PeakRSS > 0, r.PeakRSS <= gib)},
		row{"gridview-apiserver RSS after ingest / after churn", mb(r.IngestRSS) + " / " + mb(r.SteadyRSS), "≤ 1 GiB", verdict(r.SteadyRSS > 0, r.SteadyRSS <= gib)},
	)
	for _, d := range r.Deliveries {
		rows = append(rows, r.deliveryRow(d, watchers))
	}
	if quiet, busy := r.delivery(KindNone), r.delivery(KindNonePaged); quiet != nil && busy != nil {
		q, b := quiet.Percentile(0.99), busy.Percentile(0.99)
		rows = append(rows, row{"paged list (limit=500) looping: unannotated flip p99, quiet → looping",
			fmt.Sprintf("%s → %s (%d pages listed)", ms(q), ms(b), r.ListPages), "≤ 2× quiet", verdict(len(busy.Latencies) > 0, b <= 2*q)})
	}
	if r.ResumeRV != "" {
		lastChange := "the last change"
		if r.Config.Workloads {
			lastChange = "the EndpointSlice controller's last write was read back"
		}
		rows = append(rows, row{fmt.Sprintf("%s resuming from resourceVersion %s after 1,000 changes", r.ResumeNode, r.ResumeRV),
			fmt.Sprintf("410: %t, relisted: %t, every watcher equal to the model: %t (%s after %s)", r.Resume410, r.ResumeRelisted, r.ResumeEqual, ms(r.ResumeCurrent), lastChange),
			"no 410", verdict(true, !r.Resume410 && r.ResumeEqual)})
	}
	if r.WrapperRSS > 0 {
		rows = append(rows, row{"gridview-wrapper of " + r.WrapperNode + ": RSS synced; upstream bytes",
			fmt.Sprintf("%s; %.1f MB", mb(r.WrapperRSS), float64(r.WrapperBytes)/1e6), "≤ 64 MB", verdict(true, r.WrapperRSS <= 64*mib)})
	}
	agree := replicasAgree(r.Replicas)
	for _, rep := range r.Replicas {
		leading := "not leading"
		if rep.Leading {
			leading = "leading"
		}
		rows = append(rows, row{rep.Name + " (" + leading + ") once the churn was over: log revision, resourceVersion; RSS (peak); CPU-s since its start; watchers it serves",
			fmt.Sprintf("%d, %s; %s (%s); %.1f; %.0f", rep.LogRevision, rep.RV, mb(rep.RSS), mb(rep.PeakRSS), rep.CPU.Seconds(), rep.Watchers),
			"equal on every replica", verdict(true, agree)})
	}
	rows = append(rows, etcdRows(r.Etcd)...)
	if hb := r.Heartbeats; hb != nil {
		rows = append(rows, row{fmt.Sprintf("kwok's kubelets in a quiet %s (a Lease renewed every 10 s, Node status every 10 to 20 min): Lease and Node writes to kube-apiserver; gridview's input log writes; view events to every watcher", hb.Window),
			fmt.Sprintf("%.0f (%.1f/s) and %.0f; %.0f; %d", hb.LeaseWrites, hb.LeaseWrites/hb.Window.Seconds(), hb.NodeWrites, hb.LogWrites, hb.ViewEvents),
			"no view event", verdict(hb.LeaseWrites > 0, hb.ViewEvents == 0)})
	}
	for _, rs := range r.Restarts {
		rows = append(rows, restartRow(rs))
	}
	if len(r.Restarts) > 0 && !r.Restarts[0].LeaderChange {
		fresh := r.Restarts[0].RSS
		rows = append(rows, row{"RSS after churn vs fresh after a restart", fmt.Sprintf("%s vs %s", mb(r.SteadyRSS), mb(fresh)), "within 25 %",
			verdict(fresh > 0 && r.SteadyRSS > 0, math.Abs(float64(r.SteadyRSS-fresh)) <= 0.25*float64(fresh))})
	}
	return rows
}

// restartRow renders one restart: with one replica, ready within 10 s;
// with two, a leader change that no watcher notices but for a new watch
// (every replica numbers its views by the log's etcd revisions), and the
// stopped replica ready again, within 10 s, once it read the log up to its
// latest write.
func restartRow(rs Restart) row {
	flipped := ""
	if rs.FlipWhileDown {
		flipped = ", an endpoint flipped while down"
	}
	if rs.LeaderChange {
		return row{"leader stopped (SIGTERM)" + flipped + ": the other replica leads; every watcher current; the stopped one ready again",
			fmt.Sprintf("%s; %s (%d relists after %d 410s); %s, RSS then %s", ms(rs.Takeover), currentText(rs.Current, rs.Stale), rs.Relists, rs.Expired, ms(rs.Ready), mb(rs.RSS)),
			"no relist, ready ≤ 10 s", verdict(true, rs.Stale == 0 && rs.Relists == 0 && rs.Expired == 0 && rs.Ready <= 10*time.Second)}
	}
	return row{"restart" + flipped + ": to ready (start to group served); to every watcher current",
		fmt.Sprintf("%s; %s (%d relists after %d 410s); RSS then %s", ms(rs.Ready), currentText(rs.Current, rs.Stale), rs.Relists, rs.Expired, mb(rs.RSS)),
		"ready ≤ 10 s", verdict(true, rs.Ready <= 10*time.Second)}
}

// currentText says how long views took to be current, or how many watchers
// never got there.
func currentText(took time.Duration, stale int) string {
	if stale > 0 {
		return fmt.Sprintf("never: %d watchers stale at the timeout", stale)
	}
	return ms(took)
}

// deliveryRow renders one kind of change with its target.
func (r *Results) deliveryRow(d *Delivery, watchers int) row {
	measured := fmt.Sprintf("%d change(s): %d/%d watchers current, %d reached, %.1f KB each; p50 %s, p99 %s, max %s; %.2f CPU-s",
		d.Changes, d.Done, d.Expected, d.Reached, float64(d.BytesPerReached())/kb,
		ms(d.Percentile(0.5)), ms(d.Percentile(0.99)), ms(d.Percentile(1)), d.CPU.Seconds())
	ok := d.Done == d.Expected
	target := "all current"
	switch d.Kind {
	case KindMove:
		target, ok = "p99 ≤ 100 ms", ok && d.Percentile(0.99) <= 100*time.Millisecond
	case KindNone:
		target, ok = "p99 ≤ 500 ms", ok && d.Percentile(0.99) <= 500*time.Millisecond
	case KindStatus:
		measured = fmt.Sprintf("%d times %d updates: %d watchers reached; %.2f CPU-s", d.Changes, r.Config.Scale.StatusUpdates(), d.Reached, d.CPU.Seconds())
		target, ok = "no event", d.Reached == 0
	case KindBig:
		measured += fmt.Sprintf(" (vanilla kube-proxy: the slice, %.1f KB)", float64(r.BigSliceBytes)/kb)
		target = fmt.Sprintf("≤ 20 KB each, all %d reached, p99 ≤ 1 s", watchers)
		ok = ok && d.BytesPerReached() <= 20*kb && d.Reached == watchers*d.Changes && d.Percentile(0.99) <= time.Second
	}
	what := d.Kind
	if r.Config.Workloads && strings.HasPrefix(d.Kind, "flip") {
		what += ", from the Pod's Ready patch, the EndpointSlice controller included"
	}
	return row{what, measured, target, verdict(d.Changes > 0, ok)}
}

// Text renders the table aligned, for the log.
func (r *Results) Text() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHAT\tMEASURED\tTARGET\t")
	for _, row := range r.rows() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row.what, row.measured, row.target, row.verdict)
	}
	tw.Flush()
	return r.Scenario + "\n" + b.String()
}

// Markdown renders the table for docs/performance.md.
func (r *Results) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n| what | measured | target | |\n| --- | --- | --- | --- |\n", r.Scenario)
	for _, row := range r.rows() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.what, row.measured, row.target, row.verdict)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "\ncorrectness: %s", f)
	}
	return b.String()
}
