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
	"runtime/pprof"
	"strconv"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// profileWindow is the length of each CPU profile taken through the ingest,
// in seconds: a profile covers only whole windows, so the last one, cut off
// once views are current, is lost.
const profileWindow = 30

// profileIngest takes CPU profiles of gridview-apiserver and kube-apiserver
// one window after the other until stop is called, when Config.ProfileDir
// asks for them. Profiles are the servers' own /debug/pprof.
func (h *Harness) profileIngest(ctx context.Context) (stop func()) {
	if h.cfg.ProfileDir == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for name, cfg := range map[string]*rest.Config{"gridview-apiserver": h.gridview.Config(), "kube-apiserver": h.cluster.AdminConfig} {
		wg.Go(func() {
			for window := 0; ctx.Err() == nil; window++ {
				file := fmt.Sprintf("ingest-cpu-%s-%02d.pb.gz", name, window)
				if err := h.saveProfile(ctx, cfg, "/debug/pprof/profile", profileWindow, file); err != nil && ctx.Err() == nil {
					h.logf("profile %s: %v", file, err)
					return
				}
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// changesProfileSeconds is the length of the CPU profiles of the servers
// taken through each kind of change: longer than their repeats take.
const changesProfileSeconds = 15

// profileChanges takes CPU profiles through the changes of one kind, the
// n-th, when Config.ProfileDir asks for them: gridview-apiserver's as
// changes-cpu-<n>.pb.gz, kube-apiserver's (the aggregator's proxy) and the
// harness's own (the watchers), so that a delivery's time can be placed in
// the process that spent it. stop waits for them.
func (h *Harness) profileChanges(ctx context.Context, n int) (stop func()) {
	if h.cfg.ProfileDir == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	for file, cfg := range map[string]*rest.Config{
		fmt.Sprintf("changes-cpu-%d.pb.gz", n):                h.gridview.Config(),
		fmt.Sprintf("changes-cpu-kube-apiserver-%d.pb.gz", n): h.cluster.AdminConfig,
	} {
		wg.Go(func() {
			if err := h.saveProfile(ctx, cfg, "/debug/pprof/profile", changesProfileSeconds, file); err != nil {
				h.logf("profile %s: %v", file, err)
			}
		})
	}
	stopOwn, err := h.profileSelf(fmt.Sprintf("changes-cpu-harness-%d.pb.gz", n))
	if err != nil {
		h.logf("profile of the harness: %v", err)
	}
	// The harness's profile ends with the servers', so that the three
	// cover the same window.
	return func() {
		wg.Wait()
		stopOwn()
	}
}

// profileSelf takes a CPU profile of the harness's process into file until
// stop is called.
func (h *Harness) profileSelf(file string) (stop func(), err error) {
	if err := os.MkdirAll(h.cfg.ProfileDir, 0o755); err != nil {
		return func() {}, err
	}
	out, err := os.Create(filepath.Join(h.cfg.ProfileDir, file))
	if err != nil {
		return func() {}, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		os.Remove(out.Name())
		return func() {}, err
	}
	return func() {
		pprof.StopCPUProfile()
		if err := out.Close(); err != nil {
			h.logf("profile %s: %v", file, err)
		}
	}, nil
}

// saveHeapProfile saves gridview-apiserver's heap profile as heap-<when>.pb.gz,
// when Config.ProfileDir asks for it.
func (h *Harness) saveHeapProfile(ctx context.Context, when string) {
	if h.cfg.ProfileDir == "" {
		return
	}
	file := "heap-" + when + ".pb.gz"
	if err := h.saveProfile(ctx, h.gridview.Config(), "/debug/pprof/heap", 0, file); err != nil {
		h.logf("profile %s: %v", file, err)
	}
}

// saveProfile saves a profile of path: for seconds when it is a CPU profile.
func (h *Harness) saveProfile(ctx context.Context, cfg *rest.Config, path string, seconds int, file string) error {
	params := map[string]string{}
	if seconds > 0 {
		params["seconds"] = strconv.Itoa(seconds)
	}
	data, err := getPath(ctx, cfg, path, params)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(h.cfg.ProfileDir, 0o755); err != nil {
		return err
	}
	out := filepath.Join(h.cfg.ProfileDir, file)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return err
	}
	h.logf("profile saved: %s", out)
	return nil
}

// getPath reads a path of a server's (its /metrics, its /debug/pprof) with
// the credentials of cfg.
func getPath(ctx context.Context, cfg *rest.Config, path string, params map[string]string) ([]byte, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	req := client.Discovery().RESTClient().Get().AbsPath(path)
	for name, value := range params {
		req = req.Param(name, value)
	}
	data, err := req.DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return data, nil
}
