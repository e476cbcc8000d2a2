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

// Package localcluster runs a real, throwaway Kubernetes control plane on this
// machine — etcd, kube-apiserver with the aggregation layer, and
// gridview-apiserver registered as the APIService
// v1alpha1.topology.gridview.io — for end-to-end tests and `make run`.
//
// The aggregator refuses loopback endpoints, so gridview-apiserver runs in a
// network namespace of the run's own, joined to the host by a veth pair (see
// docs/development.md). Creating it needs root.
package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// binDirEnv overrides the default BinDir, as in hack/build-tools.sh.
const binDirEnv = "GRIDVIEW_BIN_DIR"

// modulePath identifies the repository's own go.mod; hack/tools has another.
const modulePath = "github.com/gridview/gridview"

// Options configures Start. The zero value is usable.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-proxy and gridview-wrapper;
	// gridview-apiserver comes from its image, which `make images` writes to
	// $GRIDVIEW_IMAGES_DIR, else <RepoRoot>/_output/images.
	// Default: $GRIDVIEW_BIN_DIR (as set by `make test-e2e`), else
	// <repo>/_output/bin.
	BinDir string
	// RepoRoot is where artifacts/deploy is read from. Default: the nearest
	// directory above the working directory whose go.mod is this module.
	RepoRoot string
	// WorkDir holds certificates, kubeconfigs and data directories.
	// Default: a fresh temporary directory. Stop removes it, given or not,
	// unless KeepWorkDir is set.
	WorkDir     string
	KeepWorkDir bool
	// LogDir receives one <process>.log per process. Default: WorkDir/logs.
	LogDir string
	// Logf reports progress. Default: klog.
	Logf func(format string, args ...any)
	// ExternalGridviewEtcd runs gridview-apiserver with --etcd-servers on an
	// etcd of its own, apart from kube-apiserver's, as HA replicas need
	// (AddGridviewReplica) and so that a test can stop it while
	// kube-apiserver keeps running (StopGridviewEtcd). Default: the embedded
	// etcd in the run's data directory.
	ExternalGridviewEtcd bool
	// RoutingMetricsInterval is gridview-apiserver's
	// --routing-metrics-interval. Default: 2s, so that the demo and the
	// tests see routing metrics and NoEndpointsForNodes Events within
	// seconds of a change; the scale harness sets the product's default.
	RoutingMetricsInterval time.Duration
	// Workloads runs kube-controller-manager, kube-scheduler and kwok
	// (simulated kubelets for every Node) beside kube-apiserver, so that
	// Deployments get Pods on the Nodes and Services with selectors their
	// EndpointSlices, as in any cluster.
	Workloads bool
	// GridviewArgs are more flags for every gridview-apiserver replica, after
	// the harness's own: make scale passes SCALE_GRIDVIEW_ARGS, so that a
	// flag's effect at scale can be measured without a rebuild.
	GridviewArgs []string
}

// setDefaults fills in everything but the directories, which
// createDirs makes once Preflight has passed.
func (o *Options) setDefaults() error {
	if o.RoutingMetricsInterval == 0 {
		o.RoutingMetricsInterval = 2 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(format string, args ...any) { klog.InfoSDepth(1, fmt.Sprintf(format, args...)) }
	}
	if o.RepoRoot == "" {
		root, err := FindRepoRoot()
		if err != nil {
			return err
		}
		o.RepoRoot = root
	}
	if o.BinDir == "" {
		o.BinDir = os.Getenv(binDirEnv)
	}
	if o.BinDir == "" {
		o.BinDir = filepath.Join(o.RepoRoot, "_output", "bin")
	}
	return nil
}

func (o *Options) createDirs() error {
	if o.WorkDir == "" {
		removeStaleTempDirs(o.Logf)
		dir, err := os.MkdirTemp("", tempDirPrefix+strconv.Itoa(os.Getpid())+"-")
		if err != nil {
			return fmt.Errorf("creating work directory: %w", err)
		}
		o.WorkDir = dir
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.WorkDir, "logs")
	}
	for _, dir := range []string{o.WorkDir, o.LogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	return nil
}

// tempDirPrefix starts default work directories, followed by the owner's
// pid so that later runs can remove those of runs killed before Stop.
const tempDirPrefix = "gridview-localcluster-"

func removeStaleTempDirs(logf func(string, ...any)) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempDirPrefix+"*"))
	for _, dir := range dirs {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(dir), tempDirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		logf("removing work directory %s left by dead process %d", dir, pid)
		_ = os.RemoveAll(dir)
	}
}

// FindRepoRoot walks up from the working directory to the directory whose
// go.mod declares module github.com/gridview/gridview.
func FindRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding repository root: %w", err)
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func isModuleRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if fields := strings.Fields(scanner.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == modulePath
		}
	}
	return false
}

// kwokStages is kwok's configuration, which `make tools` writes beside it
// (hack/tools/kwok/stages).
const kwokStages = "kwok-stages.yaml"

// Preflight reports, in one error, everything missing to run a local cluster
// from binDir, with Options.Workloads when workloads is set, with the
// command that fixes each problem.
func Preflight(binDir string, workloads bool) error {
	var problems []error
	tools := []string{"etcd", "kube-apiserver", "kube-proxy"}
	if workloads {
		tools = append(tools, "kube-controller-manager", "kube-scheduler", "kwok")
		if !isRegular(filepath.Join(binDir, kwokStages)) {
			problems = append(problems, fmt.Errorf("%s not found in %s: run `make tools`", kwokStages, binDir))
		}
	}
	for _, tool := range tools {
		if !isExecutable(filepath.Join(binDir, tool)) {
			problems = append(problems, fmt.Errorf("%s not found in %s: run `make tools`", tool, binDir))
		}
	}
	if root, err := FindRepoRoot(); err != nil {
		problems = append(problems, err)
	} else if image := gridviewImageLayout(root); !isRegular(filepath.Join(image, "index.json")) {
		problems = append(problems, fmt.Errorf("gridview-apiserver's image not found in %s: run `make images`", image))
	}
	if os.Geteuid() != 0 {
		problems = append(problems, errors.New("network namespaces need root: run as root"))
	}
	if _, err := exec.LookPath("ip"); err != nil {
		problems = append(problems, errors.New("the `ip` command is missing: apt-get install iproute2"))
	}
	if err := errors.Join(problems...); err != nil {
		return fmt.Errorf("local cluster preflight failed:\n%w", err)
	}
	return nil
}

func isRegular(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}
