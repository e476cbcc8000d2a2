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

package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gridview/gridview/test/localcluster"
)

// TestScale is `make scale` (SCALE=edge-10k) and, with SCALE=edge-1k and
// GRIDVIEW_SCALE_STRICT=1, part of `make test-all`. Without SCALE it is skipped,
// so that `go test ./...` does not start a control plane.
func TestScale(t *testing.T) {
	ctx, cfg, h, logDir := startHarness(t, "scale-logs")
	runErr := h.Run(ctx)
	h.Stop()
	// The table either way: a harness error still leaves what was measured.
	fmt.Printf("\n%s\n%s\n\n", h.R.Text(), h.R.Markdown())
	if runErr != nil {
		t.Fatalf("the scale harness failed (logs in %s): %v", logDir, runErr)
	}
	for _, f := range h.R.Failures {
		if cfg.Strict {
			t.Errorf("correctness: %s", f)
		} else {
			t.Logf("correctness: %s", f)
		}
	}
}

// TestScaleBaseline is `make scale-baseline`: the same ingest read by as
// many watchers of every EndpointSlice, as vanilla kube-proxy reads them,
// without gridview. `make test-all` runs it at edge-1k.
func TestScaleBaseline(t *testing.T) {
	if cfg, ok, _ := ConfigFromEnv(); ok && cfg.Workloads {
		t.Skipf("the baseline counts the EndpointSlices the harness writes itself: run it with SCALE_ENDPOINTS=%s", EndpointsSlices)
	}
	ctx, _, h, logDir := startHarness(t, "scale-baseline-logs")
	b, err := h.RunBaseline(ctx)
	if err != nil {
		t.Fatalf("the baseline failed (logs in %s): %v", logDir, err)
	}
	fmt.Printf("\n%s\n", b.Markdown())
	if b.Stale > 0 {
		t.Errorf("%d watchers did not receive every EndpointSlice within SCALE_CURRENT_TIMEOUT", b.Stale)
	}
}

// startHarness starts a local control plane and the harness for SCALE, or
// skips without it; the processes' logs go to _output/<logs>, emptied first.
func startHarness(t *testing.T, logs string) (context.Context, Config, *Harness, string) {
	t.Helper()
	cfg, ok, err := ConfigFromEnv()
	if !ok {
		t.Skip("the scale harness runs with SCALE=edge-1k or SCALE=edge-10k: `make scale` or `make test-scale`")
	}
	if err != nil {
		t.Fatal(err)
	}
	root, err := localcluster.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	binDir := os.Getenv("GRIDVIEW_BIN_DIR")
	if binDir == "" {
		binDir = filepath.Join(root, "_output", "bin")
	}
	if err := localcluster.Preflight(binDir, cfg.Kubelets); err != nil {
		t.Fatalf("the scale harness needs a local control plane; run it as root with `make scale` (or `make tools build` first): %v", err)
	}
	logDir := filepath.Join(root, "_output", logs)
	if err := os.RemoveAll(logDir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	t.Cleanup(cancel)
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s scale: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	startCtx, startCancel := context.WithTimeout(ctx, 5*time.Minute)
	cluster, err := localcluster.Start(startCtx, localcluster.Options{BinDir: binDir, LogDir: logDir, Logf: logf,
		// The product's default: the scale figures include its cost.
		RoutingMetricsInterval: 30 * time.Second, GridviewArgs: cfg.GridviewArgs,
		// Replicas share their ServiceGrids in one etcd, as in a cluster.
		ExternalGridviewEtcd: cfg.Replicas > 1, Workloads: cfg.Kubelets})
	if err != nil {
		startCancel()
		t.Fatalf("starting the local control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the local control plane: %v", err)
		}
	})
	for range cfg.Replicas - 1 {
		if _, err := cluster.AddGridviewReplica(startCtx); err != nil {
			startCancel()
			t.Fatalf("starting another gridview-apiserver replica: %v", err)
		}
	}
	startCancel()
	h, err := NewHarness(cfg, cluster, logf)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, cfg, h, logDir
}
