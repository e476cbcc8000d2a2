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
	"reflect"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// listAll pages through a list limit items at a time.
func listAll(t *testing.T, s *Store, f Filter, limit int64) ([]string, error) {
	t.Helper()
	var all []string
	opts := ListOptions{Limit: limit}
	for {
		page, err := s.List(f, opts)
		if err != nil {
			return all, err
		}
		switch {
		case int64(len(page.Items)) > limit:
			t.Fatalf("a page of %d items, limit %d", len(page.Items), limit)
		case page.Continue != "" && int64(len(page.Items)) < limit:
			t.Fatalf("a page of %d items with a continue token, limit %d", len(page.Items), limit)
		case page.Continue == "" && len(page.Items) == 0 && opts.Continue != "":
			t.Fatalf("an empty last page: the page before it had a continue token though nothing followed")
		}
		all = append(all, names(page)...)
		if page.Continue == "" {
			return all, nil
		}
		opts.Continue = page.Continue
	}
}

// Pages of one and two items end between two slices of one Service
// (demo/plain's two) and between two Services of one node's views; pages
// of four also run on from a node in one namespace to the same node in the
// next.
func TestPagingReturnsTheWholeList(t *testing.T) {
	s := newTestStore(t, testOptions)
	second := slice("demo", "plain", "edge-2")
	second.Name = "plain-y"
	s.SetEndpointSlice(second)
	for _, f := range []Filter{{}, {Namespace: "demo"}, {Fields: fields.OneTermEqualSelector(FieldNodeName, "edge-3")}} {
		whole, err := s.List(f, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int64{1, 2, 4} {
			paged, err := listAll(t, s, f, limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(paged, names(whole)) {
				t.Errorf("filter %+v, limit %d: pages %v, whole list %v", f, limit, paged, names(whole))
			}
		}
	}
}

// A paged list reads every page at its first page's resourceVersion: from
// the current state while nothing it selects changed, from the first page's
// state, kept, after a change; once that is not kept, the token expires.
func TestContinueReadsOnAtTheFirstPagesState(t *testing.T) {
	s := newTestStore(t, testOptions)
	demo := Filter{Namespace: "demo"}
	whole, err := s.List(demo, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.List(demo, ListOptions{Limit: 2})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, first.Continue)
	}

	// A change outside the selection leaves the token valid, at its resourceVersion.
	s.SetService(service("other", "echo", map[string]string{"changed": "yes"}, nil))
	next, err := s.List(demo, ListOptions{Limit: 2, Continue: first.Continue})
	if err != nil {
		t.Fatalf("continue after an unrelated change: %v", err)
	}
	if next.ResourceVersion != first.ResourceVersion {
		t.Errorf("continued page at resourceVersion %s, first at %s", next.ResourceVersion, first.ResourceVersion)
	}

	// A change inside it: the pages read on from the first page's state.
	s.SetNode(node("edge-2", "b"))
	if changed, err := s.List(demo, ListOptions{}); err != nil || reflect.DeepEqual(changed.Items, whole.Items) {
		t.Fatalf("the change left the selection as it was (%v): the test proves nothing", err)
	}
	paged := first.Items
	for token := first.Continue; token != ""; {
		page, err := s.List(demo, ListOptions{Limit: 2, Continue: token})
		if err != nil {
			t.Fatalf("continue after a change of the selection, the first page's state kept: %v", err)
		}
		if page.ResourceVersion != first.ResourceVersion {
			t.Errorf("continued page at resourceVersion %s, first at %s", page.ResourceVersion, first.ResourceVersion)
		}
		paged, token = append(paged, page.Items...), page.Continue
	}
	if !reflect.DeepEqual(paged, whole.Items) {
		t.Errorf("pages read across a change:\n%v\nthe list before the change:\n%v", paged, whole.Items)
	}
	// Not kept any more, the state has expired.
	s.paged.forget()
	if _, err := s.List(demo, ListOptions{Limit: 2, Continue: first.Continue}); !apierrors.IsResourceExpired(err) {
		t.Errorf("continue after a change of the selection, the first page's state not kept: %v, want 410 Expired", err)
	}

	for _, tc := range []struct{ name, token string }{
		{name: "not base64", token: "%%%"},
		{name: "not a token", token: "e30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.List(demo, ListOptions{Continue: tc.token}); !apierrors.IsBadRequest(err) {
				t.Errorf("continue %q: %v, want 400", tc.token, err)
			}
		})
	}
	future := continueToken{RV: s.stream.RV() + 1000}.encode()
	if _, err := s.List(demo, ListOptions{Continue: future}); !apierrors.IsResourceExpired(err) {
		t.Errorf("a token from the future: %v, want 410", err)
	}
}

func TestListResourceVersions(t *testing.T) {
	s := newTestStore(t, testOptions)
	if _, err := s.List(Filter{}, ListOptions{Limit: -5}); !apierrors.IsBadRequest(err) {
		t.Errorf("limit -5: %v, want 400", err)
	}
	if _, err := s.List(Filter{}, ListOptions{ResourceVersion: "abc"}); !apierrors.IsBadRequest(err) {
		t.Errorf("resourceVersion abc: %v, want 400", err)
	}
	old := s.stream.RV()
	loadRV := old
	s.SetNode(node("edge-2", "b"))
	s.mu.RLock()
	revision := s.revision
	s.mu.RUnlock()
	if _, err := s.List(Filter{}, ListOptions{ResourceVersion: fmtRV(old), Exact: true}); !apierrors.IsResourceExpired(err) {
		t.Errorf("an exact list of a state that has changed since: %v, want 410", err)
	}
	other := Filter{Namespace: "other", Fields: fields.OneTermEqualSelector(FieldNodeName, "edge-1")}
	if list, err := s.List(other, ListOptions{ResourceVersion: fmtRV(old), Exact: true}); err != nil || list.ResourceVersion != fmtRV(old) {
		t.Errorf("an exact list of an old state its selection still has: %v, %v", list, err)
	}
	if _, err := s.List(Filter{}, ListOptions{ResourceVersion: fmtRV(old), Continue: continueToken{RV: old}.encode()}); !apierrors.IsBadRequest(err) {
		t.Errorf("continue with a resourceVersion: %v, want 400", err)
	}
	list, err := s.List(Filter{}, ListOptions{ResourceVersion: fmtRV(old)})
	if err != nil || list.ResourceVersion != fmtRV(s.stream.RV()) {
		t.Errorf("a list not older than %d: %v at %s, want the current state %d", old, err, list.ResourceVersion, s.stream.RV())
	}
	// Views keep the resourceVersion of their last change: the move's, in
	// its revision's range, below the revision's end the store is at.
	moved, _ := s.Get("demo", "edge-2..echo-x")
	untouched, _ := s.Get("demo", "edge-1..plain-x")
	movedRV, _ := strconv.ParseUint(moved.ResourceVersion, 10, 64)
	if movedRV < revisionStart(revision) || movedRV >= s.stream.RV() || s.stream.RV() != revisionEnd(revision) || untouched.ResourceVersion != fmtRV(loadRV) {
		t.Errorf("resourceVersions: moved view %s (moved in revision %d, [%d, %d], the store at %d), untouched %s (loaded at %d)",
			moved.ResourceVersion, revision, revisionStart(revision), revisionEnd(revision), s.stream.RV(), untouched.ResourceVersion, loadRV)
	}
}

// A page's items are allocated whole only where pages fill up: lists of a
// namespace or of a node; a selector may match few, and a limit is the
// client's, so none allocates more than pagePrealloc items ahead.
func TestPageCapacity(t *testing.T) {
	node := fields.OneTermEqualSelector(FieldNodeName, "edge-1")
	for _, tc := range []struct {
		name   string
		filter Filter
		limit  int64
		want   int64
	}{
		{name: "no limit", limit: 0, want: 0},
		{name: "every view, a page of 500", limit: 500, want: 500},
		{name: "a huge limit", limit: 1 << 40, want: pagePrealloc},
		{name: "a namespace", filter: Filter{Namespace: "demo"}, limit: 500, want: 500},
		{name: "a node", filter: Filter{Fields: node}, limit: 500, want: 500},
		{name: "a node and a Service", filter: Filter{Fields: fields.AndSelectors(node, fields.OneTermEqualSelector(FieldServiceName, "echo"))}, limit: 500, want: 0},
		{name: "a Service's labels", filter: Filter{Labels: labels.SelectorFromSet(labels.Set{"app": "echo"})}, limit: 500, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pageCapacity(tc.filter, tc.limit); got != tc.want {
				t.Errorf("pageCapacity = %d, want %d", got, tc.want)
			}
		})
	}
}

// A list that selects nothing has no items, not nil ones: "items": [] in
// JSON, as kube-apiserver's.
func TestAnEmptyListHasItems(t *testing.T) {
	s := newTestStore(t, testOptions)
	for _, limit := range []int64{0, 500} {
		list, err := s.List(Filter{Namespace: "none"}, ListOptions{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if list.Items == nil || len(list.Items) != 0 {
			t.Errorf("limit %d: items %#v, want an empty list", limit, list.Items)
		}
	}
}

// A kubelet's status update is no change: within the revision that holds it
// the resourceVersion stays and wide readers keep their snapshot (the log's
// writer never writes one, but a Node's other fields may change with it).
// Any other update of a Node is a change. Either way the store ends the
// revision at its end, as every replica does.
func TestAStatusUpdateIsNoChange(t *testing.T) {
	for name, tc := range map[string]struct {
		update     func(*corev1.Node)
		wantChange bool
	}{
		"a status update": {update: func(n *corev1.Node) {
			n.ResourceVersion = "7"
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		}},
		"a label no Service reads": {update: func(n *corev1.Node) { n.Labels["unread"] = "x" }, wantChange: true},
		"a label the views read":   {update: func(n *corev1.Node) { n.Labels["unit"] = "b" }, wantChange: true},
		"the node created again":   {update: func(n *corev1.Node) { n.CreationTimestamp = metav1.Unix(1700000000, 0) }, wantChange: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t, testOptions)
			before, err := s.List(Filter{}, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			snapshot := s.snapshot.Load()
			n := node("edge-2", "a")
			tc.update(n)
			s.mu.RLock()
			revision := s.revision + 1
			s.mu.RUnlock()
			s.beginRevision(revision)
			s.setNode(n)
			after, err := s.List(Filter{}, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if changed := after.ResourceVersion != before.ResourceVersion; changed != tc.wantChange {
				t.Errorf("resourceVersion %s -> %s: changed %t, want %t", before.ResourceVersion, after.ResourceVersion, changed, tc.wantChange)
			}
			if kept := s.snapshot.Load() == snapshot; kept == tc.wantChange {
				t.Errorf("snapshot kept %t, want %t", kept, !tc.wantChange)
			}
			s.endRevision(revision)
			if ended, err := s.List(Filter{}, ListOptions{}); err != nil || ended.ResourceVersion != fmtRV(revisionEnd(revision)) {
				t.Errorf("a list after the revision: %v at %s, want the revision's end %d", err, ended.ResourceVersion, revisionEnd(revision))
			}
		})
	}
}
