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
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// inNamespace selects the ConfigMaps of one namespace, its shard.
type inNamespace string

func (f inNamespace) Matches(obj runtime.Object) bool {
	return obj.(*corev1.ConfigMap).Namespace == string(f)
}
func (f inNamespace) Shard() (string, bool) { return string(f), true }

// A change is being handed over while a watcher of one shard that it found
// idle holds an event, and for quiet after its client took the last one. A
// watcher that was behind already, one of every shard and one that stopped
// do not count.
func TestHandingOverFollowsTheWatchersAChangeFoundIdle(t *testing.T) {
	const quiet = 5 * time.Millisecond
	for _, tc := range []struct {
		name string
		// before runs once the watcher waits at its queue, before the change
		// is published.
		before func(s *Stream, w watch.Interface)
		filter Filter
		// after runs once the change is published.
		after func(w watch.Interface)
		// want is HandingOver while the client has not taken the change.
		want bool
	}{
		{name: "found idle", filter: inNamespace("a"), want: true},
		{name: "behind already", filter: inNamespace("a"), before: func(s *Stream, _ watch.Interface) { publishIn(s, "a") }},
		{name: "of every shard", filter: everything{}},
		{name: "stopped", filter: inNamespace("a"), after: func(w watch.Interface) { w.Stop() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := New(1, Options{HistorySize: 100, WatcherBuffer: 10,
					ShardOf: func(obj runtime.Object) string { return obj.(*corev1.ConfigMap).Namespace }})
				w, err := s.Watch(t.Context(), tc.filter, WatchOptions{SendInitialEvents: ptr.To(false)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				synctest.Wait()
				if tc.before != nil {
					tc.before(s, w)
					synctest.Wait()
				}
				publishIn(s, "a")
				if tc.after != nil {
					tc.after(w)
				}
				synctest.Wait()
				if got := s.HandingOver(quiet); got != tc.want {
					t.Fatalf("HandingOver with the change not taken = %v, want %v", got, tc.want)
				}
				if !tc.want {
					return
				}
				<-w.ResultChan()
				synctest.Wait()
				if !s.HandingOver(quiet) {
					t.Errorf("HandingOver right after the client took the change = false, want true for %s", quiet)
				}
				time.Sleep(quiet)
				if s.HandingOver(quiet) {
					t.Errorf("HandingOver %s after the client took the change = true, want false", quiet)
				}
			})
		})
	}
}

// publishIn publishes a ConfigMap's creation in namespace, at the next
// resourceVersion.
func publishIn(s *Stream, namespace string) {
	rv := s.RV() + 1
	s.Publish(&Event{RV: rv, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "x"}}})
}
