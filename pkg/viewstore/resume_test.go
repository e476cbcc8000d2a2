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
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

func stateOf(list *topologyapi.NodeEndpointsList) map[string]string {
	out := map[string]string{}
	for _, item := range list.Items {
		out[item.Namespace+"/"+item.Name] = fmt.Sprint(item.Slice.Endpoints)
	}
	return out
}

// resume watches f from a list's RV and applies every event to the list's
// state; nil when the watch is refused with 410.
func resume(t *testing.T, s *Store, f Filter, start *topologyapi.NodeEndpointsList) map[string]string {
	state := stateOf(start)
	w, err := s.Watch(t.Context(), f, watchstream.WatchOptions{ResourceVersion: start.ResourceVersion})
	if apierrors.IsResourceExpired(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	defer w.Stop()
	for {
		e, ok := nextEvent(w)
		if !ok {
			return state
		}
		obj := e.Object.(*topologyapi.NodeEndpoints)
		if e.Type == watch.Deleted {
			delete(state, obj.Namespace+"/"+obj.Name)
		} else {
			state[obj.Namespace+"/"+obj.Name] = fmt.Sprint(obj.Slice.Endpoints)
		}
	}
}

// nextEvent returns the event a watcher has ready once every goroutine of
// the bubble waits; false when it has none, or ended.
func nextEvent(w watch.Interface) (watch.Event, bool) {
	// The watcher's goroutine hands events over one at a time.
	synctest.Wait()
	select {
	case e, ok := <-w.ResultChan():
		return e, ok
	default:
		return watch.Event{}, false
	}
}

func plainY() *discoveryv1.EndpointSlice {
	sl := slice("demo", "plain", "edge-1")
	sl.Name = "plain-y"
	return sl
}

// A watcher resumed from before a node went cannot be told what that node
// had then (a change for every node reached only the nodes known when it is
// replayed): it gets 410, never a state that keeps a slice gone. A watcher
// of every node here; of the node itself, come back, below.
func TestAResumeAcrossADepartedNodeIsExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		s.SetEndpointSlice(plainY())
		f := Filter{Namespace: "demo"}
		start, err := s.List(f, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.DeleteEndpointSlice(types.NamespacedName{Namespace: "demo", Name: "plain-y"})
		s.DeleteNode("edge-2")
		if got := resume(t, s, f, start); got != nil {
			t.Errorf("a watcher of every node resumed across edge-2's deletion and holds %v, want 410", got)
		}
	})
}

func TestAResumeAcrossANodeThatCameBackIsExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		s.SetEndpointSlice(plainY())
		f := nodeWatch("edge-2")
		start, err := s.List(f, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.DeleteEndpointSlice(types.NamespacedName{Namespace: "demo", Name: "plain-y"})
		s.DeleteNode("edge-2")
		s.SetNode(node("edge-2", "a"))
		if got := resume(t, s, f, start); got != nil {
			t.Errorf("edge-2's watcher resumed across its deletion and return and holds %v, want 410", got)
		}
	})
}

// A change that changes no view still stamps objects with a resourceVersion
// the stream never reaches: objects newer than their list, and than the
// store; a watch from such an object's resourceVersion gets 410.
func TestObjectsAreNeverNewerThanTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		n := node("edge-2", "a")
		n.Labels["unread"] = "x"
		s.SetNode(n)
		list, err := s.List(nodeWatch("edge-2"), ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("list RV %s", list.ResourceVersion)
		for _, item := range list.Items {
			t.Logf("  %s RV %s", item.Name, item.ResourceVersion)
			if item.ResourceVersion > list.ResourceVersion && len(item.ResourceVersion) >= len(list.ResourceVersion) {
				t.Errorf("%s has RV %s, newer than its list's %s", item.Name, item.ResourceVersion, list.ResourceVersion)
			}
		}
		obj, _ := s.Get("demo", "edge-2..plain-x")
		_, err = s.Watch(t.Context(), nodeWatch("edge-2"), watchstream.WatchOptions{ResourceVersion: obj.ResourceVersion})
		t.Logf("watch from the object's RV %s: %v", obj.ResourceVersion, err)
		if err != nil {
			t.Errorf("watch from a Get's RV fails: %v", err)
		}
	})
}

var _ = corev1.Node{}
var _ = ptr.To[int]

// A node whose addition changed no view is stamped with the resourceVersion
// the next change reuses: that change, when it is for every node, skips it.
func TestANodeAddedWithoutViewsGetsTheNextChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(testOptions)
		s.Load([]*corev1.Node{node("edge-1", "a")}, []*corev1.Service{service("demo", "plain", nil, nil)}, nil)
		w, err := s.Watch(t.Context(), nodeWatch("edge-2"), watchstream.WatchOptions{SendInitialEvents: ptr.To(true)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		s.SetNode(node("edge-2", "a"))                       // plain has no endpoints yet: no view changes, no entry
		s.SetEndpointSlice(slice("demo", "plain", "edge-1")) // an AllNodes change at the same RV
		got := received(t, w)
		list, _ := s.List(nodeWatch("edge-2"), ListOptions{})
		t.Logf("edge-2's watcher got %q; a fresh list has %v", got, names(list))
		if len(got) == 0 && len(list.Items) > 0 {
			t.Errorf("edge-2's live watcher never got %v", names(list))
		}
	})
}

// An exact list at an earlier state carries objects stamped later than it.
func TestAnExactListsObjectsAreNotNewerThanIt(t *testing.T) {
	s := newTestStore(t, testOptions)
	first, _ := s.List(nodeWatch("edge-3"), ListOptions{})
	sl := slice("demo", "echo", "edge-1", "edge-3")
	sl.Endpoints[0].Conditions.Ready = ptr.To(false) // edge-1's endpoint: unit a only
	s.SetEndpointSlice(sl)
	list, err := s.List(nodeWatch("edge-3"), ListOptions{ResourceVersion: first.ResourceVersion, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range list.Items {
		if item.ResourceVersion != first.ResourceVersion && len(item.ResourceVersion) == len(list.ResourceVersion) && item.ResourceVersion > list.ResourceVersion {
			t.Errorf("exact list at %s holds %s at %s", list.ResourceVersion, item.Name, item.ResourceVersion)
		}
	}
}

// A Node or Service deleted and created again while the feed looked away
// reaches the store as an update with a new creation time: its views go
// and come back, as they would had the feed seen both, so that no object
// changes at the same resourceVersion. A watch resumed from before a node
// went is answered 410.
func TestARecreatedInputGoesAndComesBack(t *testing.T) {
	recreated := metav1.Unix(1800000000, 0)
	for _, tc := range []struct {
		name      string
		recreate  func(*Store)
		events    []string
		resume410 bool
	}{{
		name:      "a Node",
		recreate:  func(s *Store) { n := node("edge-2", "a"); n.CreationTimestamp = recreated; s.SetNode(n) },
		events:    []string{"DELETED edge-2..echo-x", "DELETED edge-2..plain-x", "ADDED edge-2..echo-x", "ADDED edge-2..plain-x"},
		resume410: true,
	}, {
		name: "a Service",
		recreate: func(s *Store) {
			svc := service("demo", "echo", map[string]string{"app": "echo"}, anyMatchUnit)
			svc.CreationTimestamp = recreated
			s.SetService(svc)
		},
		events: []string{"DELETED edge-2..echo-x", "ADDED edge-2..echo-x"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newTestStore(t, testOptions)
				before, err := s.List(edge2, ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				w, err := s.Watch(t.Context(), edge2, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				tc.recreate(s)
				expectEvents(t, w, tc.events...)
				after, err := s.List(edge2, ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for i, obj := range after.Items {
					if obj.CreationTimestamp.Equal(&before.Items[i].CreationTimestamp) {
						continue
					}
					if obj.ResourceVersion == before.Items[i].ResourceVersion {
						t.Errorf("%s created %s, was %s, at the same resourceVersion %s", obj.Name, obj.CreationTimestamp, before.Items[i].CreationTimestamp, obj.ResourceVersion)
					}
				}
				if got := resume(t, s, edge2, before); (got == nil) != tc.resume410 {
					t.Errorf("resumed from before: %v, want 410 %t", got, tc.resume410)
				}
			})
		})
	}
}

// A watch resumed from before a Service was deleted and created again, or
// only deleted, gets each object as live watchers got it at its
// resourceVersion, creation time included: one object at one
// resourceVersion is the same to every client.
func TestAResumedWatchGetsTheObjectsLiveWatchersGot(t *testing.T) {
	for _, tc := range []struct {
		name    string
		then    func(s *Store, svc *corev1.Service)
		wantLen int
	}{
		{name: "created again", wantLen: 3, then: func(s *Store, svc *corev1.Service) {
			again := svc.DeepCopy()
			again.CreationTimestamp = metav1.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
			s.SetService(again)
		}},
		{name: "deleted", wantLen: 2, then: func(s *Store, svc *corev1.Service) {
			s.DeleteService(types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := New(Options{HistorySize: 100, WatcherBuffer: 100, BookmarkInterval: time.Hour})
				svc := service("demo", "web", nil, nil)
				svc.CreationTimestamp = metav1.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
				s.Load([]*corev1.Node{node("a", "u")}, []*corev1.Service{svc}, nil)
				from := strconv.FormatUint(s.resourceVersion(), 10)
				live, err := s.Watch(t.Context(), nodeWatch("a"), watchstream.WatchOptions{ResourceVersion: from})
				if err != nil {
					t.Fatal(err)
				}
				defer live.Stop()
				s.SetEndpointSlice(slice("demo", "web", "a"))
				tc.then(s, svc)
				resumed, err := s.Watch(t.Context(), nodeWatch("a"), watchstream.WatchOptions{ResourceVersion: from})
				if err != nil {
					t.Fatal(err)
				}
				defer resumed.Stop()
				got, want := eventsOf(resumed), eventsOf(live)
				if len(want) != tc.wantLen || !slices.Equal(got, want) {
					t.Errorf("resumed:\n%s\nlive (want %d events):\n%s", strings.Join(got, "\n"), tc.wantLen, strings.Join(want, "\n"))
				}
			})
		})
	}
}

// eventsOf reads the events a watch holds, each as its type, name,
// resourceVersion and creation time.
func eventsOf(w watch.Interface) []string {
	var out []string
	for {
		synctest.Wait()
		select {
		case e := <-w.ResultChan():
			obj := e.Object.(*topologyapi.NodeEndpoints)
			out = append(out, fmt.Sprintf("%s %s %s %s", e.Type, obj.Name, obj.ResourceVersion, obj.CreationTimestamp.UTC().Format(time.RFC3339)))
		default:
			return out
		}
	}
}
