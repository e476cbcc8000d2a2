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

package viewstore

import (
	"context"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/storage"

	"github.com/gridview/gridview/pkg/watchstream"
)

// freshWait bounds how long a read waits for a store that follows the
// leader to reach a resourceVersion the leader issued; freshPoll is how
// often it looks: coarse, since at a takeover every node's watch may wait
// at once, on the CPUs the store needs to get there. followerWait bounds how
// long a follower waits to reach a watch's resourceVersion before it sends
// the watch to the leader, which serves it at once.
const (
	freshWait    = 3 * time.Second
	freshPoll    = 50 * time.Millisecond
	followerWait = 500 * time.Millisecond
)

// AwaitFresh waits, while the store follows the leader, until it reaches
// the resourceVersion a read names (a resourceVersion, or a continue
// token's): the leader issued it for an input this replica has yet to
// apply, as when the leader's clients come here the moment it goes. One
// still beyond after freshWait is answered as kube-apiserver answers it,
// "Too large resource version", with a Retry-After. A store that numbers
// changes on its own answers such a resourceVersion as another process's
// (410), as before.
func (s *Store) AwaitFresh(ctx context.Context, resourceVersion, continueToken string) error {
	if !s.following.Load() {
		return nil
	}
	var want uint64
	if continueToken != "" && resourceVersion != "" && resourceVersion != "0" {
		return nil // the read itself refuses both
	}
	if continueToken != "" {
		token, err := decodeContinue(continueToken)
		if err != nil {
			return nil // the read itself says what is wrong
		}
		want = token.RV
	} else if rv, err := strconv.ParseUint(resourceVersion, 10, 64); err == nil {
		want = rv
	}
	if current, reached := s.awaitReached(ctx, want, freshWait); !reached {
		return storage.NewTooLargeResourceVersionError(want, current, 1)
	}
	return nil
}

// awaitReached waits up to wait, while the store follows the leader, until
// it reaches want, and says whether it did (or stopped following) and where
// it stands.
func (s *Store) awaitReached(ctx context.Context, want uint64, wait time.Duration) (uint64, bool) {
	deadline := time.Now().Add(wait)
	if end, ok := ctx.Deadline(); ok && end.Before(deadline) {
		deadline = end
	}
	for {
		current := s.resourceVersion()
		if want <= current || !s.following.Load() {
			return current, true
		}
		if time.Now().After(deadline) {
			return current, false
		}
		select {
		case <-ctx.Done():
			return current, false
		case <-time.After(freshPoll):
		}
	}
}

// ServesWatch says whether a replica that follows the leader serves a watch
// from resourceVersion itself rather than on the leader: a watch from any
// state ("0"), or one from a resourceVersion it reached and its history
// still holds, whose changes it numbers as the leader did. A watch from the
// latest state (""), from a resourceVersion it has yet to reach, or from
// before it loaded the leader's state, is the leader's to serve. The caller
// marks such a watch's context with AsFollower.
//
// A client re-watches the moment its watch ends, from a change the leader
// may have numbered a moment ago: the follower waits up to followerWait to
// reach it before it leaves the watch to the leader.
func (s *Store) ServesWatch(ctx context.Context, resourceVersion string) bool {
	if !s.following.Load() {
		return false
	}
	if rv, err := strconv.ParseUint(resourceVersion, 10, 64); err == nil && rv > 0 {
		s.awaitReached(ctx, rv, followerWait)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.servesWatch(resourceVersion)
}

// servesWatch is ServesWatch under the store's lock.
func (s *Store) servesWatch(resourceVersion string) bool {
	if !s.following.Load() || s.stream == nil {
		return false
	}
	if resourceVersion == "0" {
		return true
	}
	rv, err := strconv.ParseUint(resourceVersion, 10, 64)
	return err == nil && s.stream.Resumable(rv)
}

type asFollowerKey struct{}

// AsFollower marks a watch that ServesWatch gave this replica.
func AsFollower(ctx context.Context) context.Context {
	return context.WithValue(ctx, asFollowerKey{}, true)
}

// errNoLongerFollowing answers a watch given to this replica as the leader's
// follower that, by the time it started, the replica no longer served: it
// stopped following, or loaded a new state of the leader's. A 429 has
// client-go watch again, from the same resourceVersion, where another error
// would have it list again.
var errNoLongerFollowing = apierrors.NewTooManyRequests("this replica stopped following the leader, or loaded its state again, as the watch started: watch again", 1)

// checkStillFollowing refuses, under the store's lock, a watch marked
// AsFollower that the store no longer serves as the leader's follower.
func (s *Store) checkStillFollowing(ctx context.Context, opts watchstream.WatchOptions) error {
	if marked, _ := ctx.Value(asFollowerKey{}).(bool); marked && !s.servesWatch(opts.ResourceVersion) {
		return errNoLongerFollowing
	}
	return nil
}
