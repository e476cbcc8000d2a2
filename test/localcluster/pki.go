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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
)

// Names under which the aggregator and in-cluster clients reach the servers.
// The aggregator verifies gridview-apiserver as <service>.<namespace>.svc.
const (
	gridviewNamespace   = "gridview-system"
	gridviewServiceName = "gridview-apiserver"
	kubernetesServiceIP = "10.96.0.1"
	serviceClusterRange = "10.96.0.0/16"
)

// pki holds the paths of every certificate and key a run needs.
type pki struct {
	// clusterCA issues client certificates for tests, such as a node's;
	// gridviewCA serving certificates for more gridview-apiserver replicas.
	clusterCA  *authority
	gridviewCA *authority

	CACert, CAKey               string // cluster CA: kube-apiserver serving and client certs
	APIServerCert, APIServerKey string
	AdminCert, AdminKey         string // CN=admin, O=system:masters
	FrontProxyCACert            string // --requestheader-client-ca-file
	FrontProxyClientCert        string // the aggregator's client cert towards gridview
	FrontProxyClientKey         string
	ServiceAccountKey           string // signs and verifies ServiceAccount tokens
	GridviewCACert              string // the APIService's caBundle
	GridviewCert, GridviewKey   string
}

// apiServerSANs lists every name clients use for kube-apiserver: the host
// veth address, loopback and the in-cluster names of the kubernetes Service.
func apiServerSANs(hostIP netip.Addr) certSpec {
	return certSpec{
		commonName: "kube-apiserver",
		dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		ips:    []net.IP{net.IP(hostIP.AsSlice()), net.ParseIP("127.0.0.1"), net.ParseIP(kubernetesServiceIP)},
		server: true,
	}
}

// gridviewSANs lists the names the aggregator (Service DNS name) and direct
// probes from the host (the namespace address) use for gridview-apiserver.
func gridviewSANs(nsIP netip.Addr) certSpec {
	svc := gridviewServiceName + "." + gridviewNamespace + ".svc"
	return certSpec{
		commonName: svc,
		dnsNames:   []string{svc, svc + ".cluster.local"},
		ips:        []net.IP{net.IP(nsIP.AsSlice())},
		server:     true,
	}
}

// generatePKI writes every certificate and key of a run into dir.
func generatePKI(dir string, hostIP, nsIP netip.Addr) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	path := func(name string) string { return filepath.Join(dir, name) }

	clusterCA, err := newAuthority("gridview-local-ca")
	if err != nil {
		return nil, err
	}
	frontProxyCA, err := newAuthority("gridview-local-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	gridviewCA, err := newAuthority("gridview-local-serving-ca")
	if err != nil {
		return nil, err
	}
	p := &pki{clusterCA: clusterCA, gridviewCA: gridviewCA}
	p.CACert, p.CAKey = path("ca.crt"), path("ca.key")
	p.FrontProxyCACert = path("front-proxy-ca.crt")
	p.GridviewCACert = path("gridview-ca.crt")
	if err := clusterCA.write(p.CACert, p.CAKey); err != nil {
		return nil, err
	}
	if err := frontProxyCA.write(p.FrontProxyCACert, ""); err != nil {
		return nil, err
	}
	if err := gridviewCA.write(p.GridviewCACert, ""); err != nil {
		return nil, err
	}

	leaves := []struct {
		ca              *authority
		spec            certSpec
		certOut, keyOut *string
		name            string
	}{
		{clusterCA, apiServerSANs(hostIP), &p.APIServerCert, &p.APIServerKey, "apiserver"},
		{clusterCA, certSpec{commonName: "admin", organizations: []string{"system:masters"}}, &p.AdminCert, &p.AdminKey, "admin"},
		{frontProxyCA, certSpec{commonName: "front-proxy-client"}, &p.FrontProxyClientCert, &p.FrontProxyClientKey, "front-proxy-client"},
		{gridviewCA, gridviewSANs(nsIP), &p.GridviewCert, &p.GridviewKey, "gridview-apiserver"},
	}
	for _, leaf := range leaves {
		*leaf.certOut, *leaf.keyOut = path(leaf.name+".crt"), path(leaf.name+".key")
		if err := leaf.ca.issue(leaf.spec, *leaf.certOut, *leaf.keyOut); err != nil {
			return nil, fmt.Errorf("issuing %s certificate: %w", leaf.name, err)
		}
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating service account key: %w", err)
	}
	p.ServiceAccountKey = path("sa.key")
	if err := writeKey(p.ServiceAccountKey, saKey); err != nil {
		return nil, err
	}
	return p, nil
}
