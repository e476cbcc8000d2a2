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
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// get fetches a path with the REST client of cfg.
func get(ctx context.Context, t *testing.T, cfg *rest.Config, path string, params map[string]string) (string, error) {
	t.Helper()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := client.Discovery().RESTClient().Get().AbsPath(path)
	for k, v := range params {
		req.Param(k, v)
	}
	body, err := req.DoRaw(ctx)
	return string(body), err
}

func TestHealthAndMetricsEndpoints(t *testing.T) {
	ctx := context.Background()
	direct := cluster.GridviewConfig()
	tests := []struct {
		path   string
		params map[string]string
		want   []string
	}{
		{path: "/readyz", params: map[string]string{"verbose": "true"},
			want: []string{"[+]etcd-readiness ok", "[+]informer-sync ok", "[+]nodeendpoints-views ok", "readyz check passed"}},
		{path: "/livez", params: map[string]string{"verbose": "true"}, want: []string{"[+]etcd ok", "livez check passed"}},
		{path: "/metrics", want: []string{`apiserver_request_total{`, `resource="servicegrids"`,
			"gridview_nodeendpoints_views_recomputed_total ", "gridview_nodeendpoints_recompute_duration_seconds_bucket{",
			"gridview_nodeendpoints_watch_events_sent_total ", "gridview_nodeendpoints_watchers ",
			"gridview_nodeendpoints_watchers_cut_off_total ", "gridview_topology_malformed_annotations "}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			body, err := get(ctx, t, direct, tc.path, tc.params)
			if err != nil {
				t.Fatalf("GET %s: %v\n%s", tc.path, err, body)
			}
			for _, want := range tc.want {
				if !strings.Contains(body, want) {
					t.Errorf("GET %s lacks %q:\n%.2000s", tc.path, want, body)
				}
			}
		})
	}
}

// The aggregator merges gridview's OpenAPI into the cluster's, with the
// group-version-kind that server-side apply and kubectl explain need.
func TestOpenAPIThroughTheAggregator(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		path string
		want []string
	}{
		{path: "/openapi/v2", want: []string{`"io.gridview.topology.v1alpha1.ServiceGrid"`, `"io.gridview.topology.v1alpha1.NodeEndpoints"`, `"group":"topology.gridview.io"`}},
		{path: "/openapi/v3/apis/topology.gridview.io/v1alpha1", want: []string{`"io.gridview.topology.v1alpha1.ServiceGrid"`, `"gridUniqKey"`, `"kind":"NodeEndpoints"`}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			var body string
			// The aggregator refreshes merged specs in the background.
			err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				var err error
				body, err = get(ctx, t, cluster.AdminConfig, tc.path, nil)
				if err != nil {
					return false, nil
				}
				for _, want := range tc.want {
					if !strings.Contains(body, want) {
						return false, nil
					}
				}
				return true, nil
			})
			if err != nil {
				t.Errorf("GET %s never held %q; last body (%d bytes): %.1000s", tc.path, tc.want, len(body), body)
			}
		})
	}
}

// Restarting gridview-apiserver keeps every ServiceGrid: they live in the
// embedded etcd's data directory. The restart returns once the group is served
// again, so the tests after this one are unaffected.
func TestServiceGridsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	client := gridview.TopologyV1alpha1().ServiceGrids(ns)
	if _, err := client.Create(ctx, framework.NewServiceGrid("durable"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	// Once Ready, nothing writes the ServiceGrid: its resourceVersion must stay.
	before := framework.WaitServiceGridReady(t, gridview, ns, "durable", 5*time.Second)
	if err := cluster.RestartGridview(ctx); err != nil {
		t.Fatalf("restart gridview-apiserver: %v", err)
	}
	after, err := client.Get(ctx, "durable", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after restart: %v", err)
	}
	if after.UID != before.UID || after.ResourceVersion != before.ResourceVersion || after.Spec.GridUniqKey != before.Spec.GridUniqKey {
		t.Errorf("after restart: uid %s rv %s key %s; before: uid %s rv %s key %s",
			after.UID, after.ResourceVersion, after.Spec.GridUniqKey, before.UID, before.ResourceVersion, before.Spec.GridUniqKey)
	}
	// The restarted reconciler finds the Service in place.
	framework.WaitServiceGridReady(t, gridview, ns, "durable", 5*time.Second)

	// A Service deleted while gridview-apiserver is down is back once it runs.
	if err := cluster.StopGridview(); err != nil {
		t.Fatal(err)
	}
	if err := kubeClient.CoreV1().Services(ns).Delete(ctx, "durable-svc", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.StartGridview(ctx); err != nil {
		t.Fatalf("start gridview-apiserver: %v", err)
	}
	localcluster.Eventually(t, 20*time.Second, "Service recreated after the restart", serviceMatches(ns, "durable-svc", func(*corev1.Service) error { return nil }))
	localcluster.Eventually(t, 20*time.Second, "the restarted replica leading", replicaLeads(0))
}

func TestBadStartupEndsWithOneErrorLine(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedEtcd := "http://" + l.Addr().String()
	l.Close()

	tests := []struct {
		name     string
		args     []string
		wantLast string
	}{
		{name: "unknown flag", args: []string{"--etcd-server", "x"}, wantLast: "gridview-apiserver: unknown flag: --etcd-server (see gridview-apiserver --help)"},
		{name: "unusable data dir", args: []string{"--data-dir", notADir}, wantLast: "gridview-apiserver: --data-dir " + notADir + " cannot be created: mkdir " + notADir + ": not a directory"},
		{name: "unreachable etcd", args: []string{"--etcd-servers", closedEtcd, "--kubeconfig", cluster.AdminKubeconfig},
			wantLast: "gridview-apiserver: cannot reach etcd at [" + closedEtcd + "] within 20s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, filepath.Join(binDir, "gridview-apiserver"), tc.args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1\n%s", err, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, tc.wantLast) {
				t.Errorf("last line %q, want it to start with %q", last, tc.wantLast)
			}
			if strings.Contains(stderr.String(), "goroutine ") || strings.Contains(stderr.String(), "panic") {
				t.Errorf("stack trace on bad input:\n%s", stderr.String())
			}
		})
	}
}
