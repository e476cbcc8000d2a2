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
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// ServingCertSecret is the Secret in which gridview-apiserver keeps its CA
// and serving certificate with UseManagedServingCert, as
// artifacts/deploy/deployment.yaml runs it.
const ServingCertSecret = "gridview-apiserver-serving-cert"

// GridviewServiceDNSName is the name the aggregator verifies
// gridview-apiserver's serving certificate for.
const GridviewServiceDNSName = gridviewServiceName + "." + gridviewNamespace + ".svc"

// UseManagedServingCert restarts the cluster's gridview-apiserver as the
// default install runs it: with --serving-cert-secret and --apiservice-name,
// under the rights of artifacts/deploy/servingcert-rbac.yaml, and with the
// APIService of artifacts/deploy as it is, without the run's caBundle, so
// that only gridview-apiserver can make it Available. It returns once the
// group is served. UseHarnessServingCert undoes it.
func (c *Cluster) UseManagedServingCert(ctx context.Context) error {
	r := c.primary()
	if err := r.Stop(); err != nil {
		return err
	}
	if err := c.applier.applyFile(ctx, c.deployManifest("servingcert-rbac.yaml")); err != nil {
		return fmt.Errorf("applying deploy manifests: %w", err)
	}
	client, err := c.quietAdminClient()
	if err != nil {
		return err
	}
	// A fresh Secret: gridview-apiserver creates it.
	if err := client.CoreV1().Secrets(gridviewNamespace).Delete(ctx, ServingCertSecret, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Secret %s/%s: %w", gridviewNamespace, ServingCertSecret, err)
	}
	apiService, err := c.deployAPIService()
	if err != nil {
		return err
	}
	if err := c.applier.apply(ctx, apiService); err != nil {
		return err
	}
	c.mu.Lock()
	r.managedCert = true
	c.mu.Unlock()
	return r.Start(ctx)
}

// UseHarnessServingCert restarts the cluster's gridview-apiserver with the
// serving certificate the harness issued, and the APIService with the
// harness's caBundle again.
func (c *Cluster) UseHarnessServingCert(ctx context.Context) error {
	r := c.primary()
	if err := r.Stop(); err != nil {
		return err
	}
	c.mu.Lock()
	r.managedCert, r.managedCA = false, nil
	c.mu.Unlock()
	apiService, err := c.localAPIService()
	if err != nil {
		return err
	}
	if err := c.applier.apply(ctx, apiService); err != nil {
		return err
	}
	return r.Start(ctx)
}

// managedArgs run gridview-apiserver with the certificate it manages.
func managedArgs() []string {
	return []string{"--serving-cert-secret", gridviewNamespace + "/" + ServingCertSecret, "--apiservice-name", apiServiceName}
}

// waitManagedServing is waitGridviewServing for a replica serving its own
// certificate, which names only the Service: its /readyz is checked as the
// aggregator would check it, for the Service's DNS name against the
// APIService's caBundle, once gridview-apiserver has set that.
func (c *Cluster) waitManagedServing(ctx context.Context, r *GridviewReplica, proc *Process) error {
	dyn, err := dynamic.NewForConfig(c.AdminConfig)
	if err != nil {
		return fmt.Errorf("creating dynamic client: %w", err)
	}
	readyz := "https://" + net.JoinHostPort(r.IP.String(), strconv.Itoa(gridviewPort)) + "/readyz"
	deadline := time.Now().Add(availableTimeout)
	var caBundle []byte
	if err := waitFor(ctx, time.Until(deadline), proc, r.Name+" "+readyz+" verified with the APIService's caBundle", func(ctx context.Context) error {
		apiService, err := dyn.Resource(apiServicesResource).Get(ctx, apiServiceName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("getting APIService: %w", err)
		}
		encoded, _, _ := unstructured.NestedString(apiService.Object, "spec", "caBundle")
		if caBundle, err = base64.StdEncoding.DecodeString(encoded); err != nil || len(caBundle) == 0 {
			return errors.New("gridview-apiserver has not set the APIService's caBundle yet")
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(caBundle)
		direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: GridviewServiceDNSName}}}
		defer direct.CloseIdleConnections()
		return httpGetOK(ctx, direct, readyz)
	}); err != nil {
		return err
	}
	c.mu.Lock()
	r.managedCA = caBundle
	c.mu.Unlock()
	return c.markServing(ctx, r, proc, deadline)
}

// markServing makes the replica an endpoint of the Service, then waits
// until kube-apiserver serves the group through it.
func (c *Cluster) markServing(ctx context.Context, r *GridviewReplica, proc *Process, deadline time.Time) error {
	c.mu.Lock()
	r.serving = r.proc == proc
	c.mu.Unlock()
	if err := c.syncGridviewEndpoints(); err != nil {
		return err
	}
	return waitFor(ctx, time.Until(deadline), proc, "APIService "+apiServiceName+" Available", c.checkGroupServed)
}

// deployAPIService is artifacts/deploy/apiservice.yaml as it is.
func (c *Cluster) deployAPIService() (*unstructured.Unstructured, error) {
	path := c.deployManifest("apiservice.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	objects, err := decodeManifests(data)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	if len(objects) != 1 || objects[0].GetName() != apiServiceName {
		return nil, fmt.Errorf("%s must hold exactly the APIService %s, holds %d objects", path, apiServiceName, len(objects))
	}
	return objects[0], nil
}
