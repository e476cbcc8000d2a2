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

package apiserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	restclient "k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics/testutil"
)

// A refresh that fails keeps the transport that works, and does not hold up
// the read that noticed the trust was stale.
func TestAFailedTrustRefreshKeepsTheTransport(t *testing.T) {
	_, caBundle := peerServer(t, &servedBy{name: "leader"})
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), nil, apiService(caBundle))
	trust := newPeerTrust(&restclient.Config{}, client)
	first, err := trust.roundTripper(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var gets atomic.Int32
	release := make(chan struct{})
	client.PrependReactor("get", "apiservices", func(clienttesting.Action) (bool, runtime.Object, error) {
		gets.Add(1)
		<-release
		return true, nil, errors.New("kube-apiserver is down")
	})
	trust.mu.Lock()
	trust.fetched = time.Now().Add(-2 * peerTrustTTL)
	trust.mu.Unlock()
	for range 3 {
		again, err := trust.roundTripper(context.Background())
		if err != nil || again != first {
			t.Fatalf("a stale trust gave %v, %v; want the transport it had", again, err)
		}
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		trust.mu.Lock()
		refreshing := trust.refreshing
		trust.mu.Unlock()
		if !refreshing || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("%d reads of the APIService for one stale trust, want 1", n)
	}
	if again, err := trust.roundTripper(context.Background()); err != nil || again != first {
		t.Errorf("after a failed refresh: %v, %v; want the transport it had", again, err)
	}
}

// Without any trust yet, an APIService that gives none is asked again only
// after peerTrustRetry, not once per read.
func TestAnAPIServiceWithoutTrustIsNotAskedPerRead(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), nil, apiService(nil))
	var gets atomic.Int32
	client.PrependReactor("get", "apiservices", func(clienttesting.Action) (bool, runtime.Object, error) {
		gets.Add(1)
		return false, nil, nil
	})
	trust := newPeerTrust(&restclient.Config{}, client)
	for range 5 {
		if _, err := trust.roundTripper(context.Background()); err == nil || !strings.Contains(err.Error(), "caBundle") {
			t.Fatalf("an APIService without a caBundle: %v", err)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("%d reads of the APIService for 5 reads, want 1", n)
	}
}

// A read that falls back counts as served here only.
func TestLeaderReadsCountWhoServed(t *testing.T) {
	registerMetrics()
	leader, caBundle := peerServer(t, &servedBy{name: "leader"})
	server := follower(t, strings.TrimPrefix(leader.URL, "https://"), caBundle, &servedBy{name: "local"})
	const views = "/apis/topology.gridview.io/v1alpha1/nodeendpoints"
	for _, tc := range []struct {
		name, query           string
		wantLeader, wantLocal float64
	}{
		{name: "forwarded", query: "", wantLeader: 1},
		{name: "fell back", query: "?status=503", wantLocal: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaderBefore, _ := testutil.GetCounterMetricValue(forwardedReads.WithLabelValues("leader"))
			localBefore, _ := testutil.GetCounterMetricValue(forwardedReads.WithLabelValues("local"))
			resp, err := http.Get(server.URL + views + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			leaderAfter, _ := testutil.GetCounterMetricValue(forwardedReads.WithLabelValues("leader"))
			localAfter, _ := testutil.GetCounterMetricValue(forwardedReads.WithLabelValues("local"))
			if leaderAfter-leaderBefore != tc.wantLeader || localAfter-localBefore != tc.wantLocal {
				t.Errorf("leader +%v, local +%v; want +%v, +%v", leaderAfter-leaderBefore, localAfter-localBefore, tc.wantLeader, tc.wantLocal)
			}
		})
	}
}

// A leader gone silent (its node lost: no reset, no answer) is noticed by
// the connection's health check, and the read is served here, within
// seconds rather than at the request's timeout.
func TestASilentLeaderIsNoticed(t *testing.T) {
	t.Parallel() // it waits seconds, as does TestAWedgedLeaderIsNotWaitedFor
	leader, caBundle := peerServer(t, &servedBy{name: "leader"})
	relay, silence := silenceableRelay(t, strings.TrimPrefix(leader.URL, "https://"))
	server := follower(t, relay, caBundle, &servedBy{name: "local"})
	if got := servedFor(t, server); got != "leader" {
		t.Fatalf("before the silence: served by %q", got)
	}
	silence()
	start := time.Now()
	if got := servedFor(t, server); got != "local" {
		t.Errorf("with the leader silent: served by %q", got)
	}
	if took, bound := time.Since(start), peerPingAfter+peerPingTimeout+3*time.Second; took > bound {
		t.Errorf("the read waited %s for a silent leader, want at most %s", took, bound)
	}
}

// A leader that answers the connection's pings but not the read (its
// handler wedged) has the read served here after peerHeaderTimeout, not
// held until the client gives up.
func TestAWedgedLeaderIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	wedged := make(chan struct{})
	leader, caBundle := peerServer(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-req.Context().Done():
		case <-wedged:
		}
	}))
	defer close(wedged)
	server := follower(t, strings.TrimPrefix(leader.URL, "https://"), caBundle, &servedBy{name: "local"})
	start := time.Now()
	if got := servedFor(t, server); got != "local" {
		t.Errorf("with the leader's handler wedged: served by %q", got)
	}
	if took, bound := time.Since(start), peerHeaderTimeout+3*time.Second; took > bound {
		t.Errorf("the read waited %s for a wedged leader, want at most %s", took, bound)
	}
}

// servedFor reads NodeEndpoints through server and returns who answered.
func servedFor(t *testing.T, server *httptest.Server) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(server.URL + "/apis/topology.gridview.io/v1alpha1/nodeendpoints")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// silenceableRelay passes TCP connections on to target until silenced; then
// it keeps them open and passes nothing, as a lost node does.
func silenceableRelay(t *testing.T, target string) (string, func()) {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	var silent atomic.Bool
	pass := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if err != nil {
				return
			}
			if silent.Load() {
				continue
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
	}
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			if silent.Load() {
				continue // accepted and never answered
			}
			upstream, err := net.Dial("tcp", target)
			if err != nil {
				_ = conn.Close()
				continue
			}
			t.Cleanup(func() { _ = conn.Close(); _ = upstream.Close() })
			go pass(upstream, conn)
			go pass(conn, upstream)
		}
	}()
	return listener.Addr().String(), func() { silent.Store(true) }
}
