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
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/viewstore"
)

// inputsPath serves the leader's inputs to the replicas that follow it: a
// non-resource URL, which RBAC grants gridview-apiserver's ServiceAccount
// alone. It carries every Service and EndpointSlice of the cluster.
const inputsPath = "/replication/inputs"

// serveInputs answers a follower's read of this replica's inputs, from the
// position its seq and rv parameters name, or from the whole state without
// them, until the request ends. A replica that follows another refuses: it
// serves only inputs it applied itself, so that two replicas never follow
// each other. One that numbers on its own serves them whether it holds the
// Lease or not: a leader that stopped leading while kube-apiserver was down
// numbers on as before, and its follower keeps following it. refuses says
// why it serves no follower now (leadership.refusesFollower).
func serveInputs(feed *viewstore.Feed, refuses func() error) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if err := refuses(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		from, err := inputsPosition(req.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "the connection cannot stream", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		switch err := feed.ServeInputs(req.Context(), w, flusher.Flush, from); {
		case errors.Is(err, viewstore.ErrFollowing), errors.Is(err, viewstore.ErrNotLoaded):
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		case err != nil && req.Context().Err() == nil:
			klog.V(2).InfoS("Stopped serving inputs to a follower", "err", err)
		}
	}
}

// inputsPosition reads the seq and rv parameters: both or neither.
func inputsPosition(query url.Values) (*viewstore.Position, error) {
	seq, rv := query.Get("seq"), query.Get("rv")
	if seq == "" && rv == "" {
		return nil, nil
	}
	var from viewstore.Position
	var err error
	if from.Seq, err = strconv.ParseUint(seq, 10, 64); err != nil {
		return nil, fmt.Errorf("seq: invalid value %q: must be a decimal number, with rv", seq)
	}
	if from.RV, err = strconv.ParseUint(rv, 10, 64); err != nil {
		return nil, fmt.Errorf("rv: invalid value %q: must be a decimal number, with seq", rv)
	}
	return &from, nil
}

// followRetry is how long a follower waits after it stopped following
// before it reads the leader's inputs again.
const followRetry = 5 * time.Second

// numbering is how this replica numbers view changes: on its own while it
// leads, as the leader does while it follows it.
type numbering struct {
	feed       *viewstore.Feed
	leadership *leadership
	reads      *leaderReads
	// tried is set once a first attempt to follow the leader ended.
	tried atomic.Bool
}

// followBeforeReady is how long a replica follows the leader before it is
// ready: every watch got a bookmark since it loaded the leader's state (the
// store's BookmarkInterval), so every client's resourceVersion is one its
// history holds. A rolling update with surge takes the leader away once the
// new replica is ready, and the Lease may go to that one rather than to a
// replica that followed for long: its clients would otherwise relist.
var followBeforeReady = viewstore.DefaultOptions.BookmarkInterval + 10*time.Second

// settled says whether this replica leads, or has numbered view changes as
// the leader does for followBeforeReady, or has tried to follow: a replica is
// ready only from then, so that a rolling update takes the leader away only
// once another replica holds the history its clients resume from. A replica
// that cannot follow (RBAC, the network) is ready after one attempt, as every
// replica was before; its takeover makes the clients relist.
func (n *numbering) settled() bool {
	_, another := n.leadership.leaderAddress()
	return !another || n.feed.FollowedFor() >= followBeforeReady || n.tried.Load()
}

// follow makes this replica's views follow the leader's inputs while
// another replica holds the Lease, so that its store numbers every change as
// the leader does and holds the history the leader's clients resume from
// once it leads. It stops following when the Lease moves, here or to a third
// replica, and then numbers changes on its own until it follows again.
func (n *numbering) follow(ctx context.Context) {
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		leader, ok := n.leadership.leaderAddress()
		if !ok || n.reads.trust.Load() == nil {
			return false, nil
		}
		following, stop := context.WithCancelCause(ctx)
		go func() {
			var cause error
			_ = wait.PollUntilContextCancel(following, 500*time.Millisecond, false, func(context.Context) (bool, error) {
				now, another := n.leadership.leaderAddress()
				var ends bool
				ends, cause = followingEnds(leader, now, another)
				return ends, nil
			})
			stop(cause)
		}()
		klog.InfoS("Following the leader's inputs", "leader", leader)
		n.reads.followed.Store(&leader)
		err := n.feed.Follow(following, func(ctx context.Context, from *viewstore.Position) (io.ReadCloser, error) {
			return openInputs(ctx, n.reads.trust.Load(), leader, from)
		})
		n.reads.followed.Store(nil)
		stop(nil)
		n.tried.Store(true)
		if err != nil {
			klog.ErrorS(err, "Stopped following the leader's inputs", "leader", leader)
		} else {
			klog.InfoS("Stopped following the leader's inputs", "leader", leader)
		}
		select {
		case <-ctx.Done():
		case <-time.After(followRetry):
		}
		return false, nil
	})
}

// followingEnds says whether following leader ends now that the Lease
// names now (ok: another replica holds it), and why: ErrAnotherLeads when
// neither the leader followed nor this replica leads.
func followingEnds(leader, now string, ok bool) (bool, error) {
	switch {
	case !ok:
		return true, nil
	case now != leader:
		return true, viewstore.ErrAnotherLeads
	}
	return false, nil
}

// openInputs reads the leader's inputs from a position, with this replica's
// own credentials, trusting the leader as the aggregator does.
func openInputs(ctx context.Context, trust *peerTrust, leader string, from *viewstore.Position) (io.ReadCloser, error) {
	transport, err := trust.roundTripper(ctx)
	if err != nil {
		return nil, err
	}
	target := url.URL{Scheme: "https", Host: leader, Path: inputsPath}
	if from != nil {
		target.RawQuery = url.Values{"seq": {strconv.FormatUint(from.Seq, 10)}, "rv": {strconv.FormatUint(from.RV, 10)}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("the leader answered %s: %s", resp.Status, body)
	}
	return resp.Body, nil
}
