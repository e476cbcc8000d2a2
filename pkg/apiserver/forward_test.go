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
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	restclient "k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

const peerServiceName = "gridview-apiserver.gridview-system.svc"

// servedBy answers with the name of the server that handled a request and
// records the headers it got.
type servedBy struct {
	name string
	mu   sync.Mutex
	got  []http.Header
}

func (s *servedBy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	s.got = append(s.got, req.Header.Clone())
	s.mu.Unlock()
	if status, err := strconv.Atoi(req.URL.Query().Get("status")); err == nil {
		w.WriteHeader(status)
	}
	_, _ = io.WriteString(w, s.name)
}

func (s *servedBy) requests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// peerServer is a replica serving a certificate for the Service's DNS name,
// self-signed: its PEM is the caBundle that trusts it.
func peerServer(t *testing.T, handler http.Handler) (*httptest.Server, []byte) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(peerServiceName, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewUnstartedServer(handler)
	server.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	server.EnableHTTP2 = true // as gridview-apiserver serves
	server.StartTLS()
	t.Cleanup(server.Close)
	return server, certPEM
}

// apiService is the APIService the aggregator reaches gridview by.
func apiService(caBundle []byte) runtime.Object {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": apiServiceName},
		"spec": map[string]any{
			"caBundle": base64.StdEncoding.EncodeToString(caBundle),
			"service":  map[string]any{"namespace": "gridview-system", "name": "gridview-apiserver"},
		},
	}}
}

// followerHolds is a resourceVersion the follower serves watches from.
const followerHolds = "7"

// follower is a replica that does not lead: leaderAt is where the Lease
// says the leader is, trusted by caBundle.
func follower(t *testing.T, leaderAt string, caBundle []byte, local http.Handler) *httptest.Server {
	t.Helper()
	return followerOf(t, leaderAt, leaderAt, caBundle, local)
}

// followerOf is a follower whose views follow the inputs of the replica at
// followedAt, which may no longer lead.
func followerOf(t *testing.T, leaderAt, followedAt string, caBundle []byte, local http.Handler) *httptest.Server {
	t.Helper()
	scheme := runtime.NewScheme()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, nil, apiService(caBundle))
	reads := &leaderReads{identity: "follower@10.0.0.2:443", leader: func() (string, bool) { return leaderAt, leaderAt != "" },
		refusesPeers: func() error { return nil }, waitsForPredecessor: func() error { return nil },
		// It holds the history from resourceVersion 7 on, no further back.
		servesWatch: func(_ context.Context, resourceVersion string) bool { return resourceVersion == followerHolds }}
	reads.trust.Store(newPeerTrust(&restclient.Config{BearerToken: "follower-token"}, client))
	if followedAt != "" {
		reads.followed.Store(&followedAt)
	}
	server := httptest.NewServer(withRequestInfo(t, reads.wrap(local)))
	t.Cleanup(server.Close)
	return server
}

// withRequestInfo resolves what a request is about, as the server's filters
// before leaderReads do.
func withRequestInfo(t *testing.T, handler http.Handler) http.Handler {
	resolver := &genericapirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, err := resolver.NewRequestInfo(req)
		if err != nil {
			t.Errorf("reading the request: %v", err)
		}
		handler.ServeHTTP(w, req.WithContext(genericapirequest.WithRequestInfo(req.Context(), info)))
	})
}

func TestReadsOfNodeEndpointsGoToTheLeader(t *testing.T) {
	leaderHandler := &servedBy{name: "leader"}
	leader, caBundle := peerServer(t, leaderHandler)
	rogue, rogueCA := peerServer(t, &servedBy{name: "rogue"})
	leaderAt := strings.TrimPrefix(leader.URL, "https://")
	const views = "/apis/topology.gridview.io/v1alpha1/namespaces/default/nodeendpoints"

	for _, tc := range []struct {
		name, method, path string
		header             http.Header
		leaderAt           string
		// followedAt is the replica whose inputs the follower follows;
		// empty: the leader's.
		followedAt string
		caBundle   []byte
		want       string
	}{
		{name: "list", method: http.MethodGet, path: views + "?fieldSelector=nodeName%3Dn1", leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
		{name: "get", method: http.MethodGet, path: views + "/n1..s1", leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
		{name: "watch", method: http.MethodGet, path: views + "?watch=true", leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
		{name: "a watch from the follower's history", method: http.MethodGet, path: views + "?watch=true&resourceVersion=" + followerHolds, leaderAt: leaderAt, caBundle: caBundle, want: "local"},
		{name: "a watch from the history of a leader that no longer leads", method: http.MethodGet, path: views + "?watch=true&resourceVersion=" + followerHolds,
			leaderAt: leaderAt, followedAt: "10.0.0.9:443", caBundle: caBundle, want: "leader"},
		{name: "a watch from before the follower's history", method: http.MethodGet, path: views + "?watch=true&resourceVersion=3", leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
		{name: "a list at a resourceVersion the follower holds", method: http.MethodGet, path: views + "?resourceVersion=" + followerHolds, leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
		{name: "a get at a resourceVersion the follower holds", method: http.MethodGet, path: views + "/n1..s1?resourceVersion=" + followerHolds, leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
		{name: "cluster-wide list", method: http.MethodGet, path: "/apis/topology.gridview.io/v1alpha1/nodeendpoints", leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
		{name: "ServiceGrids are in the shared etcd", method: http.MethodGet, path: "/apis/topology.gridview.io/v1alpha1/namespaces/default/servicegrids", leaderAt: leaderAt, caBundle: caBundle, want: "local"},
		{name: "a write is never forwarded", method: http.MethodPost, path: views, leaderAt: leaderAt, caBundle: caBundle, want: "local"},
		{name: "already forwarded", method: http.MethodGet, path: views, header: http.Header{forwardedByHeader: {"other"}}, leaderAt: leaderAt, caBundle: caBundle, want: "local"},
		{name: "this replica leads", method: http.MethodGet, path: views, caBundle: caBundle, want: "local"},
		{name: "the leader is gone", method: http.MethodGet, path: views, leaderAt: "127.0.0.1:1", caBundle: caBundle, want: "local"},
		{name: "the Lease names a server the APIService does not trust", method: http.MethodGet, path: views,
			leaderAt: strings.TrimPrefix(rogue.URL, "https://"), caBundle: caBundle, want: "local"},
		{name: "the APIService trusts a CA the leader does not serve", method: http.MethodGet, path: views, leaderAt: leaderAt, caBundle: rogueCA, want: "local"},
		{name: "the leader's views are not loaded", method: http.MethodGet, path: views + "?status=503", leaderAt: leaderAt, caBundle: caBundle, want: "local"},
		{name: "the leader refuses this replica", method: http.MethodGet, path: views + "?status=403", leaderAt: leaderAt, caBundle: caBundle, want: "local"},
		{name: "the leader is too busy", method: http.MethodGet, path: views + "?status=429", leaderAt: leaderAt, caBundle: caBundle, want: "local"},
		{name: "a 410 is about the read", method: http.MethodGet, path: views + "?watch=true&status=410", leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
		{name: "a 404 is about the read", method: http.MethodGet, path: views + "/n1..s9?status=404", leaderAt: leaderAt, caBundle: caBundle, want: "leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := followerOf(t, tc.leaderAt, cmp.Or(tc.followedAt, tc.leaderAt), tc.caBundle, &servedBy{name: "local"})
			req, err := http.NewRequest(tc.method, server.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for name, values := range tc.header {
				req.Header[name] = values
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != tc.want {
				t.Errorf("served by %q, want %q", body, tc.want)
			}
		})
	}
}

// A replica restarted in place, while the Lease still names the process
// before it, refuses the reads another replica forwards to that address, and
// that replica serves them itself: its history, not the restarted one's new
// numbering, is what the clients resume from. Once that replica asked for
// its inputs, the restarted one refuses its own clients' reads too, which
// they ask again.
func TestAReplicaRestartedInPlaceRefusesForwardedReads(t *testing.T) {
	var asked atomic.Bool
	restarted := &leaderReads{identity: "new@10.0.0.1:443", leader: func() (string, bool) { return "", false },
		refusesPeers: func() error { return errPredecessorLeads },
		waitsForPredecessor: func() error {
			if asked.Load() {
				return errPredecessorLeads
			}
			return nil
		}}
	restartedServer, caBundle := peerServer(t, withRequestInfo(t, restarted.wrap(&servedBy{name: "restarted"})))
	server := follower(t, strings.TrimPrefix(restartedServer.URL, "https://"), caBundle, &servedBy{name: "local"})
	const views = "/apis/topology.gridview.io/v1alpha1/namespaces/default/nodeendpoints"
	const grids = "/apis/topology.gridview.io/v1alpha1/namespaces/default/servicegrids"
	for _, path := range []string{views + "?fieldSelector=nodeName%3Dn1", views + "?watch=true&resourceVersion=3"} {
		resp, err := http.Get(server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || string(body) != "local" {
			t.Errorf("GET %s: served by %q (%v), want the replica it reached", path, body, err)
		}
	}

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caBundle)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: peerServiceName}}}
	read := func(path, forwardedBy string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodGet, restartedServer.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if forwardedBy != "" {
			req.Header.Set(forwardedByHeader, forwardedBy)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp, string(body)
	}
	refused := func(resp *http.Response, body string) bool {
		return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" && strings.Contains(body, "restarted before it expired")
	}
	const peer = "follower@10.0.0.2:443"
	if resp, body := read(views, peer); !refused(resp, body) {
		t.Errorf("a forwarded read on the restarted replica: %s, Retry-After %q, %q; want 503 saying why", resp.Status, resp.Header.Get("Retry-After"), body)
	}
	if resp, body := read(views, ""); resp.StatusCode != http.StatusOK || body != "restarted" {
		t.Errorf("a client's read on the restarted replica, which no other asked for its inputs: %s, %q; want it served", resp.Status, body)
	}
	asked.Store(true)
	if resp, body := read(views, ""); !refused(resp, body) {
		t.Errorf("a client's read on the restarted replica, once another asked for its inputs: %s, Retry-After %q, %q; want 503 saying why", resp.Status, resp.Header.Get("Retry-After"), body)
	}
	// Only reads of NodeEndpoints are refused.
	for _, forwardedBy := range []string{peer, ""} {
		if resp, body := read(grids, forwardedBy); resp.StatusCode != http.StatusOK || body != "restarted" {
			t.Errorf("a read of ServiceGrids on the restarted replica (forwarded by %q): %s, %q; want it served", forwardedBy, resp.Status, body)
		}
	}
}

// The leader learns the follower's identity from its own credentials, never
// the caller's token or identity headers, which the follower already
// authenticated and authorized.
func TestAForwardedReadCarriesTheFollowersCredentialsOnly(t *testing.T) {
	leaderHandler := &servedBy{name: "leader"}
	leader, caBundle := peerServer(t, leaderHandler)
	server := follower(t, strings.TrimPrefix(leader.URL, "https://"), caBundle, &servedBy{name: "local"})
	req, err := http.NewRequest(http.MethodGet, server.URL+"/apis/topology.gridview.io/v1alpha1/nodeendpoints", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer caller-token")
	req.Header.Set("Impersonate-User", "system:admin")
	req.Header.Set("X-Remote-User", "system:admin")
	req.Header.Set("X-Remote-Group", "system:masters")
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	got := leaderHandler.requests()
	if len(got) != 1 {
		t.Fatalf("the leader got %d requests, want 1", len(got))
	}
	h := got[0]
	if auth := h.Get("Authorization"); auth != "Bearer follower-token" {
		t.Errorf("Authorization %q, want the follower's token", auth)
	}
	for _, name := range []string{"Impersonate-User", "X-Remote-User", "X-Remote-Group"} {
		if v := h.Get(name); v != "" {
			t.Errorf("%s reached the leader: %q", name, v)
		}
	}
	if h.Get(forwardedByHeader) != "follower@10.0.0.2:443" {
		t.Errorf("%s = %q, want the follower's identity", forwardedByHeader, h.Get(forwardedByHeader))
	}
	if h.Get("Accept") != "application/vnd.kubernetes.protobuf" {
		t.Errorf("Accept %q did not reach the leader", h.Get("Accept"))
	}
}

// A watch forwarded to the leader streams: each event reaches the client
// while the leader's response is still open.
func TestAForwardedWatchStreams(t *testing.T) {
	release := make(chan struct{})
	leader, caBundle := peerServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "first event\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "second event\n")
	}))
	server := follower(t, strings.TrimPrefix(leader.URL, "https://"), caBundle, &servedBy{name: "local"})
	resp, err := http.Get(server.URL + "/apis/topology.gridview.io/v1alpha1/nodeendpoints?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	lines := bufio.NewReader(resp.Body)
	first, err := lines.ReadString('\n')
	if err != nil || first != "first event\n" {
		t.Fatalf("first line %q, %v: the event did not stream through", first, err)
	}
	close(release)
	if second, err := lines.ReadString('\n'); second != "second event\n" {
		t.Errorf("second line %q, %v", second, err)
	}
}

// TestAForwardedWatchEndsWhenTheLeaderGoes checks that a watch whose
// leader's stream is cut ends as a watch at its timeout does, so that the
// client watches again from its resourceVersion rather than relisting.
func TestAForwardedWatchEndsWhenTheLeaderGoes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		path    string
		wantErr bool
	}{
		{name: "a watch ends", path: "/apis/topology.gridview.io/v1alpha1/nodeendpoints?watch=true"},
		{name: "a list is cut", path: "/apis/topology.gridview.io/v1alpha1/nodeendpoints", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leader, caBundle := peerServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "first event\n")
				w.(http.Flusher).Flush()
				// The stream is cut, as by a proxy whose upstream died.
				panic(http.ErrAbortHandler)
			}))
			server := follower(t, strings.TrimPrefix(leader.URL, "https://"), caBundle, &servedBy{name: "local"})
			resp, err := http.Get(server.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			if string(body) != "first event\n" {
				t.Errorf("body %q, want the leader's first event", body)
			}
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Errorf("reading to the end: %v, want an error: %t", err, tc.wantErr)
			}
		})
	}
}
