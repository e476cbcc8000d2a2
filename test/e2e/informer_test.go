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

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	topologyinformers "github.com/gridview/gridview/generated/informers/externalversions"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// An informer on NodeEndpoints syncs, with client-go's streaming list or a
// plain list, and stays equal to a fresh list through churn.
func TestNodeEndpointsInformerStaysEqualToAList(t *testing.T) {
	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			s := newSite(t)
			s.expectViews(t, "b1", map[string][]string{"grid": s.podIPs(t, "grid", "b1")})
			if watchList {
				expectStreamingList(t, s.NS)
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			factory := topologyinformers.NewSharedInformerFactoryWithOptions(gridview, 0, topologyinformers.WithNamespace(s.NS))
			informer := factory.Topology().V1alpha1().NodeEndpoints().Informer()
			factory.Start(ctx.Done())
			if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
				t.Fatal("the informer did not sync")
			}

			for i, unit := range []string{"b", "a", "b"} {
				s.label(t, "a2", framework.UnitKey, unit)
				s.setReady(t, "grid", "a2", i%2 == 1)
				patch := fmt.Sprintf(`{"metadata":{"labels":{"round":"%d"}}}`, i)
				if _, err := kubeClient.CoreV1().Services(s.NS).Patch(ctx, "plain", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}

			// The informer's ctx, not the poll's: a list cut short by the
			// poll's deadline would hide the last difference seen.
			localcluster.Eventually(t, 10*time.Second, "the informer's cache equal to a fresh list", func(context.Context) error {
				list, err := gridview.TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{})
				if err != nil {
					return err
				}
				want := map[string]string{}
				for i := range list.Items {
					want[list.Items[i].Name] = summary(&list.Items[i])
				}
				got := map[string]string{}
				for _, obj := range informer.GetStore().List() {
					view := obj.(*topologyv1alpha1.NodeEndpoints)
					got[view.Name] = summary(view)
				}
				if !maps.Equal(got, want) {
					return fmt.Errorf("the informer differs from a list:\n%s", viewDiff(got, want))
				}
				return nil
			})
		})
	}
}

// viewDiff lists the views two summaries by name disagree on, one a line.
func viewDiff(got, want map[string]string) string {
	names := maps.Clone(got)
	maps.Copy(names, want)
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if got[name] != want[name] {
			lines = append(lines, fmt.Sprintf("%s: got %q, want %q", name, got[name], want[name]))
		}
	}
	return strings.Join(lines, "\n")
}

// summary is what an informer must agree on with a list: labels, topology
// and endpoints with their readiness. Not the resourceVersion: a list gives
// an object the latest of its Service's views' and its node's, which may be
// later than the event that brought its content (an object's own would be
// state per node and slice; docs/architecture.md, view store).
func summary(view *topologyv1alpha1.NodeEndpoints) string {
	var endpoints []string
	for _, ep := range view.Slice.Endpoints {
		endpoints = append(endpoints, fmt.Sprintf("%v:%v", ep.Addresses, ep.Conditions.Ready == nil || *ep.Conditions.Ready))
	}
	return fmt.Sprintf("%v %+v %v", view.Labels, view.Topology, endpoints)
}

// expectStreamingList checks that the server streams the initial state and
// ends it with the annotated bookmark, as client-go's WatchListClient expects.
func expectStreamingList(t *testing.T, ns string) {
	t.Helper()
	w, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).Watch(context.Background(), metav1.ListOptions{
		SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	if err != nil {
		t.Fatalf("streaming list: %v", err)
	}
	defer w.Stop()
	added := 0
	for {
		select {
		case e := <-w.ResultChan():
			switch e.Type {
			case watch.Added:
				added++
			case watch.Bookmark:
				view := e.Object.(*topologyv1alpha1.NodeEndpoints)
				if view.Annotations[metav1.InitialEventsAnnotationKey] != "true" || added < 9 {
					t.Fatalf("bookmark %v after %d ADDED events, want the initial-events-end bookmark after at least 9", view.Annotations, added)
				}
				return
			default:
				t.Fatalf("streaming list: unexpected %s event %v", e.Type, e.Object)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("streaming list: no initial-events-end bookmark within 5s (%d ADDED)", added)
		}
	}
}
