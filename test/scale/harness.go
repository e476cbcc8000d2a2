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
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/test/localcluster"
)

// Harness runs the scenario against a started local cluster.
type Harness struct {
	cfg     Config
	cluster *localcluster.Cluster
	// gridview is the replica that leads, whose memory and CPU the table
	// reports; with one replica, the cluster's own.
	gridview *localcluster.GridviewReplica
	m        *Model
	kube     kubernetes.Interface
	c        *client
	watchers []*Watcher
	rng      *rand.Rand
	logf     func(format string, args ...any)
	// overLimit is set once gridview-apiserver's RSS passed Config.RSSLimit.
	overLimit bool
	R         *Results
}

// NewHarness prepares the clients: writes at full speed in protobuf, and
// one transport for every watcher.
func NewHarness(cfg Config, cluster *localcluster.Cluster, logf func(string, ...any)) (*Harness, error) {
	writeConfig := rest.CopyConfig(cluster.AdminConfig)
	writeConfig.QPS, writeConfig.Burst = 5000, 10000
	writeConfig.ContentType = "application/vnd.kubernetes.protobuf"
	kube, err := kubernetes.NewForConfig(writeConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the writer's client: %w", err)
	}
	rt, err := rest.TransportFor(rest.CopyConfig(cluster.AdminConfig))
	if err != nil {
		return nil, fmt.Errorf("creating the watchers' transport: %w", err)
	}
	m := Generate(cfg.Scale, cfg.Seed)
	if cfg.Workloads {
		m.UseWorkloads()
	}
	h := &Harness{
		cfg: cfg, cluster: cluster, gridview: cluster.GridviewReplicas()[0], m: m, kube: kube, logf: logf,
		c:   &client{http: &http.Client{Transport: rt}, base: cluster.AdminConfig.Host, names: newNames(m), namespace: m.Namespace, encoding: cfg.Encoding},
		rng: rand.New(rand.NewPCG(cfg.Seed, 1)),
		R:   &Results{Config: cfg},
	}
	// With Workloads, awaitWorkloads reads a slice the controller wrote.
	if big := m.ServicesOf(ModeNone, true)[0]; !cfg.Workloads {
		if data, err := json.Marshal(m.SliceObject(big, big.Slices[0])); err == nil {
			h.R.BigSliceBytes = len(data)
		}
	}
	for _, n := range cfg.WatchedNodes() {
		h.watchers = append(h.watchers, newWatcher(h.c, m.Nodes[n].Name, n))
	}
	return h, nil
}

// Run runs every phase in order; an error is the harness's own (a write
// refused, the cluster gone), never a missed target.
func (h *Harness) Run(ctx context.Context) error {
	h.R.Scenario = h.scenario()
	h.logf("%s", h.R.Scenario)
	for _, phase := range []func(context.Context) error{h.findLeader, h.startWatchers, h.markEtcd("before the ingest"), h.ingest,
		h.markEtcd("every watcher current"), h.changes, h.markEtcd("the churn's end"), h.heartbeats, h.resume, h.checkReplicas, h.wrapper, h.restarts} {
		if err := phase(ctx); err != nil {
			return err
		}
		if h.overLimit {
			return fmt.Errorf("gridview-apiserver's RSS passed SCALE_RSS_LIMIT (%s): the run stops here", mb(h.cfg.RSSLimit))
		}
	}
	return nil
}

// scenario describes the run; with Workloads the slices are counted once
// the controllers wrote them.
func (h *Harness) scenario() string {
	endpoints := fmt.Sprintf("%d EndpointSlices, %d endpoints", h.m.SliceCount(), h.m.Endpoints())
	if h.m.Workloads {
		endpoints += " from Deployments and a DaemonSet through kube-scheduler, kwok and the EndpointSlice controller"
	}
	return fmt.Sprintf("%s (seed %d): %d nodes in %d units over %d zones, %d Services, %s; %d node watchers through the aggregator, reading %s",
		h.cfg.Scale.Name, h.cfg.Seed, len(h.m.Nodes), h.m.Units(), h.m.Zones, len(h.m.Services), endpoints, len(h.watchers), h.cfg.Encoding)
}

// Stop stops the watchers.
func (h *Harness) Stop() {
	for _, w := range h.watchers {
		if w.cancel != nil {
			w.Stop()
		}
	}
}

func (h *Harness) startWatchers(ctx context.Context) error {
	if err := h.grantNodesTheirViews(ctx); err != nil {
		return err
	}
	start := time.Now()
	for _, w := range h.watchers {
		w.Start(ctx)
	}
	if err := awaitWatches(ctx, h.watchers, (*Watcher).Watching, func(w *Watcher) error {
		return fmt.Errorf("the watch of %s not established within %s: %w", w.Node, establishTimeout, w.LastError())
	}); err != nil {
		return err
	}
	h.logf("%d watchers listed and watching in %s", len(h.watchers), time.Since(start).Round(time.Millisecond))
	return nil
}

// grantNodesTheirViews applies gridview-wrapper's RBAC, under which the
// watchers read as their nodes, and waits until kube-apiserver authorizes
// a node's list: its RBAC authorizer reads bindings from an informer.
func (h *Harness) grantNodesTheirViews(ctx context.Context) error {
	if err := h.cluster.ApplyWrapperRBAC(ctx); err != nil {
		return err
	}
	node := h.watchers[0].Node
	var status string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := h.c.getAs(ctx, node, nodeEndpointsPath, url.Values{"fieldSelector": {"nodeName=" + node}, "limit": {"1"}}, EncodingJSON)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		status = resp.Status
	}
	return fmt.Errorf("%s may not list its views after gridview-wrapper's RBAC was applied: %s", node, status)
}

// establishTimeout bounds how long watchers take to establish their watches:
// each lists first, and kube-apiserver throttles thousands of lists at once
// (429), which they retry.
const establishTimeout = 5 * time.Minute

// awaitWatches waits until every watcher's watching channel is closed; at
// establishTimeout it returns late's error for the first still waiting.
func awaitWatches[W any](ctx context.Context, watchers []W, watching func(W) <-chan struct{}, late func(W) error) error {
	deadline := time.After(establishTimeout)
	for _, w := range watchers {
		select {
		case <-watching(w):
		case <-deadline:
			return late(w)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// proc reads the leading gridview-apiserver's memory and CPU.
func (h *Harness) proc() (localcluster.ProcStat, error) {
	return replicaStat(h.gridview)
}

// cycles counts gridview-apiserver's collection cycles: all of them, and
// those it ran itself while its views were quiet.
type cycles struct{ all, quiet int }

// collections reads the collection cycles gridview-apiserver ran so far,
// from its metrics, and whether it did. Only when Config.ProfileDir asks
// for diagnostics: rendering the metrics right before a change, and
// collecting what that left, slows the change it measures.
func (h *Harness) collections(ctx context.Context) (cycles, bool) {
	if h.cfg.ProfileDir == "" {
		return cycles{}, false
	}
	text, err := getPath(ctx, h.gridview.Config(), "/metrics", nil)
	if err != nil {
		return cycles{}, false
	}
	all, errAll := localcluster.MetricSample(string(text), "go_gc_duration_seconds_count")
	quiet, errQuiet := localcluster.MetricSample(string(text), "gridview_apiserver_quiet_collections_total")
	return cycles{all: int(all), quiet: int(quiet)}, errAll == nil && errQuiet == nil
}

// otherCPU reads the CPU kube-apiserver and the harness itself used so
// far: they share the two cores with gridview-apiserver.
func (h *Harness) otherCPU() [2]time.Duration {
	var out [2]time.Duration
	if pid, ok := h.cluster.KubeAPIServerPid(); ok {
		if st, err := localcluster.ReadProcStat(pid); err == nil {
			out[0] = st.CPU
		}
	}
	if st, err := localcluster.ReadProcStat(os.Getpid()); err == nil {
		out[1] = st.CPU
	}
	return out
}

// Quiet is gridview-apiserver and kube-apiserver each using less than a
// tenth of a core over quietWindow; settle waits for it at most
// settleTimeout.
const (
	quietWindow   = 2 * time.Second
	quietCPU      = quietWindow / 10
	settleTimeout = 3 * time.Minute
)

// settle waits, before the changes are measured, until gridview-apiserver
// and kube-apiserver are quiet after the ingest. The routing pass that
// follows it warns of every Service left without endpoints for some nodes,
// one Event each (about 2,500 at edge-10k, written at gridview's 50 QPS
// through kube-apiserver into etcd), and the collector reclaims the
// ingest's garbage: a change measured meanwhile would measure those.
func (h *Harness) settle(ctx context.Context) error {
	start := time.Now()
	gridview, err := h.proc()
	if err != nil {
		return err
	}
	kube := h.otherCPU()[0]
	for time.Since(start) < settleTimeout {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(quietWindow):
		}
		gridviewNow, err := h.proc()
		if err != nil {
			return err
		}
		kubeNow := h.otherCPU()[0]
		if gridviewNow.CPU-gridview.CPU < quietCPU && kubeNow-kube < quietCPU {
			h.logf("gridview-apiserver and kube-apiserver quiet %s after the views were current", time.Since(start).Round(time.Second))
			return nil
		}
		gridview, kube = gridviewNow, kubeNow
	}
	h.logf("gridview-apiserver or kube-apiserver still busy %s after the views were current; measuring the changes anyway", settleTimeout)
	return nil
}

// ingest writes the whole scenario at full speed: Nodes, then Services,
// then EndpointSlices, as a cluster being set up would see them arrive.
func (h *Harness) ingest(ctx context.Context) error {
	phases, err := h.scenarioJobs(ctx)
	if err != nil {
		return err
	}
	before, err := h.proc()
	if err != nil {
		return err
	}
	others0 := h.otherCPU()
	var totals map[int]uint64
	if !h.m.Workloads {
		totals = h.expected()
	}
	stopProfiles := h.profileIngest(ctx)
	start := time.Now()
	for _, phase := range phases {
		if err := runJobs(ctx, phase); err != nil {
			stopProfiles()
			return fmt.Errorf("writing the scenario: %w", err)
		}
		h.R.Objects += len(phase)
	}
	lastWrite := time.Now()
	h.R.WriteTime = lastWrite.Sub(start)
	if h.m.Workloads {
		err = h.ingestWorkloads(ctx, start)
	} else {
		h.logf("wrote %d objects in %s; waiting for every watched node's views", h.R.Objects, h.R.WriteTime.Round(time.Millisecond))
		h.saveHeapProfile(ctx, "written")
		h.R.IngestCurrent, h.R.IngestStale = h.waitCurrent(ctx, totals, lastWrite, "after the ingest")
	}
	stopProfiles()
	if err != nil {
		return err
	}
	h.saveHeapProfile(ctx, "current")
	after, err := h.proc()
	if err != nil {
		return err
	}
	h.R.IngestCPU = after.CPU - before.CPU
	others := h.otherCPU()
	h.R.IngestKubeCPU, h.R.IngestHarnessCPU = others[0]-others0[0], others[1]-others0[1]
	h.R.PeakRSS, h.R.IngestRSS = after.PeakRSS, after.RSS
	return nil
}

// ingestWorkloads waits, after the ingest's writes with Workloads, until
// the controllers have settled, reads their slices into the model, and
// waits for every watched node's views from the first write (start): the
// last slice write is the controllers', whose time no watcher sees.
func (h *Harness) ingestWorkloads(ctx context.Context, start time.Time) error {
	h.logf("wrote %d objects in %s; waiting for the controllers to run every Pod and write it into its Service's slices", h.R.Objects, h.R.WriteTime.Round(time.Millisecond))
	if err := h.awaitWorkloads(ctx); err != nil {
		return err
	}
	h.R.ControllersSettled = time.Since(start)
	h.R.Scenario = h.scenario()
	h.logf("the controllers settled %s after the first write: %s", ms(h.R.ControllersSettled), h.R.Scenario)
	h.saveHeapProfile(ctx, "written")
	h.R.IngestCurrent, h.R.IngestStale = h.waitCurrent(ctx, h.expected(), start, "from the first write")
	if h.R.IngestStale == 0 {
		// The views may have been current long before the controllers'
		// settling was seen: the last change any watcher took is when.
		var last time.Time
		for _, w := range h.watchers {
			if changed := w.Changed(); changed.After(last) {
				last = changed
			}
		}
		h.R.IngestCurrent = last.Sub(start)
		h.logf("views current from the first write, at the last view change a watcher took: %s", ms(h.R.IngestCurrent))
	}
	return nil
}

// scenarioJobs creates the scenario's Namespace and returns the writes of
// its Nodes, Services and EndpointSlices, in that order; with Workloads,
// of its Deployments and DaemonSet instead of the slices.
func (h *Harness) scenarioJobs(ctx context.Context) ([][]job, error) {
	if _, err := h.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: h.m.Namespace}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", h.m.Namespace, err)
	}
	var nodes, services, slicesJobs []job
	for i := range h.m.Nodes {
		obj := h.m.NodeObject(i)
		nodes = append(nodes, job{key: "node/" + obj.Name, write: func(ctx context.Context) error {
			_, err := h.kube.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
			return err
		}})
	}
	for _, svc := range h.m.Services {
		obj := h.m.ServiceObject(svc)
		services = append(services, job{key: "service/" + obj.Name, write: func(ctx context.Context) error {
			_, err := h.kube.CoreV1().Services(h.m.Namespace).Create(ctx, obj, metav1.CreateOptions{})
			return err
		}})
		// With Workloads the model has no slices before the controllers wrote them.
		for _, sl := range svc.Slices {
			obj := h.m.SliceObject(svc, sl)
			slicesJobs = append(slicesJobs, job{key: "slice/" + obj.Name, write: func(ctx context.Context) error {
				_, err := h.kube.DiscoveryV1().EndpointSlices(h.m.Namespace).Create(ctx, obj, metav1.CreateOptions{})
				return err
			}})
		}
	}
	if h.m.Workloads {
		return [][]job{nodes, services, h.workloadJobs()}, nil
	}
	return [][]job{nodes, services, slicesJobs}, nil
}

// watchedUnits returns the units watched nodes are in now, but skip's.
func (h *Harness) watchedUnits(skip int) []int {
	seen := map[int]bool{}
	for _, w := range h.watchers {
		if w.Index != skip {
			seen[h.m.Nodes[w.Index].Unit] = true
		}
	}
	out := make([]int, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	sort.Ints(out)
	return out
}

// expected is what every watcher's total must be, by unit, in the model's
// current state. It takes seconds at edge-10k: callers compute it before
// the writes they then time.
func (h *Harness) expected() map[int]uint64 {
	return h.m.UnitTotals(h.watchedUnits(-1))
}

// waitCurrent waits until every watcher's total equals totals (expected)
// and returns how long after since that took, or how many watchers were
// still stale at the timeout (then logging what differs for a few).
func (h *Harness) waitCurrent(ctx context.Context, totals map[int]uint64, since time.Time, what string) (time.Duration, int) {
	return h.waitCurrentAnd(ctx, totals, since, what, func(*Watcher) bool { return true })
}

// waitCurrentAnd is waitCurrent for watchers that also meet also.
func (h *Harness) waitCurrentAnd(ctx context.Context, totals map[int]uint64, since time.Time, what string, also func(*Watcher) bool) (time.Duration, int) {
	deadline := time.Now().Add(h.cfg.CurrentTimeout)
	var stale []*Watcher
	for {
		stale = stale[:0]
		for _, w := range h.watchers {
			if w.Total() != totals[h.m.Nodes[w.Index].Unit] || !also(w) {
				stale = append(stale, w)
			}
		}
		if len(stale) == 0 {
			took := time.Since(since)
			h.logf("views current %s: %s", what, took.Round(time.Millisecond))
			return took, 0
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		if st, err := h.proc(); err == nil && st.RSS > h.cfg.RSSLimit {
			h.R.fail("gridview-apiserver's RSS reached %s %s, past SCALE_RSS_LIMIT: the wait was ended", mb(st.RSS), what)
			h.overLimit = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.R.fail("%d of %d watchers not current %s within %s", len(stale), len(h.watchers), what, h.cfg.CurrentTimeout)
	for _, w := range stale[:min(3, len(stale))] {
		h.logf("  %s: %s (last error: %v)", w.Node, h.describeDiff(w), w.LastError())
	}
	return 0, len(stale)
}

// describeDiff names what a watcher has that the model does not, and back.
func (h *Harness) describeDiff(w *Watcher) string {
	unit := h.m.Nodes[w.Index].Unit
	want := h.m.UnitViews([]int{unit}, h.m.Services)[unit]
	have := w.Entries()
	diff := diffViews(have, want)
	var parts []string
	for id, d := range diff {
		name := h.c.names.name(id)
		switch {
		case d == 0:
			parts = append(parts, "extra "+name)
		case have[id] == 0:
			parts = append(parts, "missing "+name)
		default:
			parts = append(parts, "different "+name)
		}
		if len(parts) == 5 {
			break
		}
	}
	slices.Sort(parts)
	return fmt.Sprintf("%d of %d entries differ: %s", len(diff), len(want), strings.Join(parts, ", "))
}

// change is one measured change: the model is changed by mutate, and write
// writes its new state.
type change struct {
	affected []*Service // Services whose views may change
	moved    int        // a moved node, or -1
	mutate   func()
	write    func(context.Context) error
}

// probeTimeout bounds how long a change may take to reach every watcher it
// should; settle is how long the harness goes on counting events after.
const (
	probeTimeout = 30 * time.Second
	settle       = 500 * time.Millisecond
)

// measure makes one change and folds what the watchers saw into d.
func (h *Harness) measure(ctx context.Context, d *Delivery, ch change) error {
	units := h.watchedUnits(ch.moved)
	before := h.m.UnitViews(units, ch.affected)
	var movedBefore map[int32]uint64
	if ch.moved >= 0 {
		u := h.m.Nodes[ch.moved].Unit
		movedBefore = h.m.UnitViews([]int{u}, h.m.Services)[u]
	}
	ch.mutate()
	after := h.m.UnitViews(units, ch.affected)
	cycles0, known0 := h.collections(ctx)
	cpu0, err := h.proc()
	if err != nil {
		return err
	}
	start := time.Now()
	for _, w := range h.watchers {
		unit := h.m.Nodes[w.Index].Unit
		if w.Index == ch.moved {
			w.arm(diffViews(movedBefore, h.m.UnitViews([]int{unit}, h.m.Services)[unit]), start)
			continue
		}
		w.arm(diffViews(before[unit], after[unit]), start)
	}
	if err := ch.write(ctx); err != nil {
		return fmt.Errorf("%s: %w", d.Kind, err)
	}
	deadline := time.Now().Add(probeTimeout)
	// Latencies are taken by the watchers as events arrive; this poll only
	// decides when to stop, so it may be coarse and cheap.
	for time.Now().Before(deadline) && slices.ContainsFunc(h.watchers, (*Watcher).pending) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(settle)
	cpu1, err := h.proc()
	if err != nil {
		return err
	}
	var cycles string
	if cycles1, known1 := h.collections(ctx); known0 && known1 {
		cycles = fmt.Sprintf(", collection cycles: %d (%d while quiet)", cycles1.all-cycles0.all, cycles1.quiet-cycles0.quiet)
	}
	probes, bytes := make([]probe, len(h.watchers)), make([]int64, len(h.watchers))
	var own string
	for i, w := range h.watchers {
		probes[i], bytes[i] = w.disarm()
		if w.Index == ch.moved {
			// The moved node's own watcher gets most of the bytes: apart,
			// it shows what the others wait for.
			own = fmt.Sprintf(", the moved node's own watcher %s (%d events)", probes[i].latency(), probes[i].events)
		}
	}
	d.add(probes, bytes, cpu1.CPU-cpu0.CPU)
	// Each change on its own too: a slow one (a collector cycle, a burst
	// elsewhere) shows apart from a slow kind.
	one := &Delivery{}
	one.add(probes, bytes, cpu1.CPU-cpu0.CPU)
	h.logf("%s #%d: %d/%d watchers current, first %s, p50 %s, last %s%s, %.2f CPU-s%s",
		d.Kind, d.Changes, one.Done, one.Expected, one.Percentile(0), one.Percentile(0.5), one.Percentile(1), own, one.CPU.Seconds(), cycles)
	return nil
}

// flip is a readiness flip of a random endpoint of one of svcs; with
// Workloads it is measured from the Pod's patch and includes the
// EndpointSlice controller's write.
func (h *Harness) flip(svcs []*Service) change {
	svc := svcs[h.rng.IntN(len(svcs))]
	var write func(context.Context) error
	return change{affected: []*Service{svc}, moved: -1,
		mutate: func() { write = h.flipWrite(svc) },
		write:  func(ctx context.Context) error { return write(ctx) },
	}
}

// statusUpdates patches the Ready condition's heartbeat of
// Scale.StatusUpdates nodes, each once, as kubelets do. No view changes, so
// no watcher may get an event.
func (h *Harness) statusUpdates() change {
	return change{moved: -1, mutate: func() {},
		write: func(ctx context.Context) error {
			patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []map[string]any{
				{"type": corev1.NodeReady, "lastHeartbeatTime": metav1.Now()},
			}}})
			var jobs []job
			for _, i := range h.rng.Perm(len(h.m.Nodes))[:h.cfg.Scale.StatusUpdates()] {
				name := h.m.Nodes[i].Name
				jobs = append(jobs, job{key: "node/" + name, write: func(ctx context.Context) error {
					_, err := h.kube.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
					return err
				}})
			}
			return runJobs(ctx, jobs)
		},
	}
}

// moveNode moves a random watched node to another unit.
func (h *Harness) moveNode() change {
	node := h.watchers[h.rng.IntN(len(h.watchers))].Index
	return change{affected: h.m.ServicesOnNode(node), moved: node,
		mutate: func() { h.m.MoveNode(node, h.rng) },
		write: func(ctx context.Context) error {
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": h.m.NodeLabels(node)}})
			_, err := h.kube.CoreV1().Nodes().Patch(ctx, h.m.Nodes[node].Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
	}
}

// annotate turns a random any-match Service into an ordered one.
func (h *Harness) annotate() change {
	svcs := h.m.ServicesOf(ModeAnyMatch, false)
	svc := svcs[h.rng.IntN(len(svcs))]
	return change{affected: []*Service{svc}, moved: -1,
		mutate: func() { h.m.SetMode(svc, ModeOrdered) },
		write: func(ctx context.Context) error {
			patch, _ := json.Marshal(ModePatch(ModeOrdered))
			_, err := h.kube.CoreV1().Services(h.m.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
	}
}
