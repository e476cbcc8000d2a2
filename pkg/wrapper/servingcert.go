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

package wrapper

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/certificates"
)

// The certificate outlives any wrapper process by far; a start within a
// year of its end writes a new one, which client-go (from v1.36,
// ClientsAllowCARotation) reloads without a kube-proxy restart.
const (
	servingCertValidity = 5 * 365 * 24 * time.Hour
	servingCertRenewal  = 365 * 24 * time.Hour
)

// ServingCertFile is the certificate-authority of kube-proxy's kubeconfig.
func ServingCertFile(dir string) string { return filepath.Join(dir, servingCertFile) }

// loadOrCreateCertificate reuses the certificate in dir while it names every
// one of hosts and has more than servingCertRenewal left.
func loadOrCreateCertificate(dir string, hosts []string) (tls.Certificate, error) {
	key, keyErr := readPrivate(dir, servingKeyFile)
	cert, certErr := os.ReadFile(ServingCertFile(dir))
	switch {
	case keyErr == nil && certErr == nil:
		pair, err := tls.X509KeyPair(cert, key)
		if err == nil && fitFor(pair.Leaf, hosts) {
			return pair, nil
		}
		klog.InfoS("Replacing the serving certificate kube-proxy trusts", "file", ServingCertFile(dir), "hosts", hosts, "err", err)
	case errors.Is(keyErr, os.ErrNotExist) && errors.Is(certErr, os.ErrNotExist):
	default:
		klog.InfoS("Replacing the serving certificate kube-proxy trusts", "file", ServingCertFile(dir), "err", errors.Join(keyErr, certErr))
	}
	cert, key, err := selfSignedCertificate(hosts)
	if err != nil {
		return tls.Certificate{}, err
	}
	// The key first: a crash between the two leaves a pair that does not
	// match, which the next start replaces.
	for _, file := range []struct {
		name string
		perm os.FileMode
		data []byte
	}{{servingKeyFile, 0o600, key}, {servingCertFile, 0o644, cert}} {
		if err := replaceFile(dir, file.name, file.perm, func(f *os.File) error {
			_, err := f.Write(file.data)
			return err
		}); err != nil {
			return tls.Certificate{}, err
		}
	}
	return tls.X509KeyPair(cert, key)
}

func fitFor(cert *x509.Certificate, hosts []string) bool {
	if cert == nil || time.Until(cert.NotAfter) < servingCertRenewal {
		return false
	}
	for _, host := range hosts {
		if cert.VerifyHostname(host) != nil {
			return false
		}
	}
	return true
}

// selfSignedCertificate returns a PEM certificate for hosts, signed by its
// own key, and that key.
func selfSignedCertificate(hosts []string) (cert, key []byte, err error) {
	private, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template, err := certificates.Template("gridview-wrapper", time.Now(), servingCertValidity)
	if err != nil {
		return nil, nil, err
	}
	// Its own CA: kube-proxy trusts it as its certificate-authority.
	template.IsCA = true
	template.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign
	template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, host := range hosts {
		if ip := net.ParseIP(host); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else {
			template.DNSNames = append(template.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &private.PublicKey, private)
	if err != nil {
		return nil, nil, err
	}
	if key, err = keyutil.MarshalPrivateKeyToPEM(private); err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der}), key, nil
}

// ServingHosts are the names the certificate must hold for a wrapper
// listening on listen: loopback's, and the host it binds when it is another.
func ServingHosts(listen string) []string {
	hosts := []string{"127.0.0.1", "::1", "localhost"}
	host, _, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err == nil && host != "" && (ip == nil || !ip.IsUnspecified()) && !slices.Contains(hosts, host) {
		hosts = append(hosts, host)
	}
	return hosts
}
