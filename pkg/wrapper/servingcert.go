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
// one of hosts, is valid now and has more than servingCertRenewal left. A
// key others may read, or a link, is refused, as the token is.
func loadOrCreateCertificate(dir string, hosts []string, now time.Time) (tls.Certificate, error) {
	key, err := readPrivate(dir, servingKeyFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return tls.Certificate{}, err
	}
	var current *tls.Certificate
	// A key without its certificate, or one that does not match it, is
	// what a crash between their writes leaves: both are written anew.
	if cert, certErr := os.ReadFile(ServingCertFile(dir)); err == nil && certErr == nil {
		if pair, err := tls.X509KeyPair(cert, key); err == nil {
			if fitFor(pair.Leaf, hosts, now) {
				return pair, nil
			}
			current = &pair
		}
	}
	cert, key, err := selfSignedCertificate(hosts, now)
	if err == nil {
		err = writeCertificate(dir, cert, key)
	}
	if err != nil {
		// A full or read-only disk must not stop a wrapper whose
		// certificate still serves.
		if current != nil && servable(current.Leaf, hosts, now) {
			klog.ErrorS(err, "Cannot renew the serving certificate kube-proxy trusts; serving the current one", "file", ServingCertFile(dir), "notAfter", current.Leaf.NotAfter)
			return *current, nil
		}
		return tls.Certificate{}, err
	}
	klog.InfoS("Wrote the serving certificate kube-proxy trusts: kube-proxy from v1.36 reloads it within 5 minutes, an older one must restart",
		"file", ServingCertFile(dir), "hosts", hosts, "notAfter", now.Add(servingCertValidity))
	return tls.X509KeyPair(cert, key)
}

// writeCertificate writes the key first: a crash between the two leaves a
// pair that does not match, which the next start replaces.
func writeCertificate(dir string, cert, key []byte) error {
	for _, file := range []struct {
		name string
		perm os.FileMode
		data []byte
	}{{servingKeyFile, 0o600, key}, {servingCertFile, 0o644, cert}} {
		if err := replaceFile(dir, file.name, file.perm, func(f *os.File) error {
			_, err := f.Write(file.data)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// fitFor reports whether cert serves hosts now and is not yet due for
// renewal.
func fitFor(cert *x509.Certificate, hosts []string, now time.Time) bool {
	return servable(cert, hosts, now) && cert.NotAfter.Sub(now) >= servingCertRenewal
}

// servable reports whether clients verifying cert for hosts accept it now.
func servable(cert *x509.Certificate, hosts []string, now time.Time) bool {
	if cert == nil || now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
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
func selfSignedCertificate(hosts []string, now time.Time) (cert, key []byte, err error) {
	private, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template, err := certificates.Template("gridview-wrapper", now, servingCertValidity)
	if err != nil {
		return nil, nil, err
	}
	// An edge node's clock may be set back after the first start (a
	// hardware clock in local time): only kube-proxy on this node trusts
	// the certificate, so a day's margin costs nothing.
	template.NotBefore = now.Add(-24 * time.Hour)
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
