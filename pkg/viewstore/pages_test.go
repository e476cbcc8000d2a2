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
	"maps"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// The states kept for paged lists are few and go: a third list's state takes
// the place of the one read least recently, one unread for keptPagesIdle
// goes at the next change, and none stays past keptPagesMaxAge however
// often it is read. A later page read from another state keeps nothing.
func TestKeptPageStatesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p pagedStates
		state := func(rv uint64) reader { return reader{stateRV: rv, copiedAt: time.Now()} }
		held := func() []uint64 {
			p.mu.Lock()
			defer p.mu.Unlock()
			return slices.Sorted(maps.Keys(p.byRV))
		}
		p.keep(1, state(1))
		time.Sleep(time.Second)
		p.keep(2, state(2))
		time.Sleep(time.Second)
		if _, ok := p.at(1); !ok {
			t.Fatal("the first list's state was dropped while two were kept")
		}
		p.keep(3, state(3))
		keptAt := time.Now()
		if got := held(); !slices.Equal(got, []uint64{1, 3}) {
			t.Errorf("a third list's state kept: %v held, want 1 and 3, whose pages were read last", got)
		}
		p.keep(4, state(5))
		if got := held(); !slices.Equal(got, []uint64{1, 3}) {
			t.Errorf("a page at 4 read from the state at 5: %v held, want 1 and 3", got)
		}

		time.Sleep(keptPagesIdle - time.Second)
		p.keep(3, state(7)) // a later page of the list at 3
		time.Sleep(2 * time.Second)
		p.expire() // a change
		if got := held(); !slices.Equal(got, []uint64{3}) {
			t.Errorf("after %s, 1 unread all along, 3 read 2 s ago: %v held, want 3", keptPagesIdle+time.Second, got)
		}
		for range 2 * keptPagesMaxAge / (keptPagesIdle / 2) {
			time.Sleep(keptPagesIdle / 2)
			if _, ok := p.at(3); !ok {
				break
			}
		}
		if age := time.Since(keptAt); age <= keptPagesMaxAge || age > keptPagesMaxAge+keptPagesIdle/2 {
			t.Errorf("a state read every %s was dropped %s after it was kept, want within %s after %s", keptPagesIdle/2, age, keptPagesIdle/2, keptPagesMaxAge)
		}
		// A page read from it just before, done after, does not keep it again.
		old := reader{stateRV: 3, copiedAt: keptAt}
		p.keep(3, old)
		// Nor does a page of a state copied before the store was loaded again.
		stale := state(9)
		p.forget()
		p.keep(9, stale)
		if got := held(); len(got) != 0 {
			t.Errorf("a state past its age, and one copied before a load, kept again: %v held, want none", got)
		}
	})
}

// A state is kept only under the resourceVersion it is at: a later page of
// one list that reads the current state, because nothing it selects
// changed, or an exact list at an earlier resourceVersion, never passes that
// state off as an earlier one to another list, whose pages would then hold
// views newer than their resourceVersion. Such a list expires instead.
func TestAKeptStateIsTheStateAtItsResourceVersion(t *testing.T) {
	demo, other := Filter{Namespace: "demo"}, Filter{Namespace: "other"}
	for _, tc := range []struct {
		name string
		read func(t *testing.T, s *Store, otherFirst *topologyapi.NodeEndpointsList)
	}{
		{name: "a later page of a list whose views did not change", read: func(t *testing.T, s *Store, otherFirst *topologyapi.NodeEndpointsList) {
			if _, err := s.List(other, ListOptions{Limit: 1, Continue: otherFirst.Continue}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "an exact list at the earlier resourceVersion", read: func(t *testing.T, s *Store, otherFirst *topologyapi.NodeEndpointsList) {
			if _, err := s.List(other, ListOptions{ResourceVersion: otherFirst.ResourceVersion, Exact: true, Limit: 1}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, testOptions)
			otherFirst, err := s.List(other, ListOptions{Limit: 1})
			if err != nil || otherFirst.Continue == "" {
				t.Fatalf("other's first page: %v, continue %q", err, otherFirst.Continue)
			}
			demoFirst, err := s.List(demo, ListOptions{Limit: 1})
			if err != nil || demoFirst.Continue == "" || demoFirst.ResourceVersion != otherFirst.ResourceVersion {
				t.Fatalf("demo's first page: %v, continue %q, resourceVersion %s", err, demoFirst.Continue, demoFirst.ResourceVersion)
			}
			s.paged.forget() // as two later lists, or 30 s unread, would drop it
			s.SetNode(node("edge-2", "b"))
			at, err := strconv.ParseUint(demoFirst.ResourceVersion, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if changed, err := s.stream.ChangedSince(at, demo); err != nil || !changed {
				t.Fatalf("demo's views changed %v (%v): the test proves nothing", changed, err)
			}
			tc.read(t, s, otherFirst)
			if _, err := s.List(demo, ListOptions{Limit: 1, Continue: demoFirst.Continue}); !apierrors.IsResourceExpired(err) {
				t.Errorf("demo's next page, its state not kept and its views changed: %v, want 410", err)
			}
		})
	}
}

// A change drops the states unread for keptPagesIdle: they would hold alive
// the views it replaces, for a list whose client went away.
func TestAChangeDropsIdleKeptStates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		if first, err := s.List(Filter{}, ListOptions{Limit: 1}); err != nil || first.Continue == "" {
			t.Fatalf("first page: %v, continue %q", err, first.Continue)
		}
		kept := func() int {
			s.paged.mu.Lock()
			defer s.paged.mu.Unlock()
			return len(s.paged.byRV)
		}
		if kept() != 1 {
			t.Fatalf("%d states kept after a first page, want 1", kept())
		}
		time.Sleep(keptPagesIdle + time.Second)
		s.SetNode(node("edge-3", "c"))
		if kept() != 0 {
			t.Errorf("%d states kept after a change, %s after the last page was read; want none", kept(), keptPagesIdle+time.Second)
		}
	})
}

// A revision that changes no view still moves the store to its end: a
// first page there is at that state, and kept, not refused as a copy of the
// state before.
func TestAFirstPageAfterARevisionThatChangedNoViewIsKept(t *testing.T) {
	s := newTestStore(t, testOptions)
	before, err := s.List(Filter{}, ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	revision := s.revision + 1
	s.mu.RUnlock()
	// A kubelet's status update changes nothing the store holds.
	s.beginRevision(revision)
	s.setNode(node("edge-2", "a"))
	s.endRevision(revision)
	first, err := s.List(Filter{}, ListOptions{Limit: 1})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page after the revision: %v, continue %q", err, first.Continue)
	}
	if first.ResourceVersion == before.ResourceVersion || first.ResourceVersion != fmtRV(revisionEnd(revision)) {
		t.Fatalf("first page after revision %d at %s, before it at %s: want the revision's end %d", revision, first.ResourceVersion, before.ResourceVersion, revisionEnd(revision))
	}
	at, err := strconv.ParseUint(first.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.paged.at(at); !ok {
		t.Errorf("the first page at %d, after the revision, kept no state", at)
	}
}
