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

package embeddedetcd

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestDataSurvivesRestart writes through one member and reads through a new
// member started on the same data directory, on other ports.
func TestDataSurvivesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()

	withMember(ctx, t, dir, func(client *clientv3.Client) {
		if _, err := client.Put(ctx, "/registry/topology.gridview.io/servicegrids/demo/echo", "stored"); err != nil {
			t.Fatalf("put: %v", err)
		}
	})
	withMember(ctx, t, dir, func(client *clientv3.Client) {
		resp, err := client.Get(ctx, "/registry/topology.gridview.io/servicegrids/demo/echo")
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "stored" {
			t.Fatalf("after restart: %v, want the stored value", resp.Kvs)
		}
	})
}

func withMember(ctx context.Context, t *testing.T, dir string, use func(*clientv3.Client)) {
	t.Helper()
	cfg, err := NewConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateDataDir(dir); err != nil {
		t.Fatal(err)
	}
	etcd, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{cfg.ClientURL.String()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	use(client)
}
