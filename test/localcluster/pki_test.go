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
	"crypto/x509"
	"encoding/pem"
	"net/netip"
	"os"
	"slices"
	"testing"
)

func TestGeneratePKI(t *testing.T) {
	hostIP, nsIP := netip.MustParseAddr("10.250.3.1"), netip.MustParseAddr("10.250.3.2")
	p, err := generatePKI(t.TempDir(), hostIP, nsIP)
	if err != nil {
		t.Fatalf("generatePKI(): %v", err)
	}
	clusterCA := readPool(t, p.CACert)
	gridviewCA := readPool(t, p.GridviewCACert)
	frontProxyCA := readPool(t, p.FrontProxyCACert)
	server, client := x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth

	tests := []struct {
		name  string
		cert  string
		roots *x509.CertPool
		usage x509.ExtKeyUsage
		host  string // verified as a server name when not empty
	}{
		{"kube-apiserver by host address", p.APIServerCert, clusterCA, server, hostIP.String()},
		{"kube-apiserver by loopback", p.APIServerCert, clusterCA, server, "127.0.0.1"},
		{"kube-apiserver by service IP", p.APIServerCert, clusterCA, server, "10.96.0.1"},
		{"kube-apiserver by in-cluster name", p.APIServerCert, clusterCA, server, "kubernetes.default.svc.cluster.local"},
		{"gridview by the aggregator's name", p.GridviewCert, gridviewCA, server, "gridview-apiserver.gridview-system.svc"},
		{"gridview by full service name", p.GridviewCert, gridviewCA, server, "gridview-apiserver.gridview-system.svc.cluster.local"},
		{"gridview by namespace address", p.GridviewCert, gridviewCA, server, nsIP.String()},
		{"admin client", p.AdminCert, clusterCA, client, ""},
		{"front-proxy client", p.FrontProxyClientCert, frontProxyCA, client, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert := readCert(t, tt.cert)
			opts := x509.VerifyOptions{Roots: tt.roots, DNSName: tt.host, KeyUsages: []x509.ExtKeyUsage{tt.usage}}
			if _, err := cert.Verify(opts); err != nil {
				t.Errorf("verify %s: %v", tt.cert, err)
			}
		})
	}

	t.Run("admin is system:masters", func(t *testing.T) {
		cert := readCert(t, p.AdminCert)
		if cert.Subject.CommonName != "admin" || !slices.Equal(cert.Subject.Organization, []string{"system:masters"}) {
			t.Errorf("admin subject = %v", cert.Subject)
		}
	})
	t.Run("front-proxy client name", func(t *testing.T) {
		if cn := readCert(t, p.FrontProxyClientCert).Subject.CommonName; cn != "front-proxy-client" {
			t.Errorf("front-proxy client CN = %q", cn)
		}
	})
	t.Run("gridview is not trusted through the cluster CA", func(t *testing.T) {
		opts := x509.VerifyOptions{Roots: clusterCA, DNSName: "gridview-apiserver.gridview-system.svc"}
		if _, err := readCert(t, p.GridviewCert).Verify(opts); err == nil {
			t.Error("gridview serving cert verified against the cluster CA; want its own CA only")
		}
	})
	t.Run("private keys are not world-readable", func(t *testing.T) {
		for _, key := range []string{p.CAKey, p.APIServerKey, p.AdminKey, p.FrontProxyClientKey, p.ServiceAccountKey, p.GridviewKey} {
			info, err := os.Stat(key)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s has mode %v", key, info.Mode().Perm())
			}
		}
	})
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM block", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return cert
}

func readPool(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(readCert(t, path))
	return pool
}
