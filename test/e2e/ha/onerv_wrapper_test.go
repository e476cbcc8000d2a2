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
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"

	"github.com/gridview/gridview/pkg/wrapper"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// gridview-wrapper following its node through the aggregator, which picks a
// replica per request, lists each upstream resource once and never again
// through churn and watches that time out: whichever replica a re-watch of
// NodeEndpoints reaches serves it from its own views, numbered as every
// replica numbers them, so it resumes where the last watch ended. Both
// replicas serve its watches. What it serves ends equal to a fresh list.
// The wrapper takes client-go's WatchListClient gate from its environment:
// on, its first list of each resource is a streaming one.
func TestWrapperFollowsItsNodeAcrossReplicas(t *testing.T) {
	churn := haDuration(t, "GRIDVIEW_HA_CHURN", 20*time.Second)
	watchTimeout := haDuration(t, "GRIDVIEW_HA_WATCH_TIMEOUT", 3*time.Second)
	// client-go reads its gates from the environment once: this process
	// reads them before the environment is set for the wrapper's sake.
	clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			t.Setenv("KUBE_FEATURE_WatchListClient", strconv.FormatBool(watchList))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := newSite(t)
			s.converged(t, 20*time.Second)
			servedBefore := watchesServed(ctx, t)
			w := startHostWrapper(t, s.Node("a1"), "--upstream-watch-timeout", watchTimeout.String())

			changes, churned := s.churnOnEveryReplica(ctx, t, churn, servedBefore)
			localcluster.Eventually(t, 20*time.Second, "the wrapper's slices equal to a fresh list", func(ctx context.Context) error {
				return wrapperEqualsList(ctx, w, s.NS, s.Node("a1"))
			})
			served := servedSince(ctx, t, servedBefore)
			watches := w.counts(t, "gridview_wrapper_upstream_watches_total")
			lists := w.counts(t, "gridview_wrapper_upstream_lists_total")
			t.Logf("%d changes in %s, watches timing out after %s to twice that: watches %v (of NodeEndpoints ended, by replica: %v), lists %v",
				changes, churned.Round(time.Second), watchTimeout, watches, served, lists)
			if watches["nodeendpoints"] < 3 {
				t.Errorf("%v watches of NodeEndpoints: the wrapper hardly re-watched, the test proves little", watches["nodeendpoints"])
			}
			expectEveryReplicaServed(t, served)
			if !onceEach(lists) {
				t.Errorf("lists by resource: %v, want 1 of each", lists)
			}
		})
	}
}

// onceEach says whether every resource was counted exactly once.
func onceEach(counts map[string]float64) bool {
	for _, n := range counts {
		if n != 1 {
			return false
		}
	}
	return len(counts) > 0 && counts["nodeendpoints"] == 1
}

// hostWrapper is gridview-wrapper on the host, reading the cluster as its
// admin.
type hostWrapper struct {
	listen string
	// client reaches it as kube-proxy does, with its token and certificate.
	client *http.Client
	proc   *localcluster.Process
}

// startHostWrapper runs gridview-wrapper for node with flags added and
// stops it when the test ends.
func startHostWrapper(t *testing.T, node string, flags ...string) hostWrapper {
	t.Helper()
	// A free port: the package e2e may run wrappers on the host at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := hostWrapper{listen: l.Addr().String()}
	l.Close()
	cacheDir := t.TempDir()
	proc, err := cluster.StartWrapper(context.Background(), node, w.listen, cacheDir, flags...)
	if err != nil {
		t.Fatal(err)
	}
	w.proc = proc
	// Before t.TempDir removes the cache directory.
	t.Cleanup(func() { _ = proc.Stop() })
	// Ready, it has written its credentials.
	if w.client, err = localcluster.WrapperClient(wrapper.ClientCredentialsDir(cacheDir)); err != nil {
		t.Fatal(err)
	}
	return w
}

// get reads path as kube-proxy would, with the wrapper's token.
func (w hostWrapper) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+w.listen+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return body, err
}

// counts reads a counter of the wrapper's by its resource label.
func (w hostWrapper) counts(t *testing.T, name string) map[string]float64 {
	t.Helper()
	body, err := w.get(context.Background(), "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		sample, ok := strings.CutPrefix(line, name+`{resource="`)
		if !ok {
			continue
		}
		resource, value, _ := strings.Cut(sample, `"} `)
		if out[resource], err = strconv.ParseFloat(strings.TrimSpace(value), 64); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	return out
}

// wrapperEqualsList compares what w serves of ns's EndpointSlices with a
// fresh list of node's views.
func wrapperEqualsList(ctx context.Context, w hostWrapper, ns, node string) error {
	list, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + node})
	if err != nil {
		return err
	}
	want := map[string]string{}
	for i := range list.Items {
		want[list.Items[i].Slice.Name] = fmt.Sprint(framework.Addresses(&list.Items[i]))
	}
	if len(want) == 0 {
		return fmt.Errorf("%s has no view: the comparison would prove nothing", node)
	}
	got, err := w.slices(ctx, ns)
	if err != nil {
		return err
	}
	if !maps.Equal(got, want) {
		return fmt.Errorf("wrapper %v\nlist %v", got, want)
	}
	return nil
}

// shortWatches counts the watches of NodeEndpoints that the wrapper's log
// since its start says ended within a second with no event: client-go's
// reflector lists again after each.
func (w hostWrapper) shortWatches(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(w.proc.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	// The harness appends one "=== <time> starting" line per start.
	if i := strings.LastIndex(log, "=== "); i >= 0 {
		log = log[i:]
	}
	n := 0
	for line := range strings.Lines(log) {
		if strings.Contains(line, "very short watch") && strings.Contains(strings.ToLower(line), "nodeendpoints") {
			n++
		}
	}
	return n
}

// slices is what the wrapper serves kube-proxy of ns's EndpointSlices: the
// addresses of each, by name.
func (w hostWrapper) slices(ctx context.Context, ns string) (map[string]string, error) {
	body, err := w.get(ctx, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices")
	if err != nil {
		return nil, err
	}
	var list discoveryv1.EndpointSliceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("the wrapper's EndpointSlices: %w", err)
	}
	out := map[string]string{}
	for _, slice := range list.Items {
		var addresses []string
		for _, ep := range slice.Endpoints {
			addresses = append(addresses, ep.Addresses...)
		}
		slices.Sort(addresses)
		out[slice.Name] = fmt.Sprint(addresses)
	}
	return out, nil
}
