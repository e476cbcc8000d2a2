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

// Command local-up runs gridview on a real local control plane for `make
// run`: etcd, kube-apiserver and gridview-apiserver (see test/localcluster),
// applies artifacts/examples, prints what to try, and tears everything down
// on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/wrapper"
	"github.com/gridview/gridview/test/localcluster"
)

const (
	// fieldManager owns the example objects, so re-applying them is harmless.
	fieldManager = "gridview-local-up"
	// The demo's wrapper serves what kube-proxy on edge-1 would read.
	demoNode      = "edge-1"
	demoNamespace = "demo"
	wrapperListen = "127.0.0.1:51006"
)

func main() {
	klog.InitFlags(nil)
	binDir := flag.String("bin-dir", "", "directory holding etcd, kube-apiserver and gridview-apiserver (default $GRIDVIEW_BIN_DIR, else <repo>/_output/bin)")
	outputDir := flag.String("output-dir", "", "directory for the kubeconfig, logs and working files (default <repo>/_output/local)")
	flag.Parse()

	if err := run(*binDir, *outputDir); err != nil {
		fmt.Fprintf(os.Stderr, "local-up: %v\n", err)
		os.Exit(1)
	}
}

func run(binDir, outputDir string) error {
	root, err := localcluster.FindRepoRoot()
	if err != nil {
		return err
	}
	if outputDir == "" {
		outputDir = filepath.Join(root, "_output", "local")
	}
	workDir := filepath.Join(outputDir, "work")
	logDir := filepath.Join(outputDir, "logs")
	// Leftovers of an earlier run (killed or not) would mix old etcd data
	// and logs into this one.
	for _, dir := range []string{workDir, logDir} {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("cleaning %s: %w", dir, err)
		}
	}

	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	cluster, err := localcluster.Start(ctx, localcluster.Options{
		BinDir:   binDir,
		RepoRoot: root,
		WorkDir:  workDir,
		LogDir:   logDir,
		// Deployments, Services with selectors and namespaces behave as
		// in any cluster.
		Workloads: true,
	})
	if err != nil {
		return fmt.Errorf("starting the local cluster: %w", err)
	}
	if err := setUp(ctx, cluster, root, outputDir); err != nil {
		return errors.Join(err, stop(cluster))
	}

	<-ctx.Done()
	klog.InfoS("Signal received, stopping")
	return stop(cluster)
}

// setUp publishes the kubeconfig, applies the examples and prints what to try.
func setUp(ctx context.Context, cluster *localcluster.Cluster, root, outputDir string) error {
	kubeconfig := filepath.Join(outputDir, "kubeconfig")
	data, err := os.ReadFile(cluster.AdminKubeconfig)
	if err != nil {
		return fmt.Errorf("reading admin kubeconfig: %w", err)
	}
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", kubeconfig, err)
	}

	examples, err := filepath.Glob(filepath.Join(root, "artifacts", "examples", "*.yaml"))
	if err != nil {
		return fmt.Errorf("listing examples: %w", err)
	}
	slices.Sort(examples)
	for _, example := range examples {
		if err := localcluster.ApplyFile(ctx, cluster.AdminConfig, example, fieldManager); err != nil {
			return fmt.Errorf("applying example %s failed (is gridview-apiserver serving this kind? see %s): %w",
				displayPath(example), filepath.Join(displayPath(cluster.LogDir), "gridview-apiserver.log"), err)
		}
		klog.InfoS("Applied example", "file", displayPath(example))
	}

	// The demo's Pods scheduled, run and written into their Services'
	// EndpointSlices by kube-controller-manager.
	client, err := kubernetes.NewForConfig(cluster.AdminConfig)
	if err != nil {
		return err
	}
	var notReady error
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		notReady = localcluster.CheckWorkloads(ctx, client, demoNamespace)
		return notReady == nil, nil
	}); err != nil {
		return fmt.Errorf("the demo's workloads: %w (%w; logs in %s)", err, notReady, displayPath(cluster.LogDir))
	}
	klog.InfoS("The demo's Pods are Ready and in their Services' EndpointSlices", "namespace", demoNamespace)

	wrapperCache := filepath.Join(outputDir, "wrapper-cache")
	if _, err := cluster.StartWrapper(ctx, demoNode, wrapperListen, wrapperCache); err != nil {
		return err
	}
	klog.InfoS("Started gridview-wrapper", "node", demoNode, "listen", wrapperListen)
	credentials := wrapper.ClientCredentialsDir(wrapperCache)
	wrapperKubeconfig := filepath.Join(outputDir, "kube-proxy-via-gridview.kubeconfig")
	if err := localcluster.WriteWrapperKubeconfig(wrapperKubeconfig, wrapperListen, credentials); err != nil {
		return fmt.Errorf("writing %s: %w", wrapperKubeconfig, err)
	}

	printInstructions(displayPath(kubeconfig), displayPath(cluster.LogDir), displayPath(wrapperKubeconfig),
		displayPath(wrapper.ServingCertFile(credentials)))
	return nil
}

func printInstructions(kubeconfig, logDir, wrapperKubeconfig, wrapperCert string) {
	fmt.Println()
	fmt.Println("Try:")
	for _, command := range []string{
		"kubectl api-resources --api-group=topology.gridview.io",
		"kubectl get servicegrids -A",
		"kubectl get sg -n demo echo -o yaml",
		"kubectl explain servicegrid.spec.gridUniqKey",
		"kubectl get nodes -L superedge.io/nodeunit",
		"kubectl get nodeendpoints -n demo",
		"kubectl get nep -A --field-selector nodeName=edge-1",
		"kubectl get nep -A --field-selector nodeName=edge-3",
		"kubectl get pods -n demo -o wide",
		"kubectl get endpointslices -n demo",
		"kubectl get nep -n demo --field-selector nodeName=edge-1,serviceName=echo-svc -o yaml",
		"kubectl get nep -n demo -w --field-selector nodeName=edge-1   # and in another shell:",
		"kubectl label node edge-1 superedge.io/nodeunit=unit-b --overwrite",
	} {
		fmt.Printf("  KUBECONFIG=%s %s%s\n", kubeconfig, binPath(), command)
	}
	fmt.Println()
	fmt.Printf("gridview-wrapper serves what kube-proxy on %s reads, at https://%s, to kube-proxy's kubeconfig (its token and the wrapper's certificate):\n", demoNode, wrapperListen)
	for _, command := range []string{
		"get endpointslices -A",
		"get endpoints -n demo",
		"get endpointslices -n demo -w",
	} {
		fmt.Printf("  %skubectl --kubeconfig %s %s\n", binPath(), wrapperKubeconfig, command)
	}
	fmt.Printf("  curl -s --cacert %s https://%s/metrics | grep ^gridview_wrapper\n", wrapperCert, wrapperListen)
	fmt.Println()
	fmt.Println("kubectl gridview explains and maps where the demo's nodes route:")
	for _, command := range []string{
		"explain edge-1 ordered -n demo",
		"explain edge-3 ordered -n demo   # unit-b runs no endpoint of ordered: falls back to \"*\"",
		"explain edge-5 echo-svc -n demo   # unit-c runs none of echo-svc: routes nowhere",
		"explain edge-5 echo-svc -n demo --label superedge.io/nodeunit=unit-a   # what if edge-5 joined unit-a",
		"explain edge-3 echo-svc -n demo --unready edge-3,edge-4   # what if unit-b went down",
		"routes echo-svc -n demo -o wide",
		"routes ordered -n demo",
		"map ordered -n demo -o svg > ordered.svg",
		"map echo-svc -n demo -o html --output-file echo-svc.html",
	} {
		fmt.Printf("  KUBECONFIG=%s %skubectl gridview %s\n", kubeconfig, binPath(), command)
	}
	fmt.Println()
	fmt.Printf("Logs: %s/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler,kwok,gridview-apiserver,gridview-wrapper}.log\n", logDir)
	fmt.Println()
	fmt.Println("gridview is ready; press Ctrl-C to stop and clean up.")
}

// binPath is PATH=<dir>:$PATH for the directory of local-up, where make
// builds kubectl and kubectl-gridview too, so that the printed commands run
// them; empty when they are not there (go run), for those installed on
// PATH. The directory is absolute: kubectl does not run a plugin found
// through a relative one.
func binPath() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	dir := filepath.Dir(exe)
	for _, command := range []string{"kubectl", "kubectl-gridview"} {
		if _, err := os.Stat(filepath.Join(dir, command)); err != nil {
			return ""
		}
	}
	return "PATH=" + dir + ":$PATH "
}

func stop(cluster *localcluster.Cluster) error {
	if err := cluster.Stop(); err != nil {
		return err
	}
	fmt.Println("gridview stopped, cleaned up")
	return nil
}

// displayPath shortens paths below the working directory, so the printed
// commands read like `KUBECONFIG=_output/local/kubeconfig kubectl ...`.
func displayPath(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}
