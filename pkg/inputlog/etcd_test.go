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
	"context"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gridview/gridview/pkg/embeddedetcd"
)

// startEtcd runs an embedded etcd member for the test and returns a client
// of it and its endpoint; both end with the test.
func startEtcd(t *testing.T) (*clientv3.Client, string) {
	t.Helper()
	endpoint, _ := startMember(t)
	return newClient(t, endpoint), endpoint
}

// startMember runs an embedded etcd member for the test and returns its
// endpoint and what stops it, which the test's end calls too.
func startMember(t *testing.T) (endpoint string, stop func()) {
	t.Helper()
	cfg, err := embeddedetcd.NewConfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := embeddedetcd.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(etcd.Close) }
	t.Cleanup(stop)
	return cfg.ClientURL.String(), stop
}

// newClient is another client of the member at endpoint, as another replica
// would have; it closes with the test.
func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// revision is etcd's current revision.
func revision(t *testing.T, client *clientv3.Client) int64 {
	t.Helper()
	resp, err := client.Get(t.Context(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// testFence is a fence that holds: the create revision of a key the test
// writes, as an election key would be.
func testFence(t *testing.T, client *clientv3.Client, name string) clientv3.Cmp {
	t.Helper()
	key := "/test/fences/" + name
	resp, err := client.Put(t.Context(), key, name)
	if err != nil {
		t.Fatal(err)
	}
	return clientv3.Compare(clientv3.CreateRevision(key), "=", resp.Header.Revision)
}

// holds says whether a fence holds now.
func holds(t *testing.T, client *clientv3.Client, fence clientv3.Cmp) bool {
	t.Helper()
	resp, err := client.Txn(t.Context()).If(fence).Commit()
	if err != nil {
		t.Fatal(err)
	}
	return resp.Succeeded
}

// await polls until ok or fails the test after timeout.
func await(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return ok(), nil
	}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
