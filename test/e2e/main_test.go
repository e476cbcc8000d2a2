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

// Package e2e tests gridview-apiserver through kube-apiserver's aggregation
// layer on a real local control plane: etcd, kube-apiserver and
// gridview-apiserver built from source, no fakes.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// The control plane every test of this package shares; each test works in a
// namespace of its own.
var (
	binDir     string
	cluster    *localcluster.Cluster
	gridview   versioned.Interface
	kubeClient kubernetes.Interface
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := localcluster.FindRepoRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	binDir = os.Getenv("GRIDVIEW_BIN_DIR")
	if binDir == "" {
		binDir = filepath.Join(root, "_output", "bin")
	}
	// Logs outlive the run, for a look after a failure.
	logDir := filepath.Join(root, "_output", "e2e-logs")
	if err := os.RemoveAll(logDir); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	if err := localcluster.Preflight(binDir, true); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot run the end-to-end suite: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cluster, err = localcluster.Start(ctx, localcluster.Options{BinDir: binDir, LogDir: logDir, Workloads: true, Logf: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
	}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the local control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: stopping the local control plane: %v\n", err)
		}
	}()
	// Tests poll; client-side throttling would only slow them down.
	clientConfig := rest.CopyConfig(cluster.AdminConfig)
	clientConfig.QPS, clientConfig.Burst = 200, 400
	if gridview, err = versioned.NewForConfig(clientConfig); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	if kubeClient, err = kubernetes.NewForConfig(clientConfig); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	return m.Run()
}

// testNamespace creates a namespace for one test and deletes it afterwards.
func testNamespace(t *testing.T) string {
	t.Helper()
	return framework.Namespace(t, kubeClient, "e2e-")
}

// kubectl runs kubectl against the local cluster and returns its output.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.AdminKubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustKubectl runs kubectl and fails the test when it fails.
func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := kubectl(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
