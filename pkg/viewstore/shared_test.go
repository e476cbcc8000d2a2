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
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

func nodeWatch(node string) Filter {
	return Filter{Fields: fields.OneTermEqualSelector(FieldNodeName, node)}
}

// flip toggles the readiness of the first endpoint of a slice.
func flip(s *Store, sl *discoveryv1.EndpointSlice) {
	ready := sl.Endpoints[0].Conditions.Ready == nil || *sl.Endpoints[0].Conditions.Ready
	sl.Endpoints[0].Conditions.Ready = ptr.To(!ready)
	s.SetEndpointSlice(sl.DeepCopy())
}

// A change of a Service that prunes nothing is kept once, whatever the
// number of nodes, and reaches every node's watcher as one event of one
// slice.
func TestAChangeForEveryNodeIsKeptOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(testOptions)
		var nodes []*corev1.Node
		for i := range 200 {
			nodes = append(nodes, node(fmt.Sprintf("edge-%03d", i), "a"))
		}
		plain := slice("demo", "plain", "edge-000")
		s.Load(nodes, []*corev1.Service{service("demo", "plain", nil, nil)}, []*discoveryv1.EndpointSlice{plain})
		var watchers []watch.Interface
		for _, n := range []string{"edge-000", "edge-100", "edge-199"} {
			w, err := s.Watch(t.Context(), nodeWatch(n), watchstream.WatchOptions{SendInitialEvents: ptr.To(false)})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			watchers = append(watchers, w)
		}
		entries, events := s.stream.Held()
		flip(s, plain)
		// One slice change of one endpoint of one Service, named for no
		// node.
		const want = changeWeight + endpointWeight + createdWeight
		if afterEntries, afterWeight := s.stream.Held(); afterEntries != entries+1 || afterWeight != events+want {
			t.Fatalf("the history grew from %d entries of weight %d to %d of %d, want one entry of weight %d more", entries, events, afterEntries, afterWeight, want)
		}
		for i, w := range watchers {
			name := []string{"edge-000", "edge-100", "edge-199"}[i] + "..plain-x"
			expectEvents(t, w, "MODIFIED "+name)
		}
	})
}

// A node's watcher away for a thousand changes, many of every node's views,
// resumes without 410 and ends with what a fresh list returns.
func TestAWatcherResumesAfterAThousandChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(DefaultOptions)
		var nodes []*corev1.Node
		for i := range 1000 {
			nodes = append(nodes, node(fmt.Sprintf("edge-%04d", i), fmt.Sprintf("u%d", i/10)))
		}
		plain, echo := slice("demo", "plain", "edge-0000"), slice("demo", "echo", "edge-0001", "edge-0500")
		s.Load(nodes, []*corev1.Service{service("demo", "plain", nil, nil), service("demo", "echo", nil, anyMatchUnit)},
			[]*discoveryv1.EndpointSlice{plain, echo})
		watched := nodeWatch("edge-0002")
		start, err := s.List(watched, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 1000 {
			switch i % 3 {
			case 0:
				flip(s, plain)
			case 1:
				flip(s, echo)
			default:
				s.SetNode(node(fmt.Sprintf("edge-%04d", i%20), fmt.Sprintf("u%d", i%3)))
			}
		}
		state := resume(t, s, watched, start)
		if state == nil {
			t.Fatal("resuming after 1,000 changes: 410")
		}
		fresh, err := s.List(watched, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := stateOf(fresh); !maps.Equal(state, want) {
			t.Errorf("after the replay edge-0002 has %v, a fresh list %v", state, want)
		}
	})
}

// A snapshot read after releasing the lock sees the state it was taken at,
// whatever changed since.
func TestSnapshotsDoNotSeeLaterChanges(t *testing.T) {
	s := newTestStore(t, testOptions)
	s.mu.RLock()
	r := s.snapshotReader()
	s.mu.RUnlock()
	s.SetNode(node("edge-2", "b"))
	s.DeleteService(types.NamespacedName{Namespace: "demo", Name: "plain"})
	s.SetNode(node("edge-4", "a"))
	var got []string
	for _, obj := range r.objects(Filter{Namespace: "demo"}) {
		view := obj.(*topologyapi.NodeEndpoints)
		got = append(got, view.Name+" "+fmt.Sprint(len(view.Slice.Endpoints)))
	}
	want := []string{"edge-1..echo-x 1", "edge-1..plain-x 2", "edge-2..echo-x 1", "edge-2..plain-x 2", "edge-3..echo-x 1", "edge-3..plain-x 2"}
	if !slices.Equal(got, want) {
		t.Errorf("the snapshot reads %q, want the state it was taken at, %q", got, want)
	}
}

// A watcher of every node cut off among the events of one change resumes
// from the resourceVersion of the last event it received and gets the rest.
func TestAWatcherOfEveryNodeResumesInsideAChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStore(t, testOptions)
		from := s.stream.RV()
		s.SetService(service("demo", "plain", map[string]string{"app": "relabelled"}, nil))
		w, err := s.Watch(t.Context(), Filter{Namespace: "demo"}, watchstream.WatchOptions{ResourceVersion: fmtRV(from)})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		first := (<-w.ResultChan()).Object.(*topologyapi.NodeEndpoints)
		w.Stop()
		w, err = s.Watch(t.Context(), Filter{Namespace: "demo"}, watchstream.WatchOptions{ResourceVersion: first.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		got := received(t, w)
		if !slices.Contains(got, "MODIFIED edge-2..plain-x") || !slices.Contains(got, "MODIFIED edge-3..plain-x") {
			t.Errorf("after %s at %s, the resumed watch got %q, want the other nodes' plain-x", first.Name, first.ResourceVersion, got)
		}
	})
}

// Readers without the lock share one copy of the state until a write; after
// any write a list reads what a list under the lock would, resourceVersions
// and creation times included. A node's status update is no write
// (TestAStatusUpdateIsNoChange).
func TestSnapshotsAreSharedUntilAWrite(t *testing.T) {
	recreated := metav1.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]func(*Store){
		"a label no rule reads": func(s *Store) {
			n := node("edge-1", "a")
			n.Labels["rack"] = "r1"
			s.SetNode(n)
		},
		"a node moved":     func(s *Store) { s.SetNode(node("edge-1", "b")) },
		"a node added":     func(s *Store) { s.SetNode(node("edge-4", "a")) },
		"a node recreated": func(s *Store) { n := node("edge-3", "b"); n.CreationTimestamp = recreated; s.SetNode(n) },
		"a node deleted":   func(s *Store) { s.DeleteNode("edge-2") },
		"an endpoint added": func(s *Store) {
			s.SetEndpointSlice(slice("demo", "plain", "edge-1", "edge-2", "edge-3"))
		},
		"a slice annotated": func(s *Store) {
			sl := slice("demo", "plain", "edge-1", "edge-3")
			sl.Annotations = map[string]string{"note": "x"}
			s.SetEndpointSlice(sl)
		},
		"a Service relabelled": func(s *Store) { s.SetService(service("demo", "plain", map[string]string{"app": "new"}, nil)) },
		"a Service annotated": func(s *Store) {
			s.SetService(service("demo", "plain", map[string]string{"app": "plain"}, map[string]string{"note": "x"}))
		},
		"a Service recreated": func(s *Store) {
			svc := service("demo", "plain", map[string]string{"app": "plain"}, nil)
			svc.CreationTimestamp = recreated
			s.SetService(svc)
		},
		"a Service deleted": func(s *Store) { s.DeleteService(types.NamespacedName{Namespace: "demo", Name: "plain"}) },
		"a slice deleted":   func(s *Store) { s.DeleteEndpointSlice(types.NamespacedName{Namespace: "other", Name: "echo-x"}) },
		"a Namespace's default rule": func(s *Store) {
			s.SetNamespace(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other", Annotations: map[string]string{topology.AnnotationGridviewKeys: "unit"}}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t, testOptions)
			shared := func() *reader {
				s.mu.RLock()
				defer s.mu.RUnlock()
				s.snapshotReader()
				return s.snapshot.Load()
			}
			before := shared()
			if again := shared(); again != before {
				t.Fatal("two reads of the same state made two copies")
			}
			// A list that took the copy, as the first page of a paged list does.
			if _, err := s.List(Filter{}, ListOptions{Limit: 1}); err != nil {
				t.Fatal(err)
			}
			tc(s)
			if shared() == before {
				t.Error("the write kept the copy")
			}
			describe := func(obj *topologyapi.NodeEndpoints) string {
				return fmt.Sprintf("%s/%s rv %s created %s labels %v endpoints %d", obj.Namespace, obj.Name, obj.ResourceVersion,
					obj.CreationTimestamp.UTC(), obj.Labels, len(obj.Slice.Endpoints))
			}
			list, err := s.List(Filter{}, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var listed, live []string
			for i := range list.Items {
				listed = append(listed, describe(&list.Items[i]))
			}
			s.mu.RLock()
			r := s.liveReader()
			r.atRV = s.stream.RV()
			for _, obj := range r.objects(Filter{}) {
				live = append(live, describe(obj.(*topologyapi.NodeEndpoints)))
			}
			s.mu.RUnlock()
			if !slices.Equal(listed, live) {
				t.Errorf("a list after the write reads\n%q\nthe state is\n%q", listed, live)
			}
		})
	}
}
