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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	gridviewGroup        = "topology.gridview.io"
	gridviewGroupVersion = gridviewGroup + "/v1alpha1"
	gridviewPort         = 8443
	// gridviewTokenTTL outlives any test run; the token is not refreshed.
	gridviewTokenTTL = 24 * time.Hour
	// availableTimeout bounds how long gridview-apiserver may take from
	// start until kube-apiserver serves its group.
	availableTimeout = 2 * time.Minute
)

// prepareGridviewIdentity applies the deploy manifests' namespace,
// ServiceAccount and RBAC — so every run proves they are
// sufficient — and
// writes a kubeconfig with a token of that ServiceAccount.
func (c *Cluster) prepareGridviewIdentity(ctx context.Context) error {
	for _, name := range []string{"namespace.yaml", "serviceaccount.yaml", "rbac.yaml"} {
		if err := c.applier.applyFile(ctx, c.deployManifest(name)); err != nil {
			return fmt.Errorf("applying deploy manifests: %w", err)
		}
	}
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return fmt.Errorf("creating admin client: %w", err)
	}
	ttl := int64(gridviewTokenTTL.Seconds())
	token, err := client.CoreV1().ServiceAccounts(gridviewNamespace).CreateToken(ctx, gridviewServiceName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}},
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", gridviewNamespace, gridviewServiceName, err)
	}
	c.GridviewKubeconfig = filepath.Join(c.opts.WorkDir, "gridview-apiserver.kubeconfig")
	return c.WriteTokenKubeconfig(c.GridviewKubeconfig, "gridview-apiserver", token.Status.Token)
}

func (c *Cluster) deployManifest(name string) string {
	return filepath.Join(c.opts.RepoRoot, "artifacts", "deploy", name)
}

// newPrimaryReplica describes the cluster's own gridview-apiserver, in
// Cluster.Netns with the serving certificate generatePKI issued.
func (c *Cluster) newPrimaryReplica() *GridviewReplica {
	const name = "gridview-apiserver"
	return &GridviewReplica{
		Name: name, LogFile: filepath.Join(c.opts.LogDir, name+".log"),
		Netns: c.Netns, IP: c.NetnsIP, cluster: c,
		certFile: c.pki.GridviewCert, keyFile: c.pki.GridviewKey,
		dataDir: filepath.Join(c.opts.WorkDir, "gridview-data"),
	}
}

// primary is the cluster's own replica, which StartGridview and friends
// manage.
func (c *Cluster) primary() *GridviewReplica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replicas[0]
}

// StartGridview starts gridview-apiserver inside the network namespace with
// the run's data directory (or its external etcd), and waits until
// kube-apiserver serves its group. If it does not get there, the process is
// stopped again.
func (c *Cluster) StartGridview(ctx context.Context) error {
	return c.primary().Start(ctx)
}

// StopGridview stops gridview-apiserver (SIGTERM, then SIGKILL after a
// grace period) and waits until it has exited. Its data directory is kept.
func (c *Cluster) StopGridview() error {
	return c.primary().Stop()
}

// RestartGridview stops gridview-apiserver and starts it again on the same
// data directory, returning once its group is served again.
func (c *Cluster) RestartGridview(ctx context.Context) error {
	if err := c.StopGridview(); err != nil {
		return err
	}
	return c.StartGridview(ctx)
}

// RestartGridviewOnEmptyStore stops gridview-apiserver, deletes its embedded
// etcd's data directory and starts it on an empty one, as a Pod replaced onto
// an emptyDir would start: every ServiceGrid is gone, while their Services,
// in kube-apiserver, are not. It returns once the group is served again.
func (c *Cluster) RestartGridviewOnEmptyStore(ctx context.Context) error {
	if c.gridviewEtcdInstance != nil {
		return errors.New("gridview-apiserver keeps its ServiceGrids in the external gridview-etcd, not in a data directory")
	}
	r := c.primary()
	if err := r.Stop(); err != nil {
		return err
	}
	if err := os.RemoveAll(r.dataDir); err != nil {
		return fmt.Errorf("emptying the data directory of %s: %w", r.Name, err)
	}
	return r.Start(ctx)
}

// waitGridviewServing waits for the process's own /readyz first, makes the
// replica an endpoint of the Service, then waits until kube-apiserver serves
// the group: until then the APIService may still report the previous
// process as Available.
func (c *Cluster) waitGridviewServing(ctx context.Context, r *GridviewReplica, proc *Process) error {
	caPEM, err := os.ReadFile(c.pki.GridviewCACert)
	if err != nil {
		return fmt.Errorf("reading gridview serving CA: %w", err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer direct.CloseIdleConnections()
	readyz := "https://" + net.JoinHostPort(r.IP.String(), strconv.Itoa(gridviewPort)) + "/readyz"

	deadline := time.Now().Add(availableTimeout)
	if err := waitFor(ctx, time.Until(deadline), proc, r.Name+" "+readyz, func(ctx context.Context) error {
		return httpGetOK(ctx, direct, readyz)
	}); err != nil {
		return err
	}
	return c.markServing(ctx, r, proc, deadline)
}
