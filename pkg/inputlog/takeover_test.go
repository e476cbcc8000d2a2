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

package inputlog

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestWriterTakeover: a writer that leads after another writes only what
// differs between its informers and the log.
func TestWriterTakeover(t *testing.T) {
	t.Parallel()
	first := []runtime.Object{
		node("edge-1", "a"), node("edge-2", "a"), namespace("demo", nil),
		service("demo", "echo", nil), slice("demo", "echo", "edge-1", "edge-2"),
	}
	for _, tc := range []struct {
		name string
		// second is what the second writer's informers hold.
		second []runtime.Object
		// changed are the keys the second writer writes, besides a
		// sentinel.
		changed []Key
	}{{
		name:   "log already equal",
		second: first,
	}, {
		name: "only status and resourceVersion differ",
		second: func() []runtime.Object {
			edge1 := node("edge-1", "a")
			edge1.ResourceVersion, edge1.Status = "77", corev1.NodeStatus{Phase: corev1.NodeRunning}
			echo := service("demo", "echo", nil)
			echo.ResourceVersion, echo.Status = "78", corev1.ServiceStatus{}
			return []runtime.Object{edge1, node("edge-2", "a"), namespace("demo", nil), echo, slice("demo", "echo", "edge-1", "edge-2")}
		}(),
	}, {
		name: "inputs changed, added and removed",
		second: func() []runtime.Object {
			echo := service("demo", "echo", map[string]string{"topology.gridview.io/keys": "unit"})
			return []runtime.Object{
				node("edge-1", "a"), namespace("demo", nil), namespace("other", nil), echo, slice("demo", "echo", "edge-1"),
			}
		}(),
		changed: []Key{nodeKey("edge-2"), namespaceKey("other"), serviceKey("demo", "echo"), sliceKey("demo", "echo-x")},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			client, _ := startEtcd(t)
			_, writer := startCluster(t, client, first...)
			stop, result := lead(t, writer, testFence(t, client, "first"))
			await(t, 20*time.Second, "the first writer never wrote its inputs", func() bool {
				return len(modRevisions(t, client)) == len(first)
			})
			stop()
			select {
			case err := <-result:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the stopped writer's Lead returned %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the first writer kept leading")
			}

			kube, writer := startCluster(t, client, tc.second...)
			fence := testFence(t, client, "second")
			before, held := revision(t, client), modRevisions(t, client)
			lead(t, writer, fence)
			// The sentinel shows the second writer wrote what it found
			// different when it took over.
			sentinel := writeSentinel(t, kube, Nodes, 0)
			await(t, 20*time.Second, "the second writer never wrote the sentinel", func() bool {
				_, ok := modRevisions(t, client)[sentinel]
				return ok
			})

			after := modRevisions(t, client)
			var changed []Key
			for key := range maps.Keys(held) {
				if after[key] != held[key] {
					changed = append(changed, key)
				}
			}
			for key := range maps.Keys(after) {
				if _, ok := held[key]; !ok && key != sentinel {
					changed = append(changed, key)
				}
			}
			compare := func(a, b Key) int {
				return cmp.Or(cmp.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
			}
			slices.SortFunc(changed, compare)
			want := slices.SortedFunc(slices.Values(tc.changed), compare)
			if !slices.Equal(changed, want) {
				t.Errorf("the second writer wrote %v, want %v", changed, want)
			}
			// The differences go in one transaction, the sentinel in it or
			// the next.
			wantRevisions := int64(1)
			if len(tc.changed) > 0 {
				wantRevisions = 2
			}
			if got := revision(t, client) - before; got < 1 || got > wantRevisions {
				t.Errorf("the second writer moved etcd %d revisions, want 1 to %d", got, wantRevisions)
			}
		})
	}
}
