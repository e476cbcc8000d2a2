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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
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
	for _, tc := range []struct {
		name     string
		event    Event
		want     watch.EventType
		wantSeen bool
	}{
		{name: "created, selected", event: Event{Object: configMap("yes")}, want: watch.Added, wantSeen: true},
		{name: "created, not selected", event: Event{Object: configMap("no")}},
		{name: "changed, stays selected", event: Event{Old: configMap("yes"), Object: configMap("yes")}, want: watch.Modified, wantSeen: true},
		{name: "changed into the selection", event: Event{Old: configMap("no"), Object: configMap("yes")}, want: watch.Added, wantSeen: true},
		{name: "changed out of the selection", event: Event{Old: configMap("yes"), Object: configMap("no")}, want: watch.Deleted, wantSeen: true},
		{name: "gone, was selected", event: Event{Old: configMap("yes"), Object: configMap("yes"), Gone: true}, want: watch.Deleted, wantSeen: true},
		{name: "gone, was not selected", event: Event{Old: configMap("no"), Object: configMap("no"), Gone: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, seen := tc.event.For(labelled{})
			if seen != tc.wantSeen || got.Type != tc.want {
				t.Errorf("For = %s, %v; want %s, %v", got.Type, seen, tc.want, tc.wantSeen)
			}
			if seen && got.Object != tc.event.Object {
				t.Errorf("the event carries %v, want the change's object", got.Object)
			}
		})
	}
}

func TestHistoryKeepsTheLatest(t *testing.T) {
	h := newHistory(3)
	h.reset(10)
	for rv := uint64(11); rv <= 15; rv++ {
		h.add(&Event{RV: rv})
	}
	if _, ok := h.after(11); ok {
		t.Error("the history still reaches back to 11 after 5 events in a ring of 3")
	}
	events, ok := h.after(12)
	if !ok || len(events) != 3 || events[0].RV != 13 || events[2].RV != 15 {
		t.Errorf("after 12: %v, %v; want 13, 14, 15", events, ok)
	}
	if events, ok := h.after(15); !ok || len(events) != 0 {
		t.Errorf("after 15: %v, %v; want nothing", events, ok)
	}
}
