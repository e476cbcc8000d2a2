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
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync/atomic"

	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/viewstore"
)

// forwardedByHeader marks a read one replica forwarded to another. The
// receiver serves it itself, so that two replicas that each believe the
// other leads never pass a request back and forth. A caller that sets it
// only chooses the replica it reached, which it may read from anyway, or is
// refused by one that restarted in place (refusesPeers).
const forwardedByHeader = "X-Gridview-Forwarded-By"

// leaderReads sends reads of NodeEndpoints to the leader, unless this
// replica follows it and can answer as it would. A follower numbers view
// changes as the leader does, but only from the leader's state it loaded,
// and a moment after the leader: a client whose list went to one replica and
// whose re-watch goes to another (the aggregator picks an endpoint per
// request) must never get 410 and relist its whole view. So gets and lists
// go to the leader, and so do watches, except those from "0" or that resume
// from a resourceVersion the follower reached and still holds the history
// of: most of them, every node's re-watch after its watch timed out, which
// the follower then serves without a hop and without the leader's CPU. A read
// that cannot reach the leader is served here: a 410 and a relist are better
// than no answer.
type leaderReads struct {
	// identity names this replica in forwardedByHeader.
	identity string
	// leader is the address of the replica that leads when it is not this one.
	leader func() (string, bool)
	// refusesPeers says why this replica refuses reads another replica
	// forwards, which that replica then serves itself: it restarted in
	// place while the Lease still names the process before it, or has not
	// read the Lease yet.
	refusesPeers func() error
	// waitsForPredecessor says why this replica leaves its clients' reads
	// to the other replica: it restarted in place, and the other replica,
	// which asked for its inputs, holds the history the clients resume
	// from. Until its readiness probe fails, the aggregator still sends
	// reads here, which would otherwise be answered in a new numbering.
	waitsForPredecessor func() error
	// servesWatch says whether this replica serves a watch from a
	// resourceVersion itself; set by New, before the server serves.
	servesWatch func(ctx context.Context, resourceVersion string) bool
	// followed is the address of the leader whose inputs this replica
	// follows, nil when it follows none: it serves watches as a follower
	// only while that one still leads.
	followed atomic.Pointer[string]
	// trust is set once the server's clients exist; until then reads are
	// served here.
	trust atomic.Pointer[peerTrust]
}

// newLeaderReads sends reads of NodeEndpoints to the leader l names.
func newLeaderReads(l *leadership) *leaderReads {
	return &leaderReads{identity: l.identity, leader: l.leaderAddress,
		refusesPeers: l.refusesPeers, waitsForPredecessor: l.waitsForPredecessor}
}

// wrap runs after authentication and authorization: the request was
// authorized for its user here, and the leader authorizes this replica's own
// identity for the same read.
func (f *leaderReads) wrap(local http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, ok := nodeEndpointsRequest(req); ok {
			// A peer serves a refused read itself; a client (client-go)
			// asks again after Retry-After, from the same resourceVersion,
			// and reaches the other replica once this one is not ready.
			refuses := f.waitsForPredecessor
			if req.Header.Get(forwardedByHeader) != "" {
				refuses = f.refusesPeers
			}
			if err := refuses(); err != nil {
				w.Header().Set("Retry-After", "1")
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		leader, ok := f.leaderFor(req)
		if !ok {
			local.ServeHTTP(w, req)
			return
		}
		if f.servesAsFollower(req, leader) {
			forwardedReads.WithLabelValues("follower").Inc()
			local.ServeHTTP(w, req.WithContext(viewstore.AsFollower(req.Context())))
			return
		}
		transport, err := f.trust.Load().roundTripper(req.Context())
		if err != nil {
			klog.ErrorS(err, "Serving a read here instead of on the leader", "leader", leader)
			forwardedReads.WithLabelValues("local").Inc()
			local.ServeHTTP(w, req)
			return
		}
		proxy := &httputil.ReverseProxy{
			Rewrite: func(out *httputil.ProxyRequest) {
				out.Out.URL.Scheme, out.Out.URL.Host, out.Out.Host = "https", leader, ""
				stripCredentials(out.Out.Header)
				out.Out.Header.Set(forwardedByHeader, f.identity)
			},
			Transport:     transport,
			FlushInterval: -1, // watch events go out as they come
			ModifyResponse: func(resp *http.Response) error {
				if !aboutTheRead(resp.StatusCode) {
					return fmt.Errorf("the leader answered %s", resp.Status)
				}
				forwardedReads.WithLabelValues("leader").Inc()
				if resp.StatusCode == http.StatusOK && isWatch(req) {
					resp.Body = endsCleanly{resp.Body}
					// The leader's watch is set up: its API Priority and
					// Fairness bounded that, and this replica's seat
					// would be held for as long as it is proxied.
					utilflowcontrol.RequestDelegated(req.Context())
				}
				return nil
			},
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				// Nothing was written yet: the leader did not answer, or
				// answered for itself rather than for the read.
				klog.V(2).InfoS("Serving a read here instead of on the leader", "leader", leader, "err", err)
				forwardedReads.WithLabelValues("local").Inc()
				local.ServeHTTP(w, req)
			},
		}
		proxy.ServeHTTP(w, req)
	})
}

// aboutTheRead tells an answer about the read (its objects, 404, 410, 400)
// from one about the leader: it is not ready (503), too busy (429), failing
// (5xx), or does not accept this replica (401, 403: a broken RBAC must not
// break reads on every replica). Reads the leader answers for itself are
// served here.
func aboutTheRead(status int) bool {
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusTooManyRequests:
		return false
	case status >= 500:
		return false
	}
	return true
}

// leaderFor names the leader a request goes to: reads of NodeEndpoints that
// no replica forwarded yet, while another replica leads.
func (f *leaderReads) leaderFor(req *http.Request) (string, bool) {
	if req.Header.Get(forwardedByHeader) != "" || f.trust.Load() == nil {
		return "", false
	}
	info, ok := nodeEndpointsRequest(req)
	if !ok {
		return "", false
	}
	switch info.Verb {
	case "get", "list", "watch":
		return f.leader()
	}
	return "", false
}

// servesAsFollower says whether a read that leaderFor sends to leader is a
// watch this replica serves itself, as that leader's follower.
func (f *leaderReads) servesAsFollower(req *http.Request, leader string) bool {
	followed := f.followed.Load()
	return followed != nil && *followed == leader && isWatch(req) &&
		f.servesWatch != nil && f.servesWatch(req.Context(), req.URL.Query().Get("resourceVersion"))
}

func isWatch(req *http.Request) bool {
	info, ok := nodeEndpointsRequest(req)
	return ok && info.Verb == "watch"
}

// endsCleanly ends a forwarded watch as the leader would at its timeout
// when the leader's stream breaks (it stopped, or died): a cut stream reaches
// the client as an error, after which client-go relists, where an ended
// watch is watched again from the client's last resourceVersion, which the
// replica that leads next holds too.
type endsCleanly struct{ io.ReadCloser }

func (b endsCleanly) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		klog.V(2).InfoS("The leader's watch stream broke; ending the forwarded watch", "err", err)
		err = io.EOF
	}
	return n, err
}

// stripCredentials removes what names the caller to this replica: the
// request goes out with this replica's own credentials, never with a
// caller's token or an identity the leader would take from headers.
func stripCredentials(h http.Header) {
	h.Del("Authorization")
	for name := range h {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "impersonate-") || strings.HasPrefix(lower, "x-remote-") {
			h.Del(name)
		}
	}
}
