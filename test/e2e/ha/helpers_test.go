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
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// testNamespace creates a namespace for one test and deletes it afterwards.
func testNamespace(t *testing.T) string {
	t.Helper()
	return framework.Namespace(t, kubeClient, "ha-")
}

// site is a small edge cluster of the test's own: nodes <ns>-a1, <ns>-a2 in
// unit a and <ns>-b1 in unit b, and the Service "grid" (any-match on the
// unit) with an endpoint on every node.
type site struct {
	framework.Site
}

func newSite(t *testing.T) site {
	t.Helper()
	ctx := context.Background()
	s := site{framework.Site{NS: testNamespace(t)}}
	s.CreateNodes(t, kubeClient, framework.SiteNodes())
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "grid", Annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + framework.UnitKey + `"]`}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := kubeClient.CoreV1().Services(s.NS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.writeSlice(t, map[string]string{"10.1.0.1": "a1", "10.1.0.2": "a2", "10.1.0.3": "b1"})
	return s
}

// relabel moves a node of the site to another unit.
func (s site) relabel(ctx context.Context, client kubernetes.Interface, node, unit string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, framework.UnitKey, s.Unit(unit))
	_, err := client.CoreV1().Nodes().Patch(ctx, s.Node(node), types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// writeSlice creates or replaces the one EndpointSlice of "grid", with ready
// endpoints by address on the site's nodes. The HA suite writes its slices
// by hand: it drives input churn through failovers and restarts, where each
// state must be one write (a Pod's start is several) and the addresses are
// the markers the tests follow; and it runs no kube-controller-manager or
// kwok beside its replicas.
func (s site) writeSlice(t *testing.T, endpoints map[string]string) {
	t.Helper()
	onNodes := map[string]string{}
	for address, node := range endpoints {
		onNodes[address] = s.Node(node)
	}
	framework.WriteEndpointSlice(t, kubeClient, s.NS, "grid", onNodes)
}

// addresses returns a view's endpoint addresses, sorted.
func addresses(view *topologyv1alpha1.NodeEndpoints) []string { return framework.Addresses(view) }

// gridView is the name of a node's view of the one EndpointSlice of "grid".
func (s site) gridView(node string) string {
	return topology.Name(s.Node(node), framework.SliceName("grid"))
}

// content is what a view says, without its resourceVersion: a replica
// that loaded the log at a later revision, after a restart past etcd's
// compaction, stamps the views it loaded with that revision, while one that
// applied the changes before it carries each view's own.
func content(view *topologyv1alpha1.NodeEndpoints) string {
	return fmt.Sprintf("%s %s %v %v", view.Name, view.Topology.MatchedKey, view.Labels, addresses(view))
}

// viewsIn lists every view of ns through client, by name, as content.
func viewsIn(ctx context.Context, client versioned.Interface, ns string) (map[string]string, error) {
	list, err := client.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range list.Items {
		out[list.Items[i].Name] = content(&list.Items[i])
	}
	return out, nil
}

// gridAddresses is the addresses a node routes to of "grid" through client:
// those of its views of grid's slices, none when it routes to none.
func (s site) gridAddresses(ctx context.Context, client versioned.Interface, node string) ([]string, error) {
	return framework.ServiceAddresses(ctx, client, s.NS, s.Node(node), "grid")
}

// directClient talks to one replica, bypassing the aggregator: it serves
// every read itself, from the views it derived from gridview's input log.
func directClient(t *testing.T, r *localcluster.GridviewReplica) versioned.Interface {
	t.Helper()
	client, err := versioned.NewForConfig(r.Config())
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// metric reads one sample of a replica's /metrics, named with its labels as
// /metrics prints them.
func metric(ctx context.Context, r *localcluster.GridviewReplica, name string) (float64, error) {
	body, err := metricsText(ctx, r)
	if err != nil {
		return 0, err
	}
	value, err := localcluster.MetricSample(body, name)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", r.Name, err)
	}
	return value, nil
}

// metricsText reads a replica's /metrics, unthrottled: tests poll it.
func metricsText(ctx context.Context, r *localcluster.GridviewReplica) (string, error) {
	cfg := r.Config()
	cfg.QPS, cfg.Burst = -1, 0
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	body, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("GET /metrics of %s: %w", r.Name, err)
	}
	return string(body), nil
}

// informerAndList summarizes an informer's views and a list's by name, each
// as its content. Not by resourceVersion: a view shared by many nodes
// carries in a list an upper bound of the one its watch event carried
// (docs/architecture.md), so that would compare numbering, not views.
func informerAndList(store cache.Store, list *topologyv1alpha1.NodeEndpointsList) (got, want map[string]string) {
	want = map[string]string{}
	for i := range list.Items {
		want[list.Items[i].Name] = content(&list.Items[i])
	}
	got = map[string]string{}
	for _, obj := range store.List() {
		view := obj.(*topologyv1alpha1.NodeEndpoints)
		got[view.Name] = content(view)
	}
	return got, want
}

// runningReplicas returns the replicas whose process runs.
func runningReplicas() []*localcluster.GridviewReplica {
	var out []*localcluster.GridviewReplica
	for _, r := range cluster.GridviewReplicas() {
		if r.Running() {
			out = append(out, r)
		}
	}
	return out
}

// runningReplicaBut returns a running replica other than r.
func runningReplicaBut(t *testing.T, r *localcluster.GridviewReplica) *localcluster.GridviewReplica {
	t.Helper()
	for _, other := range runningReplicas() {
		if other != r {
			return other
		}
	}
	t.Fatalf("no running replica but %s", r.Name)
	return nil
}

// leaders returns the running replicas that say they lead: write gridview's
// input log and reconcile ServiceGrids (gridview_apiserver_leading 1).
func leaders(ctx context.Context) ([]*localcluster.GridviewReplica, error) {
	var out []*localcluster.GridviewReplica
	for _, r := range runningReplicas() {
		leading, err := metric(ctx, r, "gridview_apiserver_leading")
		if err != nil {
			return nil, err
		}
		if leading == 1 {
			out = append(out, r)
		}
	}
	return out, nil
}

// awaitLeader waits until exactly one running replica leads, and returns it.
func awaitLeader(t *testing.T, timeout time.Duration) *localcluster.GridviewReplica {
	t.Helper()
	var leader *localcluster.GridviewReplica
	localcluster.Eventually(t, timeout, "one replica leading", func(ctx context.Context) error {
		leading, err := leaders(ctx)
		if err == nil && len(leading) != 1 {
			err = fmt.Errorf("replicas leading: %v", names(leading))
		}
		if err == nil {
			leader = leading[0]
		}
		return err
	})
	return leader
}

func names(replicas []*localcluster.GridviewReplica) []string {
	out := []string{}
	for _, r := range replicas {
		out = append(out, r.Name)
	}
	return out
}

// What a replica logs when it is elected to write gridview's input log.
const startedLeading = "Leading gridview's input log"

// startsOfLeading counts, for each replica, the times it was elected over
// all its starts: its log is appended to across restarts.
func startsOfLeading(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range cluster.GridviewReplicas() {
		data, err := os.ReadFile(r.LogFile)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Name] = strings.Count(string(data), startedLeading)
	}
	return out
}

// readyz asks a replica itself, not the aggregator, whether it is ready.
func readyz(ctx context.Context, r *localcluster.GridviewReplica) error {
	cfg := r.Config()
	cfg.QPS, cfg.Burst = -1, 0
	cfg.Timeout = 5 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "true").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("%s not ready: %w: %s", r.Name, err, failedChecks(string(body)))
	}
	return nil
}

// failedChecks shortens a verbose /readyz answer to its failing checks.
func failedChecks(body string) string {
	var failed []string
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimSpace(line))
		}
	}
	if len(failed) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(failed, "; ")
}

// logRevision is the revision of gridview's input log whose views a
// replica serves.
func logRevision(ctx context.Context, r *localcluster.GridviewReplica) (float64, error) {
	return metric(ctx, r, "gridview_nodeendpoints_log_revision")
}

// watchesServed counts, by replica, the watches of NodeEndpoints each
// running replica served to their end (apiserver_request_total), whatever
// their answer: a watch through the aggregator is served by the replica it
// picked.
func watchesServed(ctx context.Context, t *testing.T) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, r := range runningReplicas() {
		body, err := metricsText(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(body) {
			if !strings.HasPrefix(line, "apiserver_request_total{") ||
				!strings.Contains(line, `resource="nodeendpoints"`) || !strings.Contains(line, `verb="WATCH"`) {
				continue
			}
			value, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndex(line, " ")+1:]), 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", r.Name, line, err)
			}
			out[r.Name] += value
		}
	}
	return out
}

// servedSince is, by replica, the watches each served since before.
func servedSince(ctx context.Context, t *testing.T, before map[string]float64) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for name, n := range watchesServed(ctx, t) {
		out[name] = n - before[name]
	}
	return out
}

// everyReplicaServed says whether every running replica served a watch
// since before.
func everyReplicaServed(ctx context.Context, t *testing.T, before map[string]float64) bool {
	t.Helper()
	served := servedSince(ctx, t, before)
	for _, r := range runningReplicas() {
		if served[r.Name] == 0 {
			return false
		}
	}
	return true
}

// converged waits until every running replica serves the same views of
// the site's namespace: each at the same revision of gridview's input log
// (gridview_nodeendpoints_log_revision), unchanged while it was listed, and
// listing the same content at the same resourceVersion. Replicas that
// exchange nothing number every change alike. It returns that
// resourceVersion.
func (s site) converged(t *testing.T, timeout time.Duration) string {
	t.Helper()
	rv, _ := s.convergedViews(t, timeout)
	return rv
}

// convergedViews is converged, and returns the views too, by name, as
// their content.
func (s site) convergedViews(t *testing.T, timeout time.Duration) (string, map[string]string) {
	t.Helper()
	var (
		rv    string
		views map[string]string
	)
	localcluster.Eventually(t, timeout, "every replica serving the same views at the same resourceVersion", func(ctx context.Context) error {
		var err error
		rv, views, err = sameViews(ctx, t, s.NS)
		return err
	})
	return rv, views
}

// sameViews lists ns on every running replica and returns the
// resourceVersion and content of the views they all list, or how they
// differ.
func sameViews(ctx context.Context, t *testing.T, ns string) (string, map[string]string, error) {
	running := runningReplicas()
	if len(running) < 2 {
		return "", nil, fmt.Errorf("replicas running: %v", names(running))
	}
	var (
		first               *localcluster.GridviewReplica
		firstRevision       float64
		firstRV             string
		firstViews          map[string]string
		revisions, versions []string
	)
	for _, r := range running {
		before, err := logRevision(ctx, r)
		if err != nil {
			return "", nil, err
		}
		list, err := directClient(t, r).TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		after, err := logRevision(ctx, r)
		if err != nil {
			return "", nil, err
		}
		if after != before {
			return "", nil, fmt.Errorf("%s moved from revision %v to %v while listed", r.Name, before, after)
		}
		views := map[string]string{}
		for i := range list.Items {
			views[list.Items[i].Name] = content(&list.Items[i])
		}
		revisions = append(revisions, fmt.Sprintf("%s: %v", r.Name, after))
		versions = append(versions, fmt.Sprintf("%s: %s", r.Name, list.ResourceVersion))
		if first == nil {
			first, firstRevision, firstRV, firstViews = r, after, list.ResourceVersion, views
			continue
		}
		switch {
		case after != firstRevision:
			return "", nil, fmt.Errorf("log revisions differ: %v", revisions)
		case list.ResourceVersion != firstRV:
			return "", nil, fmt.Errorf("at log revision %v, lists' resourceVersions differ: %v", after, versions)
		case !maps.Equal(views, firstViews):
			return "", nil, fmt.Errorf("at resourceVersion %s, %s lists %v\n%s lists %v", firstRV, first.Name, firstViews, r.Name, views)
		}
	}
	if len(firstViews) == 0 {
		return "", nil, fmt.Errorf("no view in %s: the comparison would prove nothing", ns)
	}
	return firstRV, firstViews, nil
}
