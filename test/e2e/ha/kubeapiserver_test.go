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
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/test/localcluster"
)

// Across a kube-apiserver restart, gridview's informers resume and every
// view a client sees is one the sources really had: node a1's view of grid
// goes through the states below in order, never back, never a mix of two,
// never missing. Each state is one EndpointSlice write, so a view between
// two of them would be wrong. The replica elected before stays elected: the
// replicas elect in gridview's etcd, which the restart does not touch. Both
// end at the same revision of gridview's input log with the same views.
func TestKubeAPIServerRestart(t *testing.T) {
	ctx := context.Background()
	s := newSite(t)
	states := [][]string{
		{"10.1.0.1", "10.1.0.2"},   // as newSite wrote it
		{"10.1.0.11", "10.1.0.12"}, // written just before the restart
		{"10.1.0.21", "10.1.0.22"}, // written right after it
	}
	slice := func(i int) map[string]string {
		return map[string]string{states[i][0]: "a1", states[i][1]: "a2", fmt.Sprintf("10.1.0.%d3", i): "b1"}
	}
	leader := awaitLeader(t, 30*time.Second)
	for _, r := range replicas {
		localcluster.Eventually(t, 10*time.Second, r.Name+" serving a1's first view", func(ctx context.Context) error {
			got, err := s.gridAddresses(ctx, directClient(t, r), "a1")
			if err == nil && !slices.Equal(got, states[0]) {
				err = fmt.Errorf("%v", got)
			}
			return err
		})
	}

	// Watch each replica directly: a watch through the aggregator would end
	// with kube-apiserver, while these stay open across the restart.
	var wg sync.WaitGroup
	observed := make([][]string, len(replicas))
	// deliveredLast is closed when a watch has delivered the last state.
	deliveredLast := make([]chan struct{}, len(replicas))
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	for i, r := range replicas {
		w, err := directClient(t, r).TopologyV1alpha1().NodeEndpoints(s.NS).Watch(watchCtx, metav1.ListOptions{
			FieldSelector: "nodeName=" + s.Node("a1"), AllowWatchBookmarks: true})
		if err != nil {
			t.Fatalf("watch %s: %v", r.Name, err)
		}
		deliveredLast[i] = make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			last, delivered := strings.Join(states[2], ","), false
			for ev := range w.ResultChan() {
				view, ok := ev.Object.(*topologyv1alpha1.NodeEndpoints)
				if !ok || view.ServiceName != "grid" || ev.Type == watch.Bookmark {
					continue
				}
				state := strings.Join(addresses(view), ",")
				if ev.Type == watch.Deleted {
					state = "DELETED"
				}
				observed[i] = append(observed[i], state)
				if state == last && !delivered {
					delivered = true
					close(deliveredLast[i])
				}
			}
		}()
	}

	ledBefore := startsOfLeading(t)
	s.writeSlice(t, slice(1))
	start := time.Now()
	if err := cluster.RestartKubeAPIServer(ctx); err != nil {
		t.Fatalf("restart kube-apiserver: %v", err)
	}
	t.Logf("kube-apiserver back after %s", time.Since(start).Round(100*time.Millisecond))
	s.writeSlice(t, slice(2))

	for _, r := range replicas {
		localcluster.Eventually(t, 60*time.Second, r.Name+" serving a1's last view", func(ctx context.Context) error {
			got, err := s.gridAddresses(ctx, directClient(t, r), "a1")
			if err == nil && !slices.Equal(got, states[2]) {
				err = fmt.Errorf("%v", got)
			}
			return err
		})
	}
	localcluster.Eventually(t, 60*time.Second, "a1's last view through the aggregator", func(ctx context.Context) error {
		return expectAddresses(ctx, s, "a1", states[2]...)
	})
	// A replica's informers relist each kind on its own after the restart,
	// so a Node change written before a replica has the last slice could
	// reach its view before that slice does, as in any client of
	// kube-apiserver with informers of two kinds.
	listed := time.Now()
	for i, r := range replicas {
		select {
		case <-deliveredLast[i]:
			t.Logf("%s's watch had the last state %s after the lists", r.Name, time.Since(listed).Round(time.Millisecond))
		case <-time.After(60 * time.Second):
			t.Fatalf("%s's watch never delivered the last state", r.Name)
		}
	}
	// The informers resumed: a change made now arrives as usual.
	if err := s.relabel(ctx, kubeClient, "a2", "b"); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 10*time.Second, "a1's view after a2 left unit a", func(ctx context.Context) error {
		return expectAddresses(ctx, s, "a1", states[2][0])
	})
	time.Sleep(500 * time.Millisecond) // let the watchers drain
	stopWatching()
	wg.Wait()

	// The election lives in gridview's etcd: the leader keeps leading, the
	// other replica never led meanwhile.
	ledAfter := startsOfLeading(t)
	for _, r := range replicas {
		if ledAfter[r.Name] != ledBefore[r.Name] {
			t.Errorf("%s was elected %d times across the restart of kube-apiserver, %s led before", r.Name, ledAfter[r.Name]-ledBefore[r.Name], leader.Name)
		}
	}
	if leading, err := leaders(ctx); err != nil || len(leading) != 1 || leading[0] != leader {
		t.Errorf("leading after the restart: %v (%v), want %s, which led before", names(leading), err, leader.Name)
	}
	s.converged(t, 20*time.Second)

	for i, seen := range observed {
		t.Logf("%s: a1's view of grid went %v", replicas[i].Name, seen)
		last := 0
		for _, state := range seen {
			if state == states[2][0] {
				break // the relabel at the end
			}
			at := slices.IndexFunc(states, func(s []string) bool { return strings.Join(s, ",") == state })
			if at < 0 || at < last {
				t.Errorf("%s served %q after state %d: neither a state the sources had nor a later one", replicas[i].Name, state, last)
				continue
			}
			last = at
		}
		if last != 2 {
			t.Errorf("%s's watch never delivered the last state", replicas[i].Name)
		}
	}
}
