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
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	clientfeatures "k8s.io/client-go/features"
)

// gridview-wrapper following its node through the aggregator, which picks a
// replica per request, lists each upstream resource once and never again
// through churn and watches that time out: its re-watches of NodeEndpoints
// that reach the replica that does not lead are served there, from the
// history it keeps as the leader's follower, or sent on to the leader, so
// they resume where the last watch ended. What it serves ends equal to a
// fresh list. The wrapper takes client-go's WatchListClient gate from its
// environment: on, its first list of each resource is a streaming one.
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
			leader := settledLeader(t)
			defer leader.check(t)
			servedBefore, localBefore := leaderReads(t, "follower"), leaderReads(t, "local")
			w := startHostWrapper(t, s.node("a1"), "--upstream-watch-timeout", watchTimeout.String())

			changes, churned := s.churnThroughTheFollower(ctx, t, churn, servedBefore)
			eventually(t, 20*time.Second, "the wrapper's slices equal to a fresh list", func(ctx context.Context) error {
				return wrapperEqualsList(ctx, w, s.ns, s.node("a1"))
			})
			served := followerServed(t, servedBefore, localBefore)
			watches := w.counts(t, "gridview_wrapper_upstream_watches_total")
			lists := w.counts(t, "gridview_wrapper_upstream_lists_total")
			t.Logf("%d changes in %s, watches timing out after %s to twice that: watches %v (%v of NodeEndpoints served by the follower), lists %v",
				changes, churned.Round(time.Second), watchTimeout, watches, served, lists)
			if watches["nodeendpoints"] < 3 {
				t.Errorf("%v watches of NodeEndpoints: the wrapper hardly re-watched, the test proves little", watches["nodeendpoints"])
			}
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
type hostWrapper struct{ listen string }

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
	proc, err := cluster.StartWrapper(context.Background(), node, w.listen, t.TempDir(), flags...)
	if err != nil {
		t.Fatal(err)
	}
	// Before t.TempDir removes the cache directory.
	t.Cleanup(func() { _ = proc.Stop() })
	return w
}

func (w hostWrapper) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.listen+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
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
