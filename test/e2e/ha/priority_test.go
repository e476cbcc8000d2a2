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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/test/localcluster"
)

// nodeWatches is more node watches than the two replicas' "system" priority
// level has seats (74 each at the default 600), as a fleet's wrappers hold.
const nodeWatches = 200

// Nodes' watches of their views, through the aggregator with the nodes'
// identities (system:node:<name> in system:nodes, API Priority and
// Fairness's "system" level), hold no seat once set up on the replica that
// serves them: otherwise the nodes beyond a replica's seats would wait for a
// watch to end. The aggregator spreads them over the replicas, each of which
// serves its share itself.
func TestNodeWatchesHoldNoPrioritySeats(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	grantNodesTheirViews(ctx, t)

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	watching := make(chan error, nodeWatches)
	for i := range nodeWatches {
		node := fmt.Sprintf("apf-%03d", i)
		client := asNode(t, node)
		wg.Go(func() {
			w, err := client.TopologyV1alpha1().NodeEndpoints("").Watch(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + node})
			watching <- err
			if err == nil {
				drain(w)
			}
		})
	}
	deadline := time.After(time.Minute)
	for range nodeWatches {
		select {
		case err := <-watching:
			if err != nil {
				t.Fatalf("a node's watch: %v", err)
			}
		case <-deadline:
			t.Fatal("the nodes' watches not set up within a minute")
		}
	}
	localcluster.Eventually(t, 10*time.Second, "every node watch held by a replica", func(ctx context.Context) error {
		held := map[string]float64{}
		total := 0.0
		for _, r := range runningReplicas() {
			watchers, err := metric(ctx, r, "gridview_nodeendpoints_watchers")
			if err != nil {
				return err
			}
			held[r.Name] = watchers
			total += watchers
		}
		if total < nodeWatches {
			return fmt.Errorf("watchers by replica %v, %d node watches open", held, nodeWatches)
		}
		for name, watchers := range held {
			if watchers == 0 {
				return fmt.Errorf("%s holds no watcher of the %d nodes' (by replica: %v): the aggregator sent every watch elsewhere", name, nodeWatches, held)
			}
		}
		t.Logf("NodeEndpoints watchers by replica: %v", held)
		return nil
	})
	for _, r := range runningReplicas() {
		localcluster.Eventually(t, 10*time.Second, r.Name+" holding no seat for watches set up", func(ctx context.Context) error {
			seats, err := executingSeats(ctx, r, "system")
			if err != nil {
				return err
			}
			if seats > nodeWatches/20 {
				return fmt.Errorf("%s: %v seats of the system priority level executing with %d node watches open", r.Name, seats, nodeWatches)
			}
			return nil
		})
	}
	listCtx, listCancel := context.WithTimeout(ctx, 5*time.Second)
	defer listCancel()
	if _, err := asNode(t, "apf-999").TopologyV1alpha1().NodeEndpoints("").List(listCtx, metav1.ListOptions{FieldSelector: "nodeName=apf-999"}); err != nil {
		t.Errorf("a node's list beside %d node watches: %v", nodeWatches, err)
	}
}

// grantNodesTheirViews applies gridview-wrapper's RBAC, which grants
// every node its views, and waits until kube-apiserver authorizes a node.
func grantNodesTheirViews(ctx context.Context, t *testing.T) {
	t.Helper()
	if err := cluster.ApplyWrapperRBAC(ctx); err != nil {
		t.Fatal(err)
	}
	// RBAC's authorizer reads bindings from an informer.
	localcluster.Eventually(t, 10*time.Second, "nodes allowed to list their views", func(ctx context.Context) error {
		_, err := asNode(t, "apf-rbac").TopologyV1alpha1().NodeEndpoints("").List(ctx, metav1.ListOptions{FieldSelector: "nodeName=apf-rbac"})
		return err
	})
}

// asNode is a client through the aggregator as a node, impersonated by the
// admin, as kubelet's credentials name it.
func asNode(t *testing.T, node string) versioned.Interface {
	t.Helper()
	cfg := rest.CopyConfig(cluster.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	cfg.QPS, cfg.Burst = -1, 0
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func drain(w watch.Interface) {
	for range w.ResultChan() {
	}
}

// executingSeats sums a replica's apiserver_flowcontrol_current_executing_seats
// of one priority level, over its flow schemas.
func executingSeats(ctx context.Context, r *localcluster.GridviewReplica, level string) (float64, error) {
	body, err := metricsText(ctx, r)
	if err != nil {
		return 0, err
	}
	var sum float64
	found := false
	for line := range strings.Lines(body) {
		if !strings.HasPrefix(line, "apiserver_flowcontrol_current_executing_seats{") || !strings.Contains(line, `priority_level="`+level+`"`) {
			continue
		}
		value, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndex(line, " ")+1:]), 64)
		if err != nil {
			return 0, err
		}
		sum, found = sum+value, true
	}
	if !found {
		return 0, fmt.Errorf("%s: %w of apiserver_flowcontrol_current_executing_seats for priority level %s", r.Name, localcluster.ErrNoSample, level)
	}
	return sum, nil
}
