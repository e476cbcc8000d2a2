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

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// A real kube-proxy reading through gridview-wrapper programs only what its
// node's view holds; TestKubeProxyControlSeesEveryEndpoint is the control.
func TestWrapperFeedsKubeProxyItsNodesView(t *testing.T) {
	s := newSite(t)
	// ordered ("unit,*") moves its Pod to unit b: a1 falls back to "*".
	s.runPods(t, "ordered", podOn{"b1", true})
	s.deletePod(t, "ordered", "a1")
	n := nodeNetns(t, s.Node("a1"))
	w := startWrapper(t, n)
	proc := startKubeProxy(t, n, w.kubeconfig())

	expectProgrammed(t, n, proc, s.NS, "grid", 80, s.podIPs(t, "grid", "a1", "a2"))
	expectProgrammed(t, n, proc, s.NS, "plain", 80, s.podIPs(t, "plain", "a1", "b1"))
	expectProgrammed(t, n, proc, s.NS, "ordered", 80, s.podIPs(t, "ordered", "b1"))

	// kube-proxy presents the token of its kubeconfig; any other process on
	// the node, without it or with another, reads nothing but probes and
	// metrics.
	for _, c := range []struct {
		path, authorization string
		want                int
	}{
		{path: "/api/v1/services", authorization: "Authorization:", want: http.StatusUnauthorized},
		{path: "/apis/discovery.k8s.io/v1/endpointslices", authorization: "Authorization:", want: http.StatusUnauthorized},
		{path: "/apis/discovery.k8s.io/v1/endpointslices", authorization: "Authorization: Bearer not-kube-proxys-token-0123456789abcdef", want: http.StatusUnauthorized},
		{path: "/api", authorization: "Authorization:", want: http.StatusUnauthorized},
		{path: "/readyz", authorization: "Authorization:", want: http.StatusOK},
		{path: "/metrics", authorization: "Authorization:", want: http.StatusOK},
		{path: "/apis/discovery.k8s.io/v1/endpointslices", want: http.StatusOK},
	} {
		var headers []string
		if c.authorization != "" {
			headers = append(headers, c.authorization)
		}
		code, body, err := w.request(context.Background(), http.MethodGet, c.path, nil, headers...)
		if err != nil || code != c.want {
			t.Errorf("GET %s with %q: %d %.200s, %v; want %d", c.path, c.authorization, code, body, err, c.want)
		}
	}

	// kube-proxy's Events reach the cluster through the wrapper.
	localcluster.Eventually(t, 20*time.Second, "kube-proxy's Event about "+n.NodeName, func(ctx context.Context) error {
		events, err := kubeClient.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + n.NodeName})
		if err != nil {
			return err
		}
		for _, event := range events.Items {
			if event.ReportingController == "kube-proxy" || event.Source.Component == "kube-proxy" {
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(events.Items))
	})

	// a1 moves to unit b, taking its own endpoint along.
	start := time.Now()
	s.label(t, "a1", framework.UnitKey, "b")
	expectProgrammedWithin(t, 5*time.Second, n, proc, s.NS, "grid", 80, s.podIPs(t, "grid", "a1", "b1"))
	t.Logf("relabel to kube-proxy's ruleset: %s", time.Since(start))
}

// Through a WAN outage, and a restart of the wrapper during it, kube-proxy
// keeps routing as it did; when the link returns, the changes it missed
// arrive and later ones follow.
func TestWrapperKeepsKubeProxyRoutingThroughAnOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the wrapper's backoff through an outage: make test-all runs it")
	}
	s := newSite(t)
	n := nodeNetns(t, s.Node("a1"))
	w := startWrapper(t, n)
	proc := startKubeProxy(t, n, w.kubeconfig())
	before := s.podIPs(t, "grid", "a1", "a2")
	expectProgrammed(t, n, proc, s.NS, "grid", 80, before)
	w.waitCached()

	cutOff(t, n)
	localcluster.Eventually(t, 15*time.Second, "the wrapper seeing the outage", func(context.Context) error {
		if connected := w.metric("gridview_wrapper_upstream_connected"); connected != 0 {
			return fmt.Errorf("upstream_connected = %v", connected)
		}
		return nil
	})
	// A change the wrapper cannot see yet.
	s.setReady(t, "grid", "a2", false)
	expectStillProgrammed(t, 3*time.Second, n, proc, s.NS, "grid", 80, before)

	w.restart()
	expectStillProgrammed(t, 5*time.Second, n, proc, s.NS, "grid", 80, before)

	sentBefore := w.metric("gridview_wrapper_watch_events_sent_total")
	reconnect(t, n)
	expectProgrammed(t, n, proc, s.NS, "grid", 80, s.podIPs(t, "grid", "a1"))
	// The re-list after the outage reaches kube-proxy as the one slice that
	// changed, not as a re-sync of everything.
	if sent := w.metric("gridview_wrapper_watch_events_sent_total") - sentBefore; sent > 2 {
		t.Errorf("the wrapper sent kube-proxy %v events when the link returned, want only the changed slice", sent)
	}
	s.setReady(t, "grid", "a2", true)
	expectProgrammed(t, n, proc, s.NS, "grid", 80, before)
}

// During a churn of endpoints in unit b, which a1's view does not hold, the
// wrapper of a1 receives next to nothing, while an unpruned EndpointSlice
// watch, what kube-proxy reads without gridview, receives every change.
func TestWrapperReceivesOnlyItsNodesChanges(t *testing.T) {
	s := newSite(t)
	n := nodeNetns(t, s.Node("a1"))
	w := startWrapper(t, n)

	var unpruned atomic.Int64
	config := rest.CopyConfig(cluster.AdminConfig)
	config.Wrap(func(next http.RoundTripper) http.RoundTripper { return countingTransport{next: next, bytes: &unpruned} })
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := client.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := client.DiscoveryV1().EndpointSlices("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	events := make(chan struct{}, 100)
	go func() {
		for range watcher.ResultChan() {
			events <- struct{}{}
		}
	}()

	unpruned.Store(0)
	before := w.metric("gridview_wrapper_upstream_received_bytes_total")
	if before == 0 {
		t.Fatal("the wrapper counted no byte of its initial lists: the metric does not measure")
	}
	const changes = 20
	for i := range changes {
		s.setReady(t, "grid", "b1", i%2 == 1)
	}
	for range changes {
		select {
		case <-events:
		case <-time.After(10 * time.Second):
			t.Fatal("the unpruned watch missed changes")
		}
	}
	// A Pod a1 routes to, after the churn: once the wrapper serves it, the
	// churn has reached it too, as its feed keeps the order of the changes.
	s.runPods(t, "plain", podOn{"a2", true})
	marker := `"` + s.podIPs(t, "plain", "a2")[0] + `"`
	localcluster.Eventually(t, 10*time.Second, "the wrapper serving the Pod of plain on a2", func(ctx context.Context) error {
		body, err := w.get(ctx, "/apis/discovery.k8s.io/v1/endpointslices")
		if err == nil && !strings.Contains(body, marker) {
			err = fmt.Errorf("no endpoint %s", marker)
		}
		return err
	})
	wrapperBytes := w.metric("gridview_wrapper_upstream_received_bytes_total") - before
	ratio := wrapperBytes / float64(unpruned.Load())
	t.Logf("%d endpoint changes in unit b and one in unit a: wrapper of a1 received %.0f bytes upstream, an unpruned EndpointSlice watch %d bytes: ratio %.3f",
		changes, wrapperBytes, unpruned.Load(), ratio)
	if ratio > 0.2 {
		t.Errorf("the wrapper received %.0f bytes for changes its node does not route to, %.2f of an unpruned watch's", wrapperBytes, ratio)
	}
}

// countingTransport counts the bytes of response bodies.
type countingTransport struct {
	next  http.RoundTripper
	bytes *atomic.Int64
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = countingBody{ReadCloser: resp.Body, bytes: c.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	bytes *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.bytes.Add(int64(n))
	return n, err
}

// A wrapper restarted during an outage with no cache to load has no state:
// kube-proxy, restarted too, must keep the rules it has rather than take an
// empty answer for an empty cluster and remove them, and must program the
// cluster's state once the link returns.
func TestWrapperWithoutStateKeepsKubeProxyRules(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out kube-proxy's 30 s wait for its Node and the wrapper's backoff through an outage: make test-all runs it")
	}
	s := newSite(t)
	n := nodeNetns(t, s.Node("a1"))
	w := startWrapper(t, n)
	kubeconfig := w.kubeconfig()
	proc := startKubeProxy(t, n, kubeconfig)
	before := s.podIPs(t, "grid", "a1", "a2")
	expectProgrammed(t, n, proc, s.NS, "grid", 80, before)
	w.waitCached()

	// kube-proxy leaves its rules in place when it stops.
	if err := proc.Stop(); err != nil {
		t.Fatalf("stopping kube-proxy: %v", err)
	}
	cutOff(t, n)
	w.restartWithoutCache()
	s.setReady(t, "grid", "a2", false)
	proc = startKubeProxy(t, n, kubeconfig)
	// kube-proxy waits 30 seconds for its Node, then goes on without it and
	// syncs whatever Services it has: watch well past that.
	expectStillProgrammed(t, 45*time.Second, n, proc, s.NS, "grid", 80, before)

	reconnect(t, n)
	// The wrapper's informers and kube-proxy's retries both back off
	// through the outage.
	expectProgrammedWithin(t, 90*time.Second, n, proc, s.NS, "grid", 80, s.podIPs(t, "grid", "a1"))
}
