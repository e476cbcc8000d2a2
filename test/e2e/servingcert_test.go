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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// gridview-apiserver run as the default install runs it issues its own
// serving certificate and publishes its CA: the APIService of
// artifacts/deploy, which neither skips verification nor carries a
// caBundle, turns Available, and clients reach the group through the
// aggregator over a chain it verified.
func TestAggregatorVerifiesSelfManagedServingCert(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Registered first: later tests need gridview-apiserver back even if
	// this one fails half-way.
	t.Cleanup(func() {
		if err := cluster.UseHarnessServingCert(context.Background()); err != nil {
			t.Errorf("restoring the harness's serving certificate: %v", err)
		}
	})
	if err := cluster.UseManagedServingCert(ctx); err != nil {
		t.Fatalf("running gridview-apiserver with the certificate it manages: %v", err)
	}

	secret, err := kubeClient.CoreV1().Secrets("gridview-system").Get(ctx, localcluster.ServingCertSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("gridview-apiserver did not create its Secret: %v", err)
	}
	if secret.Type != corev1.SecretTypeTLS {
		t.Errorf("Secret type %q, want %q", secret.Type, corev1.SecretTypeTLS)
	}
	dyn, err := dynamic.NewForConfig(cluster.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	apiService, err := dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}).
		Get(ctx, "v1alpha1.topology.gridview.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if skip, _, _ := unstructured.NestedBool(apiService.Object, "spec", "insecureSkipTLSVerify"); skip {
		t.Fatal("the APIService skips TLS verification")
	}
	encoded, _, _ := unstructured.NestedString(apiService.Object, "spec", "caBundle")
	caBundle, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || !bytes.Equal(caBundle, secret.Data["ca.crt"]) {
		t.Fatalf("the APIService's caBundle is not the CA in the Secret (%v)", err)
	}

	// What the aggregator checks: the certificate gridview-apiserver serves
	// is the Secret's and chains to the caBundle for the Service's name.
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caBundle)
	direct, err := url.Parse(cluster.GridviewReplicas()[0].Config().Host)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", direct.Host,
		&tls.Config{RootCAs: roots, ServerName: localcluster.GridviewServiceDNSName})
	if err != nil {
		t.Fatalf("the caBundle does not verify gridview-apiserver for %s: %v", localcluster.GridviewServiceDNSName, err)
	}
	served := conn.ConnectionState().PeerCertificates[0].Raw
	conn.Close()
	pair, err := tls.X509KeyPair(secret.Data["tls.crt"], secret.Data["tls.key"])
	if err != nil || !bytes.Equal(served, pair.Certificate[0]) {
		t.Fatalf("gridview-apiserver serves another certificate than its Secret's (%v)", err)
	}

	// Clients through the aggregator.
	ns := testNamespace(t)
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("verified"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a ServiceGrid through the aggregator: %v", err)
	}
	if out := mustKubectl(t, "get", "servicegrids", "-n", ns, "-o", "name"); !strings.Contains(out, "servicegrid.topology.gridview.io/verified") {
		t.Errorf("kubectl get servicegrids: %q, want the ServiceGrid", out)
	}
}
