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
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// modRevisions are the mod revisions of the log's keys.
func modRevisions(t *testing.T, client *clientv3.Client) map[Key]int64 {
	t.Helper()
	resp, err := client.Get(t.Context(), testPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	revisions := map[Key]int64{}
	for _, kv := range resp.Kvs {
		key, err := parsePath(testPrefix, string(kv.Key))
		if err != nil {
			t.Fatal(err)
		}
		revisions[key] = kv.ModRevision
	}
	return revisions
}

// TestWriterToReader runs the inputs from a fake cluster through the log
// into a reader's sink, step by step.
func TestWriterToReader(t *testing.T) {
	t.Parallel()
	client, _ := startEtcd(t)
	kube, writer := startCluster(t, client, node("edge-1", "a"), namespace("demo", nil), service("demo", "echo", nil))
	lead(t, writer, testFence(t, client, "writer"))
	_, sink := read(t, client)
	await(t, 20*time.Second, "the cluster's objects never reached the sink", func() bool { return sink.len() == 3 })

	ctx := t.Context()
	nodes, services, slices, namespaces := kube.CoreV1().Nodes(), kube.CoreV1().Services("demo"),
		kube.DiscoveryV1().EndpointSlices("demo"), kube.CoreV1().Namespaces()
	for _, step := range []struct {
		name    string
		do      func() error
		key     Key
		reached func(metav1.Object) bool
	}{{
		name: "create a slice",
		do: func() error {
			_, err := slices.Create(ctx, slice("demo", "echo", "edge-1"), metav1.CreateOptions{})
			return err
		},
		key: sliceKey("demo", "echo-x"),
		reached: func(obj metav1.Object) bool {
			return obj != nil && len(obj.(*discoveryv1.EndpointSlice).Endpoints) == 1
		},
	}, {
		name: "create a node",
		do: func() error {
			_, err := nodes.Create(ctx, node("edge-2", "b"), metav1.CreateOptions{})
			return err
		},
		key:     nodeKey("edge-2"),
		reached: func(obj metav1.Object) bool { return obj != nil && obj.GetLabels()["topology.gridview.io/unit"] == "b" },
	}, {
		name: "update a slice",
		do: func() error {
			s := slice("demo", "echo", "edge-1", "edge-2")
			s.ResourceVersion = "2"
			_, err := slices.Update(ctx, s, metav1.UpdateOptions{})
			return err
		},
		key: sliceKey("demo", "echo-x"),
		reached: func(obj metav1.Object) bool {
			return obj != nil && len(obj.(*discoveryv1.EndpointSlice).Endpoints) == 2
		},
	}, {
		name: "relabel a node",
		do: func() error {
			n := node("edge-1", "b")
			n.ResourceVersion = "2"
			_, err := nodes.Update(ctx, n, metav1.UpdateOptions{})
			return err
		},
		key:     nodeKey("edge-1"),
		reached: func(obj metav1.Object) bool { return obj != nil && obj.GetLabels()["topology.gridview.io/unit"] == "b" },
	}, {
		name: "annotate a namespace",
		do: func() error {
			ns := namespace("demo", map[string]string{"topology.gridview.io/keys": "unit"})
			ns.ResourceVersion = "2"
			_, err := namespaces.Update(ctx, ns, metav1.UpdateOptions{})
			return err
		},
		key: namespaceKey("demo"),
		reached: func(obj metav1.Object) bool {
			return obj != nil && obj.GetAnnotations()["topology.gridview.io/keys"] == "unit"
		},
	}, {
		name: "change a service's spec",
		do: func() error {
			s := service("demo", "echo", nil)
			s.ResourceVersion, s.Spec.Ports[0].Port = "2", 81
			_, err := services.Update(ctx, s, metav1.UpdateOptions{})
			return err
		},
		key:     serviceKey("demo", "echo"),
		reached: func(obj metav1.Object) bool { return obj != nil && obj.(*corev1.Service).Spec.Ports[0].Port == 81 },
	}, {
		name:    "delete a slice",
		do:      func() error { return slices.Delete(ctx, "echo-x", metav1.DeleteOptions{}) },
		key:     sliceKey("demo", "echo-x"),
		reached: func(obj metav1.Object) bool { return obj == nil },
	}, {
		name:    "delete a node",
		do:      func() error { return nodes.Delete(ctx, "edge-2", metav1.DeleteOptions{}) },
		key:     nodeKey("edge-2"),
		reached: func(obj metav1.Object) bool { return obj == nil },
	}} {
		before := sink.lastRevision()
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		await(t, 20*time.Second, step.name+": never reached the sink", func() bool { return step.reached(sink.get(step.key)) })
		// The step's change came in the revision after the last step's,
		// alone.
		_, applies := sink.history()
		last := applies[len(applies)-1]
		if last.revision <= before || len(last.changes) != 1 || last.changes[0].Key != step.key {
			t.Errorf("%s: applied %+v after revision %d, want one change of %v", step.name, last, before, step.key)
		}
		if got := revision(t, client); got != last.revision {
			t.Errorf("%s: etcd is at revision %d after the sink's %d", step.name, got, last.revision)
		}
	}
}

// TestWriterSkipsWhatViewsDoNotRead: an update that changes nothing the
// views read moves no revision, one that does moves one.
func TestWriterSkipsWhatViewsDoNotRead(t *testing.T) {
	t.Parallel()
	client, _ := startEtcd(t)
	kube, writer := startCluster(t, client, node("edge-1", "a"), namespace("demo", nil), service("demo", "echo", nil))
	lead(t, writer, testFence(t, client, "writer"))
	_, sink := read(t, client)
	await(t, 20*time.Second, "the cluster's objects never reached the sink", func() bool { return sink.len() == 3 })
	ctx := t.Context()

	for i, tc := range []struct {
		name string
		// update updates the object under key in kube; a later update of a
		// sentinel of the same kind shows the writer saw it.
		update    func(rv string) error
		key       Key
		wantWrite bool
	}{{
		name: "kubelet status update",
		update: func(rv string) error {
			n := node("edge-1", "a")
			n.ResourceVersion = rv
			n.Annotations = map[string]string{"node.alpha.kubernetes.io/ttl": "30"}
			n.Status.Conditions[0].LastHeartbeatTime = metav1.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			_, err := kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		},
		key: nodeKey("edge-1"),
	}, {
		name: "node label update",
		update: func(rv string) error {
			n := node("edge-1", "b")
			n.ResourceVersion = rv
			_, err := kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		},
		key:       nodeKey("edge-1"),
		wantWrite: true,
	}, {
		name: "service status update",
		update: func(rv string) error {
			s := service("demo", "echo", nil)
			s.ResourceVersion, s.Status = rv, corev1.ServiceStatus{}
			_, err := kube.CoreV1().Services("demo").UpdateStatus(ctx, s, metav1.UpdateOptions{})
			return err
		},
		key: serviceKey("demo", "echo"),
	}, {
		name: "namespace status update",
		update: func(rv string) error {
			ns := namespace("demo", nil)
			ns.ResourceVersion, ns.Status.Phase = rv, corev1.NamespaceTerminating
			_, err := kube.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{})
			return err
		},
		key: namespaceKey("demo"),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := revision(t, client)
			held := modRevisions(t, client)[tc.key]
			if err := tc.update(fmt.Sprint(10 + i)); err != nil {
				t.Fatal(err)
			}
			// The informer hands out events of a kind in order, and the
			// writer queues keys in the order it gets them.
			sentinel := writeSentinel(t, kube, tc.key.Kind, i)
			await(t, 20*time.Second, "the sentinel never reached the sink", func() bool { return sink.get(sentinel) != nil })
			written := modRevisions(t, client)
			wantRevisions := int64(1)
			if tc.wantWrite {
				wantRevisions = 2
				if written[tc.key] == held {
					t.Errorf("%v was not written again", tc.key)
				}
			} else if written[tc.key] != held {
				t.Errorf("%v was written again at revision %d", tc.key, written[tc.key])
			}
			// The update and the sentinel may share a transaction.
			if got := revision(t, client) - before; got > wantRevisions || got < 1 {
				t.Errorf("etcd moved %d revisions, want 1 to %d", got, wantRevisions)
			}
		})
	}
}

// writeSentinel creates an object of kind, the i-th sentinel, and returns
// its key.
func writeSentinel(t *testing.T, kube *fake.Clientset, kind Kind, i int) Key {
	t.Helper()
	name := fmt.Sprintf("sentinel-%d", i)
	var err error
	var obj metav1.Object
	switch kind {
	case Nodes:
		obj, err = kube.CoreV1().Nodes().Create(t.Context(), node(name, "a"), metav1.CreateOptions{})
	case Services:
		obj, err = kube.CoreV1().Services("demo").Create(t.Context(), service("demo", name, nil), metav1.CreateOptions{})
	case Namespaces:
		obj, err = kube.CoreV1().Namespaces().Create(t.Context(), namespace(name, nil), metav1.CreateOptions{})
	case EndpointSlices:
		obj, err = kube.DiscoveryV1().EndpointSlices("demo").Create(t.Context(), slice("demo", name), metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return KeyOf(kind, obj)
}

// TestWriterBatches: a writer that finds many inputs to write writes them in
// transactions of up to maxBatchOps.
func TestWriterBatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// object is the i-th input queued, all at once.
		object func(i int) runtime.Object
		n, per int
	}{
		{name: "namespaces, up to the operations of a transaction", n: 2*maxBatchOps + 50, per: maxBatchOps,
			object: func(i int) runtime.Object { return namespace(fmt.Sprintf("ns-%03d", i), nil) }},
		// A node's move changes many views: few in a revision.
		{name: "nodes, a few at a time", n: 3*maxBatchNodes + 2, per: maxBatchNodes,
			object: func(i int) runtime.Object { return node(fmt.Sprintf("edge-%03d", i), "a") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var objects []runtime.Object
			for i := range tc.n {
				objects = append(objects, tc.object(i))
			}
			client, _ := startEtcd(t)
			_, writer := startCluster(t, client, objects...)
			before := revision(t, client)
			lead(t, writer, testFence(t, client, "writer"))
			_, sink := read(t, client)
			await(t, 20*time.Second, "the inputs never reached the sink", func() bool { return sink.len() == tc.n })

			distinct := map[int64]int{}
			for _, rev := range modRevisions(t, client) {
				distinct[rev]++
			}
			// One more revision for the fence's key.
			if got, want := revision(t, client)-before, int64(1+(tc.n+tc.per-1)/tc.per); got != want {
				t.Errorf("%d inputs took %d revisions, want %d", tc.n, got, want)
			}
			for rev, count := range distinct {
				if count > tc.per {
					t.Errorf("revision %d wrote %d inputs, more than %d", rev, count, tc.per)
				}
			}
			_, applies := sink.history()
			if len(applies) != len(distinct) {
				t.Errorf("the sink applied %d revisions, the log holds %d", len(applies), len(distinct))
			}
		})
	}
}

// TestWriterFenced: a writer whose fence fails writes nothing and ends
// with ErrDeposed.
func TestWriterFenced(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// fence is the fence the writer leads with; depose, if set, makes
		// it fail after the writer wrote the cluster's objects.
		fence  func(t *testing.T, client *clientv3.Client) clientv3.Cmp
		depose func(t *testing.T, client *clientv3.Client)
	}{{
		name: "wrong revision",
		fence: func(t *testing.T, client *clientv3.Client) clientv3.Cmp {
			testFence(t, client, "writer")
			return clientv3.Compare(clientv3.CreateRevision("/test/fences/writer"), "=", revision(t, client)+100)
		},
	}, {
		name: "election lost to another session",
		fence: func(t *testing.T, client *clientv3.Client) clientv3.Cmp {
			first, err := concurrency.NewSession(client)
			if err != nil {
				t.Fatal(err)
			}
			defer first.Close()
			election := concurrency.NewElection(first, "/test/election/")
			if err := election.Campaign(t.Context(), "first"); err != nil {
				t.Fatal(err)
			}
			fence := clientv3.Compare(clientv3.CreateRevision(election.Key()), "=", election.Rev())
			if err := election.Resign(t.Context()); err != nil {
				t.Fatal(err)
			}
			second, err := concurrency.NewSession(client)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { second.Close() })
			if err := concurrency.NewElection(second, "/test/election/").Campaign(t.Context(), "second"); err != nil {
				t.Fatal(err)
			}
			return fence
		},
	}, {
		name: "fence fails while leading",
		fence: func(t *testing.T, client *clientv3.Client) clientv3.Cmp {
			return testFence(t, client, "writer")
		},
		depose: func(t *testing.T, client *clientv3.Client) {
			if _, err := client.Put(t.Context(), "/test/fences/writer", "another"); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Delete(t.Context(), "/test/fences/writer"); err != nil {
				t.Fatal(err)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			client, _ := startEtcd(t)
			kube, writer := startCluster(t, client, node("edge-1", "a"), service("demo", "echo", nil))
			fence := tc.fence(t, client)
			before := revision(t, client)
			_, result := lead(t, writer, fence)
			if tc.depose != nil {
				await(t, 20*time.Second, "the writer never wrote the cluster's objects", func() bool { return len(modRevisions(t, client)) == 2 })
				tc.depose(t, client)
				if _, err := kube.CoreV1().Nodes().Create(t.Context(), node("edge-2", "a"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				before = revision(t, client)
			}
			held := modRevisions(t, client)
			select {
			case err := <-result:
				if !errors.Is(err, ErrDeposed) {
					t.Errorf("Lead returned %v, want ErrDeposed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("a deposed writer kept leading")
			}
			if got := revision(t, client); got != before {
				t.Errorf("a deposed writer moved etcd from revision %d to %d", before, got)
			}
			if got := modRevisions(t, client); !maps.Equal(got, held) {
				t.Errorf("a deposed writer left %v in the log, it held %v", got, held)
			}
		})
	}
}
