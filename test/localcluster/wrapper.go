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

package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/pkg/wrapper"
)

// ApplyWrapperRBAC applies gridview-wrapper's RBAC
// (artifacts/deploy/wrapper/rbac.yaml), which grants every node
// (system:nodes) its views: a client that reads as a node needs it, and
// each one proves the manifest sufficient.
func (c *Cluster) ApplyWrapperRBAC(ctx context.Context) error {
	if err := c.applier.applyFile(ctx, filepath.Join(c.opts.RepoRoot, "artifacts", "deploy", "wrapper", "rbac.yaml")); err != nil {
		return fmt.Errorf("applying gridview-wrapper's RBAC: %w", err)
	}
	return nil
}

// StartWrapper runs gridview-wrapper on the host for node, serving on listen
// (such as 127.0.0.1:51006) and reading the cluster as its admin, with
// flags added, and waits until it is ready. Stop stops it, and another may
// start then. Tests that need kube-proxy run the wrapper in a node's
// namespace instead (NodeNetns.Start).
func (c *Cluster) StartWrapper(ctx context.Context, node, listen, cacheDir string, flags ...string) (*Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, errors.New("starting gridview-wrapper: the cluster is stopping")
	}
	if c.wrapper != nil && c.wrapper.Exited() == nil {
		return nil, errors.New("gridview-wrapper already runs on the host")
	}
	argv := []string{filepath.Join(c.opts.BinDir, "gridview-wrapper"),
		"--kubeconfig", c.AdminKubeconfig, "--node-name", node, "--listen", listen, "--cache-dir", cacheDir}
	proc, err := startProcess("gridview-wrapper", c.opts.LogDir, append(argv, flags...))
	if err != nil {
		return nil, err
	}
	c.wrapper = proc
	readyz := "https://" + listen + "/readyz"
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := proc.Exited(); err != nil {
			return false, err
		}
		// Its certificate is written before it listens.
		client, err := WrapperClient(wrapper.ClientCredentialsDir(cacheDir))
		if err != nil {
			return false, nil
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, readyz, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return nil, fmt.Errorf("gridview-wrapper not ready at %s (log: %s): %w", readyz, proc.LogFile, err)
	}
	return proc, nil
}

// WrapperClient reaches a wrapper as kube-proxy does, with client-go's
// transport: it trusts the certificate and presents the token the wrapper
// wrote in credentialsDir. Requests name the wrapper by https://<listen>.
func WrapperClient(credentialsDir string) (*http.Client, error) {
	return rest.HTTPClientFor(&rest.Config{
		BearerTokenFile: wrapper.ClientTokenFile(credentialsDir),
		TLSClientConfig: rest.TLSClientConfig{CAFile: wrapper.ServingCertFile(credentialsDir)},
	})
}

// WriteWrapperKubeconfig writes at path what kube-proxy reads to reach the
// wrapper listening on listen, as the deploy manifests' ConfigMap has it.
func WriteWrapperKubeconfig(path, listen, credentialsDir string) error {
	// client-go reads relative paths from the kubeconfig's own directory.
	credentialsDir, err := filepath.Abs(credentialsDir)
	if err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: gridview-wrapper
  cluster:
    server: https://%s
    certificate-authority: %s
users:
- name: kube-proxy
  user:
    tokenFile: %s
contexts:
- name: gridview-wrapper
  context:
    cluster: gridview-wrapper
    user: kube-proxy
current-context: gridview-wrapper
`, listen, wrapper.ServingCertFile(credentialsDir), wrapper.ClientTokenFile(credentialsDir))
	return os.WriteFile(path, []byte(config), 0o600)
}
