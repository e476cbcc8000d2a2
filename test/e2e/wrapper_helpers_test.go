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
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wrapperpkg "github.com/gridview/gridview/pkg/wrapper"
	"github.com/gridview/gridview/test/localcluster"
)

// wrapperListen is where gridview-wrapper serves kube-proxy inside a node's
// namespace: loopback, as in production.
const wrapperListen = "127.0.0.1:51006"

// applyWrapperRBAC installs what the wrapper's deploy manifests grant nodes,
// so that the tests run with exactly that.
func applyWrapperRBAC(t *testing.T) {
	t.Helper()
	if err := cluster.ApplyWrapperRBAC(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// wrapper is a gridview-wrapper running in a node's namespace.
type wrapper struct {
	t        *testing.T
	n        *localcluster.NodeNetns
	args     []string
	proc     *localcluster.Process
	cacheDir string
}

// startWrapper runs gridview-wrapper for the node of n with the node's own
// identity, a client certificate as kubelet's (CN=system:node:<node>,
// O=system:nodes), and the deploy manifests' RBAC, as the DaemonSet runs it;
// it waits until the wrapper is ready.
func startWrapper(t *testing.T, n *localcluster.NodeNetns) *wrapper {
	t.Helper()
	applyWrapperRBAC(t)
	kubeconfig := filepath.Join(t.TempDir(), "node.kubeconfig")
	if err := cluster.WriteClientCertKubeconfig(kubeconfig, "system:node:"+n.NodeName, "system:nodes"); err != nil {
		t.Fatal(err)
	}
	return startWrapperWith(t, n, kubeconfig)
}

func startWrapperWith(t *testing.T, n *localcluster.NodeNetns, kubeconfig string) *wrapper {
	t.Helper()
	w := &wrapper{t: t, n: n, cacheDir: t.TempDir()}
	w.args = []string{filepath.Join(binDir, "gridview-wrapper"),
		"--kubeconfig", kubeconfig,
		"--node-name", n.NodeName, "--listen", wrapperListen, "--cache-dir", w.cacheDir}
	w.start()
	// Before t.TempDir removes the cache directory under it.
	t.Cleanup(func() { _ = w.proc.Stop() })
	return w
}

func (w *wrapper) start() {
	w.t.Helper()
	w.launch()
	w.waitAnswering("ready", "/readyz", http.StatusOK)
}

func (w *wrapper) launch() {
	w.t.Helper()
	proc, err := w.n.Start("gridview-wrapper", w.args...)
	if err != nil {
		w.t.Fatal(err)
	}
	w.proc = proc
}

// waitAnswering waits until the wrapper answers path with code.
func (w *wrapper) waitAnswering(what, path string, code int) {
	w.t.Helper()
	localcluster.Eventually(w.t, 20*time.Second, "gridview-wrapper "+what+" on "+w.n.NodeName, func(ctx context.Context) error {
		if err := w.proc.Exited(); err != nil {
			return fmt.Errorf("%w (log: %s)", err, w.proc.LogFile)
		}
		got, body, err := w.request(ctx, http.MethodGet, path, nil)
		if err == nil && got != code {
			err = fmt.Errorf("%s: %d %s", path, got, body)
		}
		return err
	})
}

// restart stops the wrapper and starts it again with the same cache.
func (w *wrapper) restart() {
	w.t.Helper()
	if err := w.proc.Stop(); err != nil {
		w.t.Fatalf("stopping gridview-wrapper: %v", err)
	}
	w.start()
}

// restartWithoutCache stops the wrapper and starts it again with its cache
// gone, as after a wiped disk or a cache that fails its checksum. It waits
// until the wrapper answers, not until it is ready: with the cluster out of
// reach it has nothing to be ready with.
func (w *wrapper) restartWithoutCache() {
	w.t.Helper()
	if err := w.proc.Stop(); err != nil {
		w.t.Fatalf("stopping gridview-wrapper: %v", err)
	}
	if err := os.Remove(filepath.Join(w.cacheDir, "state.cache")); err != nil {
		w.t.Fatalf("removing the wrapper's cache: %v", err)
	}
	w.launch()
	w.waitAnswering("unready", "/readyz", http.StatusServiceUnavailable)
}

// request sends a request to the wrapper from inside its namespace, as
// kube-proxy would, with its bearer token (a header "Authorization: ..."
// replaces it, "Authorization:" sends none), and returns the status code and
// the body.
func (w *wrapper) request(ctx context.Context, method, path string, body []byte, headers ...string) (int, string, error) {
	argv := []string{"curl", "--silent", "--show-error", "--max-time", "5", "--request", method, "--write-out", "\n%{http_code}",
		"--cacert", wrapperpkg.ServingCertFile(w.credentialsDir())}
	if !slices.ContainsFunc(headers, func(h string) bool { return strings.HasPrefix(h, "Authorization:") }) {
		token, err := os.ReadFile(wrapperpkg.ClientTokenFile(w.credentialsDir()))
		if err != nil {
			return 0, "", err
		}
		headers = append(headers, "Authorization: Bearer "+strings.TrimSpace(string(token)))
	}
	for _, header := range headers {
		argv = append(argv, "--header", header)
	}
	if body != nil {
		in := filepath.Join(w.t.TempDir(), "body")
		if err := os.WriteFile(in, body, 0o600); err != nil {
			return 0, "", err
		}
		argv = append(argv, "--data-binary", "@"+in)
	}
	out, err := w.n.Run(ctx, append(argv, "https://"+wrapperListen+path)...)
	if err != nil {
		return 0, "", err
	}
	// The status code follows the body on a line of its own.
	i := strings.LastIndexByte(out, '\n')
	status, err := strconv.Atoi(out[i+1:])
	return status, out[:max(i, 0)], err
}

// get reads a path of the wrapper from inside its namespace, as kube-proxy
// would; an answer but 200 is an error.
func (w *wrapper) get(ctx context.Context, path string) (string, error) {
	code, body, err := w.request(ctx, http.MethodGet, path, nil)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %.300s", path, code, body)
	}
	return body, err
}

// metric reads one unlabelled metric of the wrapper.
func (w *wrapper) metric(name string) float64 {
	w.t.Helper()
	body, err := w.get(context.Background(), "/metrics")
	if err != nil {
		w.t.Fatalf("reading the wrapper's metrics: %v", err)
	}
	value, err := localcluster.MetricSample(body, name)
	if err != nil {
		w.t.Fatalf("the wrapper's metrics: %v", err)
	}
	return value
}

// credentialsDir holds the token the wrapper accepts from kube-proxy and the
// certificate it serves, at their default place under the cache directory.
func (w *wrapper) credentialsDir() string { return wrapperpkg.ClientCredentialsDir(w.cacheDir) }

// kubeconfig is what kube-proxy reads to reach the wrapper, as the deploy
// manifests' ConfigMap has it.
func (w *wrapper) kubeconfig() string {
	w.t.Helper()
	path := filepath.Join(w.t.TempDir(), "kube-proxy-via-gridview.kubeconfig")
	if err := localcluster.WriteWrapperKubeconfig(path, wrapperListen, w.credentialsDir()); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// waitCached waits until the wrapper has saved its state.
func (w *wrapper) waitCached() {
	w.t.Helper()
	localcluster.Eventually(w.t, 10*time.Second, "the wrapper's cache", func(context.Context) error {
		_, err := os.Stat(filepath.Join(w.cacheDir, "state.cache"))
		return err
	})
}

// cutOff takes the node's link to the cluster down, as a WAN outage would:
// nothing passes either way (dropping the route alone would still let the
// cluster's packets in). reconnect brings it back.
func cutOff(t *testing.T, n *localcluster.NodeNetns) {
	t.Helper()
	inNetns(t, n, "ip", "link", "set", "dev", uplink(t, n), "down")
}

func reconnect(t *testing.T, n *localcluster.NodeNetns) {
	t.Helper()
	inNetns(t, n, "ip", "link", "set", "dev", uplink(t, n), "up")
	inNetns(t, n, "ip", "route", "replace", "default", "via", n.HostIP.String())
}

// uplink is the namespace's one interface besides loopback.
func uplink(t *testing.T, n *localcluster.NodeNetns) string {
	t.Helper()
	out := inNetns(t, n, "ip", "-o", "link", "show")
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) > 1 && fields[1] != "lo:" {
			name, _, _ := strings.Cut(strings.TrimSuffix(fields[1], ":"), "@")
			return name
		}
	}
	t.Fatalf("no uplink in %s:\n%s", n.Netns, out)
	return ""
}

func inNetns(t *testing.T, n *localcluster.NodeNetns, argv ...string) string {
	t.Helper()
	out, err := n.Run(context.Background(), argv...)
	if err != nil {
		t.Fatalf("%s in %s: %v: %s", strings.Join(argv, " "), n.Netns, err, out)
	}
	return out
}
