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
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/dump"
)

// logOp is one operation of a transaction on etcd: a put of an input, a
// deletion of one, or a write outside the log.
type logOp struct {
	put    metav1.Object
	kind   Kind
	delete Key
	other  string
}

func put(kind Kind, obj metav1.Object) logOp { return logOp{put: obj, kind: kind} }
func remove(key Key) logOp                   { return logOp{delete: key} }
func other(key string) logOp                 { return logOp{other: key} }

func (op logOp) key() Key {
	if op.put != nil {
		return KeyOf(op.kind, op.put)
	}
	return op.delete
}

// commit writes ops in one transaction and returns its revision.
func commit(t *testing.T, client *clientv3.Client, ops ...logOp) int64 {
	t.Helper()
	var etcdOps []clientv3.Op
	for _, op := range ops {
		switch {
		case op.other != "":
			etcdOps = append(etcdOps, clientv3.OpPut(op.other, "not an input"))
		case op.put != nil:
			value, err := encode(op.put)
			if err != nil {
				t.Fatal(err)
			}
			etcdOps = append(etcdOps, clientv3.OpPut(op.key().path(testPrefix), string(value)))
		default:
			etcdOps = append(etcdOps, clientv3.OpDelete(op.key().path(testPrefix)))
		}
	}
	resp, err := client.Txn(t.Context()).Then(etcdOps...).Commit()
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// decoded is obj as the log holds it.
func decoded(t *testing.T, kind Kind, obj metav1.Object) metav1.Object {
	t.Helper()
	value, err := encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decode(KeyOf(kind, obj), value)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReaderLoadsAtTheOldestRevision: a reader started after writes and a
// compaction loads the log at the compaction's revision, the oldest etcd
// holds, and applies every revision of the log after it, in order; it is
// current once it reached the last.
func TestReaderLoadsAtTheOldestRevision(t *testing.T) {
	t.Parallel()
	relabelled := node("edge-1", "b")
	moved := service("demo", "echo", nil)
	moved.Spec.Ports[0].Port = 81
	script := [][]logOp{
		{put(Namespaces, namespace("demo", nil)), put(Nodes, node("edge-1", "a")), put(Nodes, node("edge-2", "a"))},
		{put(Services, service("demo", "echo", nil))},
		{other("/test/other/1")},
		{put(EndpointSlices, slice("demo", "echo", "edge-1")), put(Nodes, relabelled)},
		{remove(nodeKey("edge-2"))},
		{put(Services, moved), other("/test/other/2")},
		// The log's last write is a deletion, etcd's a key outside it.
		{remove(sliceKey("demo", "echo-x")), remove(namespaceKey("demo"))},
		{other("/test/other/3")},
	}
	for _, tc := range []struct {
		name string
		// compactAfter is the step of the script after which etcd was
		// compacted, -1 for never.
		compactAfter int
	}{
		{"never compacted", -1},
		{"compacted after the first write", 0},
		{"compacted at a revision of another key", 2},
		{"compacted after a deletion", 4},
		{"compacted at the log's last write", 6},
		{"compacted at etcd's last write", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, _ := startEtcd(t)
			// states[i] is the log after step i; revisions[i] the step's.
			var states []map[Key]metav1.Object
			var revisions []int64
			state := map[Key]metav1.Object{}
			for _, ops := range script {
				revisions = append(revisions, commit(t, client, ops...))
				for _, op := range ops {
					switch {
					case op.put != nil:
						state[op.key()] = decoded(t, op.kind, op.put)
					case op.other == "":
						delete(state, op.key())
					}
				}
				states = append(states, maps.Clone(state))
			}
			wantLoad, wantLoaded := int64(1), map[Key]metav1.Object{}
			if tc.compactAfter >= 0 {
				wantLoad, wantLoaded = revisions[tc.compactAfter], states[tc.compactAfter]
				if _, err := client.Compact(t.Context(), wantLoad, clientv3.WithCompactPhysical()); err != nil {
					t.Fatal(err)
				}
			}
			// lastWrite is the revision of the log's last write.
			lastWrite := revisions[6]

			// The sink holds the last write's revision until the test saw
			// the reader is not current yet.
			sink := newRecordingSink()
			blocked, release := make(chan struct{}), make(chan struct{})
			sink.beforeApply = func(revision int64) {
				if revision == lastWrite {
					close(blocked)
					<-release
				}
			}
			reader := NewReader(client, testPrefix, sink)
			if reader.Current() {
				t.Error("a reader that did not run is current")
			}
			reader = readInto(t, client, sink)
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })
			await(t, 20*time.Second, "the reader never loaded", func() bool {
				loads, _ := sink.history()
				return len(loads) > 0
			})
			if wantLoad < lastWrite {
				select {
				case <-blocked:
				case <-time.After(5 * time.Second):
					t.Fatal("the reader never applied the log's last write")
				}
				if reader.Current() {
					t.Errorf("the reader is current before it applied revision %d, the log's last write", lastWrite)
				}
				once.Do(func() { close(release) })
			}
			await(t, 20*time.Second, "the reader never became current", reader.Current)
			if got := reader.reached.Load(); got < lastWrite {
				t.Errorf("the reader is current at revision %d, before the log's last write at %d", got, lastWrite)
			}

			// etcd's last write changed no input; the reader is current once
			// etcd said its watch passed it.
			if got := sink.lastRevision(); got != revisions[7] {
				t.Errorf("the sink is at revision %d, not etcd's, %d", got, revisions[7])
			}
			loads, applies := sink.history()
			if !slices.Equal(loads, []int64{wantLoad}) {
				t.Errorf("loaded at revisions %v, want %d", loads, wantLoad)
			}
			if got := sink.lastLoaded(); !apiequality.Semantic.DeepEqual(got, wantLoaded) {
				t.Errorf("loaded\n%s\nwant\n%s", dump.Pretty(got), dump.Pretty(wantLoaded))
			}
			var wantApplied []int64
			for i, ops := range script {
				if revisions[i] <= wantLoad || ops[0].other != "" {
					continue
				}
				wantApplied = append(wantApplied, revisions[i])
			}
			var applied []int64
			for _, a := range applies {
				applied = append(applied, a.revision)
				i := slices.Index(revisions, a.revision)
				if i < 0 {
					t.Errorf("applied revision %d, which wrote no input", a.revision)
					continue
				}
				// The changes of a revision come in the order written.
				var want []Change
				for _, op := range script[i] {
					if op.other == "" {
						want = append(want, Change{Key: op.key(), Object: states[i][op.key()]})
					}
				}
				if !apiequality.Semantic.DeepEqual(a.changes, want) {
					t.Errorf("revision %d applied\n%s\nwant\n%s", a.revision, dump.Pretty(a.changes), dump.Pretty(want))
				}
			}
			if !slices.Equal(applied, wantApplied) {
				t.Errorf("applied revisions %v, want %v", applied, wantApplied)
			}
			if got, want := sink.snapshot(), states[len(states)-1]; !apiequality.Semantic.DeepEqual(got, want) {
				t.Errorf("the sink holds\n%s\nwant\n%s", dump.Pretty(got), dump.Pretty(want))
			}
		})
	}
}

// A reader cut off from etcd is not current once its watch has been silent
// for silenceLimit: the etcd client keeps a watch open while it cannot
// reach etcd, so no error says so, and a replica that says it is current
// would serve frozen views to the watches it holds.
func TestAReaderCutOffFromEtcdIsNotCurrent(t *testing.T) {
	t.Parallel()
	endpoint, stopEtcd := startMember(t)
	client := newClient(t, endpoint)
	reader, _ := read(t, client)
	await(t, 20*time.Second, "the reader never became current", reader.Current)
	// Quiet but connected: etcd answers the progress requests. A window
	// past silenceLimit is the only way to see that the reader stays current.
	time.Sleep(silenceLimit + progressInterval)
	if !reader.Current() {
		t.Fatal("a reader of a quiet log stopped being current")
	}
	stopEtcd()
	cut := time.Now()
	await(t, 2*silenceLimit, "the reader stayed current with etcd gone", func() bool { return !reader.Current() })
	t.Logf("not current %v after etcd went", time.Since(cut).Round(time.Second))
}
