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

package wrapper

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-base/metrics/testutil"

	"github.com/gridview/gridview/pkg/watchstream"
)

// Two processes that start from one cache, the first killed before it
// saved, number apart: kube-proxy's resourceVersion from the first gets 410
// from the second, never a resume past the changes the second numbered
// alike and kube-proxy never received.
func TestTwoStartsFromOneCacheNumberApart(t *testing.T) {
	_, dir, _ := savedIndex(t)
	first := startFromCache(t, dir)
	for i := range 3 {
		first.Set(testService("first-"+strconv.Itoa(i), "10.96.0.11", nil))
	}
	seen := first.RV() // kube-proxy's, when the first process died
	second := startFromCache(t, dir)
	for i := range 6 {
		second.Set(testService("second-"+strconv.Itoa(i), "10.96.0.12", nil))
	}
	w, err := second.Watch(t.Context(), &filter{kind: services}, watchstream.WatchOptions{ResourceVersion: strconv.FormatUint(seen, 10)})
	if err == nil {
		w.Stop()
	}
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("a watch from the first process's %d on the second, at %d: %v, want 410", seen, second.RV(), err)
	}
}

// savedIndex is indexedAt(t, 100), saved for edge-1 in a cache directory of
// its own at resourceVersion saved.
func savedIndex(t *testing.T) (old *Upstream, dir string, saved uint64) {
	t.Helper()
	dir = t.TempDir()
	old = indexedAt(t, 100)
	saved, objects := old.state.storedSnapshot()
	if _, err := saveStored(dir, "edge-1", saved, objects); err != nil {
		t.Fatal(err)
	}
	return old, dir, saved
}

// startFromCache is the state of a process that starts from the cache in
// dir, as gridview-wrapper starts.
func startFromCache(t *testing.T, dir string) *State {
	t.Helper()
	rv, loaded, ok := LoadCache(dir, "edge-1")
	if !ok {
		t.Fatal("the cache did not load")
	}
	return NewState(StartRV(rv, ok), loaded)
}

func TestStartRV(t *testing.T) {
	for _, tc := range []struct {
		name   string
		saved  uint64
		cached bool
	}{
		{name: "no cache", cached: false},
		{name: "a cache", saved: 5 << 43, cached: true},
		{name: "a cache past a long crash loop's numbers", saved: math.MaxUint64 - restartGap, cached: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rv := StartRV(tc.saved, tc.cached)
			fresh := !tc.cached || tc.saved > math.MaxUint64-2*restartGap
			switch {
			case fresh && (rv == 0 || rv >= 1<<63):
				t.Errorf("StartRV = %d, want a new epoch", rv)
			case !fresh && (rv < tc.saved+restartGap || rv >= tc.saved+2*restartGap):
				t.Errorf("StartRV = %d, want in [saved+%d, saved+%d)", rv, uint64(restartGap), uint64(2*restartGap))
			}
		})
	}
}

// A save that fails, a full disk say, is tried again later and later, not on
// every tick; once the disk takes it again, the state is saved.
func TestFailedSavesBackOff(t *testing.T) {
	RegisterMetrics()
	synctest.Test(t, func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "cache") // missing: every save fails
		state := NewState(1, nil)
		state.MarkSynced()
		state.Set(testService("echo", "10.96.0.10", nil))
		failed := func() float64 {
			v, err := testutil.GetCounterMetricValue(cacheSaveErrors)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		before := failed()
		runKeepCached(t, state, dir, cacheQuiet, cacheMaxStale)

		// Tried after 2 s of quiet, then 1, 2, 4, 8, 16 and 32 s later.
		time.Sleep(time.Minute)
		if n := failed() - before; n < 3 || n > 8 {
			t.Errorf("%v failed saves in a minute, want 3 to 8 (one every %v without backing off)", n, cacheQuiet/4)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		time.Sleep(cacheRetryMax + time.Second)
		if rv, _, ok := LoadCache(dir, "edge-1"); !ok || rv != state.RV() {
			t.Errorf("the cache holds %d (loaded %t) once the disk took saves again, want %d", rv, ok, state.RV())
		}
	})
}
