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
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/registry/topology/nodeendpoints"
	"github.com/gridview/gridview/pkg/viewstore"
)

// listQueueTimeout is how long a list waits for a slot before it is told to
// come back: well inside the generic server's one-minute request timeout.
const listQueueTimeout = 30 * time.Second

// listsPerUser bounds the lists of NodeEndpoints one identity has at once,
// built or being written: a node's wrapper has one at a time.
const listsPerUser = 4

// listSlots bounds the lists of NodeEndpoints built and encoded at once.
// After a restart every node's watcher may relist at the same moment; built
// all at once, those lists would hold gigabytes for work the CPUs do a few
// at a time anyway. A list waits for a slot, in
// arrival order as Go's channel senders are served, and gets 429 with
// Retry-After if none frees up in time. API Priority and Fairness does not
// bound them: it charges a list by the objects storage counts, and the
// views are not in storage.
//
// A node's list of its own views (what its wrapper asks for) takes a slot
// of the nodes' pool, so that no other list, an operator's or a namespace
// reader's, delays it. A list holds its slot while it is built and encoded,
// into memory, and while it waits for room among the answers its pool is
// sending, not while a client reads it: a client that does not read holds
// no slot, only its answer's bytes of the pool's budget. No identity has
// more than listsPerUser lists at once.
type listSlots struct {
	node, wide *listPool

	mu     sync.Mutex
	byUser map[string]int
}

// listPool is a number of slots, and a budget of bytes for the answers
// being sent.
type listPool struct {
	slots chan struct{}
	// sending holds the bytes of the answers being sent, at most budget.
	sending *semaphore.Weighted
	budget  int64
}

// answerBudget is what each pool's answers being sent may hold: at
// edge-10k, fifty nodes' lists of their own views.
const answerBudget = 64 << 20

func newListSlots() *listSlots {
	n := max(4, 2*runtime.GOMAXPROCS(0))
	return newListSlotsOf(n, n, answerBudget)
}

func newListSlotsOf(node, wide int, budget int64) *listSlots {
	pool := func(n int) *listPool {
		return &listPool{slots: make(chan struct{}, n), sending: semaphore.NewWeighted(budget), budget: budget}
	}
	return &listSlots{node: pool(node), wide: pool(wide), byUser: map[string]int{}}
}

func (s *listSlots) wrap(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := nodeEndpointsRequest(req)
		if !ok || info.Verb != "list" {
			handler.ServeHTTP(w, req)
			return
		}
		gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
		requester, _ := genericapirequest.UserFrom(req.Context())
		name := ""
		if requester != nil {
			name = requester.GetName()
		}
		if !s.enter(name) {
			err := apierrors.NewTooManyRequests(fmt.Sprintf("%q has %d lists of nodeendpoints in flight already; retry once one is read", name, listsPerUser), 1)
			responsewriters.ErrorNegotiated(err, Codecs, gv, w, req)
			return
		}
		defer s.leave(name)
		pool := s.wide
		if ownViews(requester, req) {
			pool = s.node
		}
		wait := time.NewTimer(listQueueTimeout)
		defer wait.Stop()
		select {
		case pool.slots <- struct{}{}:
			pool.serve(w, req, handler)
		case <-req.Context().Done():
		case <-wait.C:
			err := apierrors.NewTooManyRequests("too many lists of nodeendpoints are being built; retry", 1)
			responsewriters.ErrorNegotiated(err, Codecs, gv, w, req)
		}
	})
}

// serve builds the answer in the slot taken, waits for room in the budget,
// gives the slot back and sends the answer.
func (p *listPool) serve(w http.ResponseWriter, req *http.Request, handler http.Handler) {
	var once sync.Once
	release := func() { once.Do(func() { <-p.slots }) }
	defer release() // a handler that panics gives its slot back too
	answer := &bufferedResponse{header: w.Header()}
	handler.ServeHTTP(answer, req)
	size := min(int64(answer.body.Len()), p.budget)
	if err := p.sending.Acquire(req.Context(), size); err != nil {
		return // the client went
	}
	defer p.sending.Release(size)
	release()
	answer.writeTo(w)
}

// enter counts a list of user's, unless user has listsPerUser already.
func (s *listSlots) enter(user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byUser[user] >= listsPerUser {
		return false
	}
	s.byUser[user]++
	return true
}

func (s *listSlots) leave(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byUser[user]--; s.byUser[user] <= 0 {
		delete(s.byUser, user)
	}
}

// ownViews says whether a list is a node's of its own views: asked by
// system:node:<name>, selecting that node. Another identity's list of one
// node takes a slot of the other pool, or any reader could crowd nodes out
// by naming one; a selector that does not parse too, and the list refuses
// it.
func ownViews(requester user.Info, req *http.Request) bool {
	node, isNode, err := nodeendpoints.NodeOf(requester)
	if !isNode || err != nil {
		return false
	}
	selector, err := fields.ParseSelector(req.URL.Query().Get("fieldSelector"))
	if err != nil {
		return false
	}
	selected, ok := viewstore.Filter{Fields: selector}.Shard()
	return ok && selected == node
}

// bufferedResponse keeps an answer in memory until its slot is released.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

var (
	_ http.ResponseWriter = &bufferedResponse{}
	_ http.Flusher        = &bufferedResponse{}
)

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// Flush keeps the answer: it goes whole once built.
func (b *bufferedResponse) Flush() {}

// writeTo sends the answer; the header was written into the client's own.
func (b *bufferedResponse) writeTo(w http.ResponseWriter) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	// A client that went gets no more of its list, and needs none.
	_, _ = b.body.WriteTo(w)
}

// nodeEndpointsRequest returns the request's info when it is a request of
// the nodeendpoints resource itself, which only this replica's views answer.
func nodeEndpointsRequest(req *http.Request) (*genericapirequest.RequestInfo, bool) {
	info, ok := genericapirequest.RequestInfoFrom(req.Context())
	if !ok || !info.IsResourceRequest || info.APIGroup != topology.GroupName ||
		info.Resource != "nodeendpoints" || info.Subresource != "" {
		return nil, false
	}
	return info, true
}
