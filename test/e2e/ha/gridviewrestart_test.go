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
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/test/localcluster"
)

// Restarting gridview-apiserver's replicas costs their clients no relist:
// every replica derives its views from gridview's input log in etcd and
// numbers each change by the revision that wrote its input, so a restarted
// replica, ready once it read the log up to its latest write, numbers every
// change as before, while the resourceVersion is within etcd's compaction
// window. Package e2e's TestServiceGridsSurviveRestart covers the
// ServiceGrids kept in etcd.
func TestNodeEndpointsCurrentAfterGridviewRestart(t *testing.T) {
	// One replica at a time, as a rolling update restarts them: an informer
	// through the aggregator watches on across both restarts, lists once,
	// and has the change made while each replica was down. (Unless a
	// re-watch races a replica's stop: see listedOnceAcrossStops.)
	t.Run("one replica at a time", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := newSite(t)
		s.converged(t, 20*time.Second)
		views := gridview.TopologyV1alpha1().NodeEndpoints(s.NS)
		f := followNode(ctx, t, views, s.Node("a1"), false, 3*time.Second)
		// a2 leaves unit a and comes back: a1's view of grid changes.
		steps := []struct {
			unit string
			want []string
		}{
			{unit: "b", want: []string{"10.1.0.1"}},
			{unit: "a", want: []string{"10.1.0.1", "10.1.0.2"}},
		}
		var stops []time.Time
		for i, r := range replicas {
			step := steps[i%len(steps)]
			stops = append(stops, time.Now())
			if err := r.Stop(); err != nil {
				t.Fatal(err)
			}
			stopped := time.Now()
			// A change while it is down, which the other replica's views
			// take from the log.
			if err := s.relabel(ctx, kubeClient, "a2", step.unit); err != nil {
				t.Fatal(err)
			}
			if err := r.Start(ctx); err != nil {
				t.Fatalf("start %s again: %v", r.Name, err)
			}
			t.Logf("%s serving again %s after it was stopped", r.Name, time.Since(stopped).Round(100*time.Millisecond))
			localcluster.Eventually(t, 20*time.Second, fmt.Sprintf("the informer holding a1's view of grid %v", step.want), func(context.Context) error {
				obj, ok, err := f.informer.GetStore().GetByKey(s.NS + "/" + s.gridView("a1"))
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("no view")
				}
				if got := addresses(obj.(*topologyv1alpha1.NodeEndpoints)); !slices.Equal(got, step.want) {
					return fmt.Errorf("%v", got)
				}
				return nil
			})
		}
		t.Logf("%s: %s", f, f.summary())
		f.listedOnceAcrossStops(t, "across the restart of each replica", stops)
		f.equalsList(t, views)
		s.converged(t, 20*time.Second)
	})

	// Every replica at once: a client's resourceVersion from before resumes
	// on each restarted replica, which sends the change made while none
	// ran, not 410 Gone.
	t.Run("every replica at once", func(t *testing.T) {
		ctx := context.Background()
		s := newSite(t)
		s.converged(t, 20*time.Second)
		before, err := gridview.TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// Later tests expect two replicas.
			for _, r := range replicas {
				if !r.Running() {
					if err := r.Start(context.Background()); err != nil {
						t.Errorf("starting %s again: %v", r.Name, err)
					}
				}
			}
		})
		for _, r := range replicas {
			if err := r.Stop(); err != nil {
				t.Fatal(err)
			}
		}
		// A change while no replica runs: the one elected next writes it.
		if err := s.relabel(ctx, kubeClient, "a2", "b"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for _, r := range replicas {
			if err := r.Start(ctx); err != nil {
				t.Fatalf("start %s again: %v", r.Name, err)
			}
		}
		t.Logf("both replicas serving again %s after the first was started", time.Since(start).Round(100*time.Millisecond))
		for _, r := range replicas {
			seen, err := watchFrom(ctx, directClient(t, r).TopologyV1alpha1().NodeEndpoints(s.NS), s.Node("a1"), before.ResourceVersion, s.gridViewIs("a1", "10.1.0.1"))
			if err != nil {
				t.Errorf("a watch on %s, restarted, from resourceVersion %s, listed before every replica stopped, waiting for a1's view of grid after a2 left unit a: %v",
					r.Name, before.ResourceVersion, err)
			} else if len(seen) != 1 {
				t.Errorf("a watch on %s from resourceVersion %s sent %q: want the one change since", r.Name, before.ResourceVersion, seen)
			}
		}
		s.converged(t, 20*time.Second)
	})
}
