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
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"k8s.io/apiserver/pkg/storage"
)

// freshWait bounds how long a read waits for the store to reach a
// resourceVersion another replica issued; freshPoll is how often it looks:
// coarse, since after a restart every node's watch may wait at once, on the
// CPUs the store needs to get there.
const (
	freshWait = 3 * time.Second
	freshPoll = 50 * time.Millisecond
)

// Log is what the store asks of the log it is fed from, beyond what it
// applied.
type Log interface {
	// Revision is the revision etcd is at.
	Revision(ctx context.Context) (int64, error)
	// RequestProgress asks etcd to tell the feed how far it read the log.
	RequestProgress()
}

// SetLog sets the log the store's feed reads, which reads that must be
// current and reads that wait for a revision ask.
func (s *Store) SetLog(log Log) { s.log.Store(&log) }

// AwaitFresh waits until the store reaches the resourceVersion a read names
// (a resourceVersion, or a continue token's): another replica, which read
// the log further, issued it, and this one will number the same changes
// alike once it gets there. One still beyond after freshWait is answered as
// kube-apiserver answers it, "Too large resource version", with a
// Retry-After, which client-go retries without listing again. A read that
// names neither must be current, as kube-apiserver's are: it waits for the
// revision etcd is at, and a replica that cannot reach etcd refuses it
// rather than serve what may be old.
func (s *Store) AwaitFresh(ctx context.Context, resourceVersion, continueToken string) error {
	var want uint64
	named := "resourceVersion"
	if continueToken != "" && resourceVersion != "" && resourceVersion != "0" {
		return nil // the read itself refuses both
	}
	if !s.Loaded() {
		return nil // the read itself says the views are not loaded
	}
	if log := s.log.Load(); log != nil && continueToken == "" && resourceVersion == "" {
		revision, err := (*log).Revision(ctx)
		if err != nil {
			klog.V(2).InfoS("Cannot read the revision of gridview's etcd for a read that must be current", "err", err)
			return apierrors.NewServiceUnavailable("gridview's etcd cannot be reached, so the views may not be current")
		}
		want = revisionEnd(revision)
	} else if continueToken != "" {
		token, err := decodeContinue(continueToken)
		if err != nil {
			return nil // the read itself says what is wrong
		}
		want, named = token.RV, "the continue token's resourceVersion"
	} else if rv, err := strconv.ParseUint(resourceVersion, 10, 64); err == nil {
		want = rv
	}
	if want>>(eventBits+revisionBits) != EngineGeneration {
		return nil // another engine's: the read itself answers 410
	}
	if current, reached := s.awaitReached(ctx, want, freshWait); !reached {
		if s.neverIssued(ctx, want) {
			return apierrors.NewResourceExpired(fmt.Sprintf("%s %d names a revision gridview's etcd has not reached (was it restored or replaced?): list again", named, want))
		}
		return storage.NewTooLargeResourceVersionError(want, current, 1)
	}
	return nil
}

// neverIssued says whether a resourceVersion names a revision after the one
// etcd is at: no replica issued it for this etcd, and none ever will for
// the same content, so waiting for it would wait for ever.
func (s *Store) neverIssued(ctx context.Context, rv uint64) bool {
	log := s.log.Load()
	if log == nil {
		return false
	}
	revision, err := (*log).Revision(ctx)
	return err == nil && rv > revisionEnd(revision)
}

// awaitReached waits up to wait until the store reaches want, and says
// whether it did and where it stands.
func (s *Store) awaitReached(ctx context.Context, want uint64, wait time.Duration) (uint64, bool) {
	deadline := time.Now().Add(wait)
	if end, ok := ctx.Deadline(); ok && end.Before(deadline) {
		deadline = end
	}
	asked := time.Time{}
	for {
		current := s.resourceVersion()
		if want <= current {
			return current, true
		}
		// The revision may hold no change of the log, which only etcd's
		// word that the store read past it moves the store to.
		if log := s.log.Load(); log != nil && time.Since(asked) >= time.Second {
			go (*log).RequestProgress()
			asked = time.Now()
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
