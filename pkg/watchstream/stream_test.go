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

package watchstream

import (
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// labelled selects objects labelled selected=yes.
type labelled struct{}

func (labelled) Matches(obj runtime.Object) bool {
	return obj.(*corev1.ConfigMap).Labels["selected"] == "yes"
}
func (labelled) Shard() (string, bool) { return "", false }

func configMap(selected string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"selected": selected}}}
}

func TestEventAsAWatcherSeesIt(t *testing.T) {
	yes, no := configMap("yes"), configMap("no")
	for _, tc := range []struct {
		name     string
		event    Event
		want     watch.EventType
		wantSeen bool
		// wantOld says the watcher gets the object's state before the change.
		wantOld bool
	}{
		{name: "created, selected", event: Event{Object: yes}, want: watch.Added, wantSeen: true},
		{name: "created, not selected", event: Event{Object: no}},
		{name: "changed, stays selected", event: Event{Old: yes, Object: yes}, want: watch.Modified, wantSeen: true},
		{name: "changed into the selection", event: Event{Old: no, Object: yes}, want: watch.Added, wantSeen: true},
		{name: "changed out of the selection", event: Event{Old: yes, Object: no}, want: watch.Deleted, wantSeen: true, wantOld: true},
		{name: "gone, was selected", event: Event{Old: yes, Object: yes, Gone: true}, want: watch.Deleted, wantSeen: true},
		{name: "gone, was not selected", event: Event{Old: no, Object: no, Gone: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.event.RV = 7
			got, seen := tc.event.seenBy(labelled{}, nil)
			if seen != tc.wantSeen || got.Type != tc.want {
				t.Fatalf("seenBy = %s, %v; want %s, %v", got.Type, seen, tc.want, tc.wantSeen)
			}
			switch {
			case !seen:
			case tc.wantOld:
				sent := got.Object.(*corev1.ConfigMap)
				if sent.Labels["selected"] != "yes" || sent.ResourceVersion != "7" || sent == tc.event.Old {
					t.Errorf("the event carries %v, want a copy of the state before the change at resourceVersion 7", sent)
				}
			case got.Object != tc.event.Object:
				t.Errorf("the event carries %v, want the change's object", got.Object)
			}
		})
	}
}

// testStream streams ConfigMaps from resourceVersion 1.
func testStream(watcherBuffer int) *Stream {
	return New(1, Options{HistorySize: 100, WatcherBuffer: watcherBuffer,
		Bookmark: func(_ Filter, rv uint64, _ bool) runtime.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(rv, 10)}}
		}})
}

// A watcher whose selection an object leaves gets it DELETED in the state it
// last saw, which its selector matched, at the change's resourceVersion, as
// kube-apiserver's watch cache sends it; live and replayed alike. The new
// state would tell an informer's client that an object it never selected
// went.
func TestAnObjectLeavingTheSelectionIsDeletedInItsLastState(t *testing.T) {
	s := testStream(10)
	selected, unselected := configMap("yes"), configMap("no")
	live, err := s.Watch(t.Context(), labelled{}, WatchOptions{SendInitialEvents: ptr.To(false)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Stop()
	s.Publish(&Event{RV: 2, Old: selected, Object: unselected})
	replayed, err := s.Watch(t.Context(), labelled{}, WatchOptions{ResourceVersion: "1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer replayed.Stop()
	for what, w := range map[string]watch.Interface{"live": live, "replayed": replayed} {
		e := <-w.ResultChan()
		sent := e.Object.(*corev1.ConfigMap)
		if e.Type != watch.Deleted || sent.Labels["selected"] != "yes" || sent.ResourceVersion != "2" {
			t.Errorf("%s: %s %v, want DELETED selected=yes at resourceVersion 2", what, e.Type, sent)
		}
	}
	if selected.ResourceVersion != "" {
		t.Errorf("the change's old object was given resourceVersion %q: watchers share it", selected.ResourceVersion)
	}
}

func TestHistoryKeepsTheLatest(t *testing.T) {
	tests := []struct {
		name         string
		size, weight int
		weights      []int
		// since is where the history starts after events 11 to 15.
		since   uint64
		wantRVs []uint64
	}{
		{name: "bounded by count", size: 3, weights: []int{1, 1, 1, 1, 1}, since: 12, wantRVs: []uint64{13, 14, 15}},
		{name: "bounded by weight", size: 10, weight: 10, weights: []int{1, 1, 4, 5, 2}, since: 13, wantRVs: []uint64{14, 15}},
		{name: "an entry heavier than the bound is kept alone", size: 10, weight: 3, weights: []int{1, 1, 1, 1, 7}, since: 14, wantRVs: []uint64{15}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(tc.size, tc.weight)
			h.reset(10)
			for i, w := range tc.weights {
				h.add(weighted{single: single{Event: &Event{RV: uint64(11 + i)}}, weight: w})
			}
			if _, ok := h.after(tc.since - 1); ok {
				t.Errorf("the history still reaches back to %d", tc.since-1)
			}
			entries, ok := h.after(tc.since)
			var rvs []uint64
			for _, e := range entries {
				rvs = append(rvs, e.ResourceVersion())
			}
			if !ok || !slices.Equal(rvs, tc.wantRVs) {
				t.Errorf("after %d: %v, %v; want %v", tc.since, rvs, ok, tc.wantRVs)
			}
			if entries, ok := h.after(15); !ok || len(entries) != 0 {
				t.Errorf("after 15: %v, %v; want nothing", entries, ok)
			}
		})
	}
}

type weighted struct {
	single
	weight int
}

func (w weighted) Weight() int { return w.weight }
