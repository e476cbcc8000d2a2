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
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/test/localcluster"
)

// A replica's inputs carry every Service and EndpointSlice of the cluster:
// only gridview-apiserver's ServiceAccount, whose RBAC names the path, reads
// them. A node, which reads its own views, and any other user are refused
// with 403 naming the path, on either replica.
func TestOnlyGridviewReadsAReplicasInputs(t *testing.T) {
	gridviewSA := rest.ImpersonationConfig{UserName: "system:serviceaccount:gridview-system:gridview-apiserver",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:gridview-system", "system:authenticated"}}
	for _, r := range replicas {
		if !r.Running() {
			t.Fatalf("%s is not running: later tests expect two replicas", r.Name)
		}
		for _, user := range []rest.ImpersonationConfig{
			{UserName: "system:node:edge-1", Groups: []string{"system:nodes", "system:authenticated"}},
			{UserName: "alice", Groups: []string{"system:authenticated"}},
			{UserName: "system:serviceaccount:default:default", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}},
			gridviewSA,
		} {
			status, body, err := readInputs(t, r, user)
			refused := status == http.StatusForbidden && strings.Contains(body, `cannot get path \"/replication/inputs\"`)
			switch {
			case err != nil:
				t.Errorf("%s reading the inputs of %s: %v", user.UserName, r.Name, err)
			case user.UserName == gridviewSA.UserName && status == http.StatusForbidden:
				// The leader streams them, a follower answers 503.
				t.Errorf("gridview's ServiceAccount reading the inputs of %s: %d %q, want them read", r.Name, status, body)
			case user.UserName != gridviewSA.UserName && !refused:
				t.Errorf("%s reading the inputs of %s: %d %q, want 403 naming the path", user.UserName, r.Name, status, body)
			}
		}
	}
}

// readInputs reads a replica's inputs as user and returns the status and,
// unless the read was granted (it would stream on), the body.
func readInputs(t *testing.T, r *localcluster.GridviewReplica, user rest.ImpersonationConfig) (int, string, error) {
	t.Helper()
	cfg := r.Config()
	cfg.Impersonate = user
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/replication/inputs", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, "", nil
	}
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
