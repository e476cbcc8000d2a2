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
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// everything selects every object.
type everything struct{}

func (everything) Matches(runtime.Object) bool { return true }
func (everything) Shard() (string, bool)       { return "", false }

// A watcher that lags is cut off; from then on it must get nothing more but
// what it was sent before, above all no bookmark: its resourceVersion is past
// the events it lost, and a client resuming from there would never get them.
// The race (a bookmark queued after the cut, as the client drains the queue,
// before the watcher stops) is run until it would have shown many times.
func TestACutOffWatcherGetsNothingPastTheCut(t *testing.T) {
	const runs, published = 300, 20
	for range runs {
		s := testStream(1)
		w, err := s.Watch(t.Context(), everything{}, WatchOptions{SendInitialEvents: ptr.To(false), Bookmarks: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		received := make(chan []string)
		go func() {
			var got []string
			for e := range w.ResultChan() {
				got = append(got, string(e.Type)+" "+e.Object.(*corev1.ConfigMap).ResourceVersion)
			}
			received <- got
		}()
		for rv := uint64(2); rv < 2+published; rv++ {
			object := configMap("yes")
			object.ResourceVersion = strconv.FormatUint(rv, 10)
			s.Publish(&Event{RV: rv, Object: object})
			s.SendBookmarks()
		}
		// Whatever was not cut off ends here.
		w.Stop()
		got := <-received
		// The events received are the first ones, without a gap, and no
		// bookmark is past the last.
		var last uint64 = 1
		for _, e := range got {
			typ, value, _ := strings.Cut(e, " ")
			rv, _ := strconv.ParseUint(value, 10, 64)
			if typ == string(watch.Added) && rv == last+1 {
				last = rv
				continue
			}
			if typ == string(watch.Bookmark) && rv <= last {
				continue
			}
			t.Fatalf("the watcher received %q: %s follows resourceVersion %d, so its client would resume past changes it never got", got, e, last)
		}
	}
}

// Once its initial events have left, a watcher may lag WatcherBuffer events
// behind, not that plus the size of its initial state.
func TestInitialEventsRaiseTheLimitOnlyWhileTheyWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const buffer, initial = 2, 100
		s := testStream(buffer)
		snapshot := func() []runtime.Object {
			var objects []runtime.Object
			for i := range initial {
				object := configMap("yes")
				object.Name = "initial-" + strconv.Itoa(i)
				objects = append(objects, object)
			}
			return objects
		}
		w, err := s.Watch(t.Context(), everything{}, WatchOptions{SendInitialEvents: ptr.To(true)}, snapshot)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for range initial {
			<-w.ResultChan()
		}
		// Nobody reads from here: one event waits on its way to the client,
		// buffer are queued, and the next cuts the watcher off.
		const most = 1 + buffer
		for rv := uint64(2); rv < 2+2*most; rv++ {
			object := configMap("yes")
			object.ResourceVersion = strconv.FormatUint(rv, 10)
			s.Publish(&Event{RV: rv, Object: object})
		}
		synctest.Wait()
		var events int
		for range w.ResultChan() {
			events++
		}
		if events > most {
			t.Errorf("the watcher received %d events after its initial ones before it was cut off, want at most %d", events, most)
		}
	})
}
