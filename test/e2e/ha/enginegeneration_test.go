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

package ha

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gridview/gridview/test/localcluster"
)

// variantLabel is the label gridview-apiserver-engine-variant's engine adds
// to every view (pkg/viewstore/generation_variant.go).
const variantLabel = "gridview.io/engine-variant"

// A rolling update of three replicas to a build whose engine derives every
// view differently (the next engine generation), then its rollback, during
// churn: each client moves to the new engine's views with one list, at the
// first 410 it meets, and never gets two contents under one
// resourceVersion. Replicas of the old generation stop serving once a
// replica of the new one announced itself (inputlog.Engines): they end their
// watches and answer 429, which clients retry on another replica, so that
// nobody lists on the old engine after moving to the new. (The harness keeps
// a replica an endpoint while it runs: the test does not see the old
// replicas leave the endpoints, as their readiness would make them.)
func TestARollingUpdateBetweenEnginesCostsEachClientOneList(t *testing.T) {
	variant := filepath.Join(binDir, "gridview-apiserver-engine-variant")
	if _, err := os.Stat(variant); err != nil {
		t.Fatalf("the engine variant of gridview-apiserver is missing: run `make build` (%v)", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	three := threeReplicas(ctx, t)
	// Whatever happens, the replicas run the released build after the test.
	t.Cleanup(func() {
		for _, r := range three {
			r.UseBinary("")
		}
		for _, r := range three {
			if !r.Running() {
				continue
			}
			if err := r.Stop(); err != nil {
				t.Errorf("stopping %s: %v", r.Name, err)
			}
			if err := r.Start(context.Background()); err != nil {
				t.Errorf("starting %s on the released build again: %v", r.Name, err)
			}
		}
	})
	s := newSite(t)
	s.converged(t, 30*time.Second)
	views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
	const watchTimeout = 3 * time.Second
	followers, wrapper := followSite(ctx, t, s, views, watchTimeout)
	// A second of a1, so that two clients see the same views'
	// resourceVersions.
	followers = append(followers, followNode(ctx, t, views, s.Node("a1"), false, watchTimeout))
	p := newPhases(t, followers, wrapper)
	changes := s.churn(ctx, t, 0, 5*time.Second)
	p.end("churn before the update", changes)
	for _, f := range followers {
		f.listedOnce(t, "before the update")
		f.hasVariantLabel(t, false)
	}

	for _, step := range []struct {
		name, binary string
		variant      bool
	}{
		{name: "rolling update to the engine variant", binary: variant, variant: true},
		{name: "rollback to the released engine", binary: "", variant: false},
	} {
		before := p.marks()
		for _, r := range three {
			if err := r.Stop(); err != nil {
				t.Fatal(err)
			}
			r.UseBinary(step.binary)
			changes = s.churn(ctx, t, changes, 2*time.Second)
			if err := r.Start(ctx); err != nil {
				t.Fatalf("%s: starting %s: %v", step.name, r.Name, err)
			}
			localcluster.Eventually(t, 30*time.Second, r.Name+" ready", func(ctx context.Context) error { return readyz(ctx, r) })
			changes = s.churn(ctx, t, changes, 2*time.Second)
		}
		changes = s.churn(ctx, t, changes, 3*time.Second)
		p.end(step.name, changes)
		for i, f := range followers {
			f.equalsList(t, views)
			f.hasVariantLabel(t, step.variant)
			// One list, to the other engine's views: after a 410 at its
			// replica (the watch's from the old engine's resourceVersion;
			// at a rollback also the list's from it, which the older engine
			// cannot serve "not older than" a number above its own), or
			// after a watch a superseded or stopping replica ended at once.
			// Any other list follows such a short watch too.
			met := f.mark().since(before.followers[i])
			if met.lists < 1 || met.lists > 1+met.short || met.gone > 2 {
				t.Errorf("%s, %s: %s; want one list (after at most two 410s), others only after short watches: %s", f, step.name, met, f.summary())
			}
		}
		// The wrapper counts the lists it starts, those refused included.
		lists := wrapper.counts(t, "gridview_wrapper_upstream_lists_total")["nodeendpoints"] - before.wrapperLists
		if lists < 1 {
			t.Errorf("gridview-wrapper, %s: listed NodeEndpoints %v times, want at least once, to get the other engine's views", step.name, lists)
		}
		t.Logf("gridview-wrapper, %s: %v lists of NodeEndpoints started, %d short watches in all", step.name, lists, wrapper.shortWatches(t))
		localcluster.Eventually(t, 30*time.Second, "gridview-wrapper's slices equal to a fresh list", func(ctx context.Context) error {
			return wrapperEqualsList(ctx, wrapper, s.NS, s.Node("a2"))
		})
	}
	oneContentPerResourceVersion(t, followers...)
	s.converged(t, 30*time.Second)
}

// hasVariantLabel fails the test unless every view f holds has the engine
// variant's label, or none has, as want says.
func (f *nodeFollower) hasVariantLabel(t *testing.T, want bool) {
	t.Helper()
	views := f.informer.GetStore().List()
	if len(views) == 0 {
		t.Errorf("%s holds no view: the test would prove nothing", f)
	}
	for _, obj := range views {
		view := obj.(interface{ GetLabels() map[string]string })
		if _, got := view.GetLabels()[variantLabel]; got != want {
			t.Errorf("%s holds %v with label %s: %v, want %v", f, view, variantLabel, got, want)
		}
	}
}
