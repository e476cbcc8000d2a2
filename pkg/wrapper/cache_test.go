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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/pkg/watchstream"
)

// A cache holds Endpoints by reference to their slices, and a state loaded
// from it serves what was saved, resourceVersions included.
func TestCacheKeepsEndpointsAndResourceVersions(t *testing.T) {
	u := newIndex("edge-1")
	putService(t, u, testService("echo", "10.96.0.10", map[string]string{"app": "echo"}))
	putView(t, u, testView("edge-1", "echo", "echo-a"))
	putView(t, u, testView("edge-1", "echo", "echo-b"))
	dir := t.TempDir()
	rv, objects := u.state.storedSnapshot()
	if _, err := saveStored(dir, "edge-1", rv, objects); err != nil {
		t.Fatal(err)
	}
	loadedRV, loaded, ok := LoadCache(dir, "edge-1")
	if !ok || loadedRV != rv || len(loaded) != len(objects) {
		t.Fatalf("loaded rv %d and %d objects, want %d and %d", loadedRV, len(loaded), rv, len(objects))
	}
	restored := NewState(loadedRV, loaded)
	key := types.NamespacedName{Namespace: "demo", Name: "echo"}
	want, _ := u.state.Get(endpoints, key)
	got, err := restored.Get(endpoints, key)
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(got, want) || len(got.(*corev1.Endpoints).Subsets) != 2 {
		t.Errorf("restored Endpoints %+v\nwant %+v", got, want)
	}
}

// The cache is written once changes pause, and while they go on, at least
// every maxStale: not on every change, nor on every tick once stale. In a
// bubble, so that the pauses are exact and the saver has handled each tick
// before the cache is read.
func TestCacheIsWrittenWhenQuietOrStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const quiet, maxStale, changing = 300 * time.Millisecond, 600 * time.Millisecond, 1500 * time.Millisecond
		state := NewState(1, nil)
		state.MarkSynced()
		dir := t.TempDir()
		// An earlier release's cache, which the first write removes.
		if err := os.WriteFile(filepath.Join(dir, legacyCacheFile), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		runKeepCached(t, state, dir, quiet, maxStale)
		savedRV := func() uint64 {
			rv, _, _ := LoadCache(dir, "edge-1")
			return rv
		}
		// Changes every 20 ms: never quiet, so written about every maxStale.
		start, writes, changes, last := time.Now(), 0, 0, uint64(0)
		for ; time.Since(start) < changing; changes++ {
			state.Set(testService(fmt.Sprintf("svc-%d", changes), "10.96.0.10", nil))
			time.Sleep(20 * time.Millisecond)
			synctest.Wait()
			if rv := savedRV(); rv != last {
				writes, last = writes+1, rv
			}
		}
		if most := int(changing/maxStale) + 1; writes < 1 || writes > most {
			t.Errorf("%d writes during %v of %d changes, want 1 to %d (every %v)", writes, changing, changes, most, maxStale)
		}
		// Quiet now: the latest state is written within quiet and a tick.
		latest := state.RV()
		time.Sleep(quiet + quiet/4)
		synctest.Wait()
		if rv := savedRV(); rv != latest {
			t.Fatalf("the cache holds resourceVersion %d, %v after the last change %d", rv, quiet+quiet/4, latest)
		}
		if _, err := os.Stat(filepath.Join(dir, legacyCacheFile)); !os.IsNotExist(err) {
			t.Errorf("the earlier release's cache is still there: %v", err)
		}
	})
}

// A state restarted from the cache answers 410 to a watch from any
// resourceVersion the previous process issued, those after its last save
// included: kube-proxy lists again rather than being resumed past changes
// it never received, made under resourceVersions the old process used.
func TestRestartFromCacheExpiresTheOldResourceVersions(t *testing.T) {
	old, dir, saved := savedIndex(t)
	// Served to kube-proxy after the last save, then the process was killed.
	putView(t, old, testView("edge-1", "echo", "echo-b"))
	putView(t, old, testView("edge-1", "echo", "echo-c"))
	latest := old.state.RV()

	restarted := startFromCache(t, dir)
	// Changes made upstream while the wrapper was away.
	restarted.Delete(endpointSlices, types.NamespacedName{Namespace: "demo", Name: "echo-a"})
	restarted.Set(testService("other", "10.96.0.11", nil))

	for _, tc := range []struct {
		name string
		rv   uint64
	}{
		{name: "the old process's first", rv: 101},
		{name: "the saved one", rv: saved},
		{name: "the first after the save", rv: saved + 1},
		{name: "the old process's latest", rv: latest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := restarted.Watch(t.Context(), &filter{kind: endpointSlices}, watchstream.WatchOptions{ResourceVersion: strconv.FormatUint(tc.rv, 10)})
			if err == nil {
				w.Stop()
			}
			if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
				t.Errorf("a watch from %d, the restarted state at %d: %v, want 410", tc.rv, restarted.RV(), err)
			}
		})
	}
	// The restarted state's own resourceVersions are watched as usual.
	w, err := restarted.Watch(t.Context(), &filter{kind: endpointSlices}, watchstream.WatchOptions{ResourceVersion: strconv.FormatUint(restarted.RV(), 10)})
	if err != nil {
		t.Fatalf("a watch from the restarted state's resourceVersion: %v", err)
	}
	w.Stop()
}

// indexedAt is an index at resourceVersion rv serving demo/echo with
// one view, echo-a.
func indexedAt(t *testing.T, rv uint64) *Upstream {
	u := newIndex("edge-1")
	u.state = NewState(rv, nil)
	putService(t, u, testService("echo", "10.96.0.10", nil))
	putView(t, u, testView("edge-1", "echo", "echo-a"))
	return u
}

// A state not complete yet, read upstream in part and never loaded, is
// not saved, however long it goes on changing; once synced it is. In a
// bubble, so that the saver has handled every tick of the wait before the
// cache is read.
func TestCacheIsWrittenOnlyOnceSynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const quiet, maxStale = 40 * time.Millisecond, 80 * time.Millisecond
		state := NewState(1, nil)
		dir := t.TempDir()
		runKeepCached(t, state, dir, quiet, maxStale)
		for i := range 10 {
			state.Set(testService(fmt.Sprintf("svc-%d", i), "10.96.0.10", nil))
			time.Sleep(quiet / 2)
		}
		time.Sleep(2 * maxStale)
		synctest.Wait()
		if rv, _, ok := LoadCache(dir, "edge-1"); ok {
			t.Fatalf("a state not synced was saved at %d", rv)
		}
		state.MarkSynced()
		latest := state.RV()
		// Quiet for long already: saved at the next tick.
		time.Sleep(quiet)
		synctest.Wait()
		if rv, _, _ := LoadCache(dir, "edge-1"); rv != latest {
			t.Fatalf("the cache holds resourceVersion %d %v after the state at %d was synced", rv, quiet, latest)
		}
	})
}

// A start from the cache publishes nothing for a cluster that has not
// changed, whichever of the views and the Services is listed first: the
// Endpoints wait for both, instead of being published with the view's
// labels and creation time, then with the Service's again.
func TestStartFromCachePublishesNothingForAnUnchangedCluster(t *testing.T) {
	svc := testService("echo", "10.96.0.10", map[string]string{"app": "echo"})
	svc.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	view := testView("edge-1", "echo", "echo-a")
	view.Labels = map[string]string{"app": "echo", "node": "joined-later"}
	view.CreationTimestamp = metav1.NewTime(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	first := newIndex("edge-1")
	putService(t, first, svc)
	putView(t, first, view)
	rv, objects := first.state.storedSnapshot()
	cached := make([]runtime.Object, 0, len(objects))
	for _, one := range objects {
		cached = append(cached, one)
	}
	listViews := func(u *Upstream) {
		record, err := recordView(view.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		u.replaceViews([]any{record})
	}
	listServices := func(u *Upstream) {
		record, err := recordService(svc.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		u.replaceServices([]any{record})
	}
	for _, tc := range []struct {
		name  string
		lists []func(*Upstream)
	}{
		{name: "views first", lists: []func(*Upstream){listViews, listServices}},
		{name: "Services first", lists: []func(*Upstream){listServices, listViews}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newIndex("edge-1")
			u.state = NewState(rv, cached)
			u.viewsListed, u.servicesListed = false, false
			for _, list := range tc.lists {
				list(u)
			}
			u.reconcile()
			if u.state.RV() != rv {
				t.Errorf("an unchanged cluster published changes: the state moved from %d to %d", rv, u.state.RV())
			}
		})
	}
}

// runKeepCached keeps edge-1's cache in dir until the test ends.
func runKeepCached(t *testing.T, state *State, dir string, quiet, maxStale time.Duration) {
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { keepCached(ctx, state, dir, "edge-1", quiet, maxStale) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}
