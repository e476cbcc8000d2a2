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
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// serve runs one request in the background; its recorder is complete once
// done is closed.
func serve(t *testing.T, handler http.Handler, path string) (*httptest.ResponseRecorder, chan struct{}) {
	t.Helper()
	resolver := &genericapirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	req := httptest.NewRequest(http.MethodGet, path, nil)
	info, err := resolver.NewRequestInfo(req)
	if err != nil {
		t.Fatal(err)
	}
	req = req.WithContext(genericapirequest.WithRequestInfo(req.Context(), info))
	rec, done := httptest.NewRecorder(), make(chan struct{})
	go func() {
		defer close(done)
		handler.ServeHTTP(rec, req)
	}()
	return rec, done
}

func TestListsOfNodeEndpointsWaitForASlot(t *testing.T) {
	const views = "/apis/topology.gridview.io/v1alpha1/namespaces/default/nodeendpoints"
	synctest.Test(t, func(t *testing.T) {
		// Lists hold on until released; the rest only count.
		release := make(chan struct{})
		building, others := 0, 0
		handler := newListSlotsOf(1, 1, 1<<20).wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.URL.Path != views || req.URL.Query().Has("watch") {
				others++
				return
			}
			building++
			<-release
			building--
		}))

		_, firstDone := serve(t, handler, views)
		synctest.Wait()
		if building != 1 {
			t.Fatalf("%d lists building, want the first", building)
		}
		// A watch, a get and a list of ServiceGrids need no slot.
		for i, path := range []string{views + "?watch=true", views + "/n1..s1", "/apis/topology.gridview.io/v1alpha1/servicegrids"} {
			_, done := serve(t, handler, path)
			synctest.Wait()
			if others != i+1 {
				t.Errorf("%s waits for a slot", path)
			}
			<-done
		}

		second, secondDone := serve(t, handler, views)
		synctest.Wait()
		if building != 1 {
			t.Fatalf("%d lists building, want the second to wait", building)
		}
		time.Sleep(listQueueTimeout)
		<-secondDone
		if second.Code != http.StatusTooManyRequests || second.Header().Get("Retry-After") != "1" {
			t.Errorf("a list that found no slot in time: %d, Retry-After %q; want 429 and 1", second.Code, second.Header().Get("Retry-After"))
		}

		third, thirdDone := serve(t, handler, views)
		synctest.Wait()
		release <- struct{}{}
		<-firstDone
		synctest.Wait()
		if building != 1 {
			t.Errorf("%d lists building after the first ended, want the waiting one", building)
		}
		release <- struct{}{}
		<-thirdDone
		if third.Code != http.StatusOK {
			t.Errorf("the list that got a slot: %d", third.Code)
		}
	})
}

// Readers that ask for a list and never read it, from one user or from many,
// hold no slot: a node's own list, and another user's wide one, are served
// at once; and one user's lists in flight are bounded.
func TestReadersThatNeverReadHoldNoSlot(t *testing.T) {
	const (
		views     = "/apis/topology.gridview.io/v1alpha1/namespaces/default/nodeendpoints"
		ownList   = "/apis/topology.gridview.io/v1alpha1/nodeendpoints?fieldSelector=nodeName%3Dedge-1"
		answerLen = 8 << 20 // more than the sockets between them buffer
	)
	answer := bytes.Repeat([]byte("x"), answerLen)
	for _, tc := range []struct {
		name    string
		stalled []string // the user of each reader that never reads
		// refused is how many of them get 429 at once.
		refused int
	}{
		{name: "one user", stalled: slices.Repeat([]string{"viewer"}, listsPerUser+2), refused: 2},
		{name: "many users", stalled: []string{"u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slots := newListSlotsOf(2, 2, 1<<30)
			server := httptest.NewServer(withTestUser(t, slots.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write(answer)
			}))))
			t.Cleanup(server.Close) // after the connections that never read close
			var refused atomic.Int32
			var stalled sync.WaitGroup
			for _, user := range tc.stalled {
				conn := askAndNeverRead(t, server, views, user)
				// Each reads the status line only: 429s come whole and small.
				stalled.Go(func() {
					status, _ := bufio.NewReaderSize(conn, 64).ReadString('\n')
					if strings.Contains(status, " 429 ") {
						refused.Add(1)
					}
				})
			}
			// Every stalled list was built and is being written, or refused.
			await(t, func() bool { return slots.inFlight() == len(tc.stalled)-tc.refused })

			client := &http.Client{Timeout: 5 * time.Second}
			for _, c := range []struct{ user, path string }{{"system:node:edge-1", ownList}, {"operator", views}} {
				req, _ := http.NewRequest(http.MethodGet, server.URL+c.path, nil)
				req.Header.Set("X-Test-User", c.user)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("%s's list while readers never read: %v", c.user, err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || err != nil || len(body) != answerLen {
					t.Errorf("%s's list while readers never read: %d, %d bytes, %v; want 200 and the whole answer", c.user, resp.StatusCode, len(body), err)
				}
			}
			stalled.Wait()
			if got := int(refused.Load()); got != tc.refused {
				t.Errorf("%d stalled lists refused, want %d (at most %d a user in flight)", got, tc.refused, listsPerUser)
			}
		})
	}
}

// askAndNeverRead sends a GET of path as user and reads nothing of the
// answer; the connection closes with the test.
func askAndNeverRead(t *testing.T, server *httptest.Server, path, user string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nX-Test-User: %s\r\n\r\n", path, user); err != nil {
		t.Fatal(err)
	}
	return conn
}

// The answers a pool is sending hold at most its budget of bytes: a list
// built beyond it keeps its slot until an answer is read or its client
// goes, as a list did before it could leave its slot; the nodes' pool has a
// budget of its own. A list of one node by another identity than that
// node's takes a slot of the other pool.
func TestAnswersBeingSentAreBoundedByBytes(t *testing.T) {
	const (
		views     = "/apis/topology.gridview.io/v1alpha1/namespaces/default/nodeendpoints"
		ownList   = "/apis/topology.gridview.io/v1alpha1/nodeendpoints?fieldSelector=nodeName%3Dedge-1"
		answerLen = 8 << 20
	)
	answer := bytes.Repeat([]byte("x"), answerLen)
	slots := newListSlotsOf(2, 2, answerLen)
	var built atomic.Int32
	server := httptest.NewServer(withTestUser(t, slots.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(answer)
		built.Add(1)
	}))))
	t.Cleanup(server.Close) // after the connections that never read close

	first := askAndNeverRead(t, server, views, "u1")
	await(t, func() bool { return slots.inFlight() == 1 && len(slots.wide.slots) == 0 })
	// Another user's list of edge-1 is no node's own: it is built in a
	// slot of the wide pool, and waits there for the first answer's bytes.
	askAndNeverRead(t, server, ownList, "viewer")
	await(t, func() bool { return built.Load() == 2 && slots.inFlight() == 2 })
	// Built: nothing says it now waits for the budget rather than being
	// about to leave its slot, so only a window shows that it keeps it.
	time.Sleep(100 * time.Millisecond)
	if held := len(slots.wide.slots); held != 1 {
		t.Fatalf("%d wide slots held while one answer, the budget, is being sent; want the second list's", held)
	}

	client := &http.Client{Timeout: 5 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, server.URL+ownList, nil)
	req.Header.Set("X-Test-User", "system:node:edge-1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("edge-1's own list while the wide pool's budget is spent: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(body) != answerLen {
		t.Errorf("edge-1's own list while the wide pool's budget is spent: %d, %d bytes", resp.StatusCode, len(body))
	}

	// The first client goes: the second answer is sent, out of its slot.
	first.Close()
	await(t, func() bool { return len(slots.wide.slots) == 0 })
}

// inFlight counts the lists being built or written.
func (s *listSlots) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, lists := range s.byUser {
		n += lists
	}
	return n
}

// withTestUser sets the request's info, and its user from X-Test-User, as
// the generic server's filters would.
func withTestUser(t *testing.T, handler http.Handler) http.Handler {
	resolver := &genericapirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, err := resolver.NewRequestInfo(req)
		if err != nil {
			t.Error(err)
			return
		}
		ctx := genericapirequest.WithRequestInfo(req.Context(), info)
		name := req.Header.Get("X-Test-User")
		var groups []string
		if strings.HasPrefix(name, "system:node:") {
			groups = []string{user.NodesGroup}
		}
		ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: name, Groups: groups})
		handler.ServeHTTP(w, req.WithContext(ctx))
	})
}

// await polls ok for up to ten seconds.
func await(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
