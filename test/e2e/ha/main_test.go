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

// Package ha tests gridview under faults that must not disturb the shared
// control plane of package e2e: kube-apiserver restarted, gridview-apiserver's
// etcd stopped, a replica killed. Its control plane of its own runs two
// gridview-apiserver replicas, each in a network namespace of its own, on one
// external etcd (not kube-apiserver's), both endpoints of the Service behind
// the one APIService, as a Deployment of two replicas would be. The replicas
// exchange nothing: the one elected in that etcd writes gridview's input log
// there, and each derives its views from the log and serves every read
// itself.
package ha

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/test/localcluster"
)

var (
	cluster    *localcluster.Cluster
	gridview   versioned.Interface // through the aggregator
	kubeClient kubernetes.Interface
	// replicas are the two gridview-apiserver processes, the cluster's own
	// first.
	replicas []*localcluster.GridviewReplica
	// binDir holds the binaries make build and make tools built.
	binDir string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := localcluster.FindRepoRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ha: %v\n", err)
		return 1
	}
	binDir = os.Getenv("GRIDVIEW_BIN_DIR")
	if binDir == "" {
		binDir = filepath.Join(root, "_output", "bin")
	}
	// Apart from package e2e's logs, which that package removes when it
	// starts: both packages may run at once.
	logDir := filepath.Join(root, "_output", "e2e-ha-logs")
	if err := os.RemoveAll(logDir); err != nil {
		fmt.Fprintf(os.Stderr, "ha: %v\n", err)
		return 1
	}
	if err := localcluster.Preflight(binDir, false); err != nil {
		fmt.Fprintf(os.Stderr, "ha: cannot run the end-to-end suite: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "ha: "+format+"\n", args...) }
	cluster, err = localcluster.Start(ctx, localcluster.Options{
		BinDir: binDir, LogDir: logDir, Logf: logf, ExternalGridviewEtcd: true,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ha: starting the local control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "ha: stopping the local control plane: %v\n", err)
		}
	}()
	if _, err := cluster.AddGridviewReplica(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ha: starting a second gridview-apiserver: %v\n", err)
		return 1
	}
	replicas = cluster.GridviewReplicas()
	clientConfig := rest.CopyConfig(cluster.AdminConfig)
	clientConfig.QPS, clientConfig.Burst = 200, 400
	if gridview, err = versioned.NewForConfig(clientConfig); err != nil {
		fmt.Fprintf(os.Stderr, "ha: %v\n", err)
		return 1
	}
	if kubeClient, err = kubernetes.NewForConfig(clientConfig); err != nil {
		fmt.Fprintf(os.Stderr, "ha: %v\n", err)
		return 1
	}
	return m.Run()
}
