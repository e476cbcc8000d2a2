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

package servingcert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/gridview/gridview/pkg/certificates"
)

const (
	// caKeyKey holds the CA's private key beside the kubernetes.io/tls keys
	// and cert-manager's ca.crt, so that every replica can issue leaves.
	caKeyKey = "ca.key"

	// caLifetime is long because the aggregator trusts the CA itself: a new
	// CA means a new caBundle. Leaves are short-lived since rotating them
	// changes nothing outside the Secret.
	caLifetime   = 3 * 365 * 24 * time.Hour
	leafLifetime = 90 * 24 * time.Hour
	// signingGrace is how long a new CA sits in ca.crt before it signs a
	// leaf: many resyncs, so that the replicas (or whoever copies ca.crt
	// into the APIService) publish it before any replica serves a leaf only
	// it verifies. The leaf of the predecessor, renewed with a third of the
	// CA's lifetime left, stays valid meanwhile.
	signingGrace = time.Hour
)

// bundle is what the Secret holds: the CAs the aggregator must trust and the
// serving certificate, parsed and as PEM.
type bundle struct {
	// cas are the signing CA first, then predecessors not yet expired, whose
	// leaves replicas that have not synced yet may still serve.
	cas   []*x509.Certificate
	caKey crypto.Signer
	leaf  *x509.Certificate // nil when the Secret holds none that is usable

	caBundlePEM, caKeyPEM, certPEM, keyPEM []byte
}

// parseBundle reads a Secret's data. A usable CA is required; the leaf is
// optional, so that a Secret seeded with a CA of the user's gets a leaf from
// it.
func parseBundle(data map[string][]byte) (*bundle, error) {
	cas, err := certutil.ParseCertsPEM(data[corev1.ServiceAccountRootCAKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", corev1.ServiceAccountRootCAKey, err)
	}
	parsedKey, err := keyutil.ParsePrivateKeyPEM(data[caKeyKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", caKeyKey, err)
	}
	caKey, ok := parsedKey.(crypto.Signer)
	if !ok || !publicKeysEqual(caKey.Public(), cas[0].PublicKey) {
		return nil, fmt.Errorf("%s is not the key of the first certificate of %s", caKeyKey, corev1.ServiceAccountRootCAKey)
	}
	// Checked here rather than when signing: a leaf from a certificate that
	// is no CA verifies nowhere, and renew would issue one on every sync.
	if !cas[0].BasicConstraintsValid || !cas[0].IsCA ||
		(cas[0].KeyUsage != 0 && cas[0].KeyUsage&x509.KeyUsageCertSign == 0) {
		return nil, fmt.Errorf("the first certificate of %s, %q, cannot sign certificates: it needs the CA basic constraint "+
			"and, with a key usage, keyCertSign", corev1.ServiceAccountRootCAKey, cas[0].Subject.CommonName)
	}
	// Rebuilt from the certificates parsed: the bundle is published in a
	// cluster-scoped object, where nothing else ca.crt may hold by mistake,
	// such as a private key, must end up.
	caBundlePEM, err := certutil.EncodeCertificates(cas...)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", corev1.ServiceAccountRootCAKey, err)
	}
	b := &bundle{cas: cas, caKey: caKey, caBundlePEM: caBundlePEM, caKeyPEM: data[caKeyKey]}
	if pair, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey]); err == nil {
		b.leaf = pair.Leaf
		b.certPEM, b.keyPEM = data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey]
	}
	return b, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	key, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && key.Equal(b)
}

// data is the Secret's data for b.
func (b *bundle) data() map[string][]byte {
	return map[string][]byte{
		corev1.ServiceAccountRootCAKey: b.caBundlePEM,
		caKeyKey:                       b.caKeyPEM,
		corev1.TLSCertKey:              b.certPEM,
		corev1.TLSPrivateKeyKey:        b.keyPEM,
	}
}

// renew returns the bundle to store and whether it differs from stored
// (nil: nothing usable stored). A CA or leaf is renewed once less than a
// third of its lifetime is left, as kubelet does with its certificates, so
// that a failing renewal has months to be noticed; a new CA keeps its
// predecessor in the bundle until that expires.
//
// A CA rollover takes two phases, as the aggregator trusts only the
// caBundle published: the new CA joins ca.crt while the leaf of its
// predecessor is kept, and signs leaves only after signingGrace. A leaf
// that cannot be served at all (none, expired, for other names, from a CA
// ca.crt lacks) is replaced at once, before any CA renewal.
func renew(stored *bundle, hosts []string, now time.Time) (*bundle, bool, error) {
	next := &bundle{}
	if stored != nil {
		*next = *stored
	}
	changed := false
	// A leaf that cannot be served is replaced at once, from the CA that is
	// already in ca.crt while that is valid: a CA issued in this same write
	// would sign a leaf whose CA nobody has published yet.
	if stored != nil && !now.After(stored.cas[0].NotAfter) && !servable(stored.leaf, stored.cas, hosts, now) {
		if err := next.issueLeaf(hosts, now); err != nil {
			return nil, false, err
		}
		changed = true
	}
	switch {
	case stored == nil || dueForRenewal(stored.cas[0], now):
		ca, key, err := newCA(now)
		if err != nil {
			return nil, false, err
		}
		next.cas, next.caKey, changed = []*x509.Certificate{ca}, key, true
		if stored != nil {
			next.cas = append(next.cas, unexpired(stored.cas, now)...)
		}
	case len(unexpired(stored.cas, now)) != len(stored.cas):
		next.cas, changed = unexpired(stored.cas, now), true
	}
	if !servable(next.leaf, next.cas, hosts, now) || ((dueForRenewal(next.leaf, now) || next.leaf.CheckSignatureFrom(next.cas[0]) != nil) &&
		!now.Before(next.cas[0].NotBefore.Add(certificates.Backdate+signingGrace))) {
		if err := next.issueLeaf(hosts, now); err != nil {
			return nil, false, err
		}
		changed = true
	}
	if !changed {
		return next, false, nil
	}
	caBundlePEM, err := certutil.EncodeCertificates(next.cas...)
	if err != nil {
		return nil, false, fmt.Errorf("encoding the CA bundle: %w", err)
	}
	next.caBundlePEM = caBundlePEM
	caKeyPEM, err := keyutil.MarshalPrivateKeyToPEM(next.caKey)
	if err != nil {
		return nil, false, fmt.Errorf("encoding the CA key: %w", err)
	}
	next.caKeyPEM = caKeyPEM
	return next, true, nil
}

// servable reports whether leaf is one to serve at now: for hosts, not
// expired, from a CA of cas that is not either.
func servable(leaf *x509.Certificate, cas []*x509.Certificate, hosts []string, now time.Time) bool {
	return leaf != nil && !now.After(leaf.NotAfter) && slices.Equal(leaf.DNSNames, hosts) &&
		slices.ContainsFunc(unexpired(cas, now), func(ca *x509.Certificate) bool { return leaf.CheckSignatureFrom(ca) == nil })
}

// issueLeaf replaces b's leaf by one of the signing CA.
func (b *bundle) issueLeaf(hosts []string, now time.Time) error {
	leaf, certPEM, keyPEM, err := newLeaf(b.cas[0], b.caKey, hosts, now)
	if err != nil {
		return err
	}
	b.leaf, b.certPEM, b.keyPEM = leaf, certPEM, keyPEM
	return nil
}

func dueForRenewal(cert *x509.Certificate, now time.Time) bool {
	return now.After(cert.NotAfter.Add(-cert.NotAfter.Sub(cert.NotBefore) / 3))
}

func unexpired(certs []*x509.Certificate, now time.Time) []*x509.Certificate {
	return slices.DeleteFunc(slices.Clone(certs), func(cert *x509.Certificate) bool { return now.After(cert.NotAfter) })
}

func newCA(now time.Time) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the CA key: %w", err)
	}
	template, err := certificates.Template(fmt.Sprintf("gridview-apiserver-ca@%d", now.Unix()), now, caLifetime)
	if err != nil {
		return nil, nil, err
	}
	template.IsCA, template.MaxPathLenZero = true, true
	template.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the CA certificate: %w", err)
	}
	return ca, key, nil
}

func newLeaf(ca *x509.Certificate, caKey crypto.Signer, hosts []string, now time.Time) (*x509.Certificate, []byte, []byte, error) {
	if len(hosts) == 0 {
		return nil, nil, nil, errors.New("a serving certificate needs at least one DNS name")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generating the serving key: %w", err)
	}
	template, err := certificates.Template(hosts[0], now, leafLifetime)
	if err != nil {
		return nil, nil, nil, err
	}
	template.DNSNames = hosts
	template.KeyUsage = x509.KeyUsageDigitalSignature
	template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("signing the serving certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parsing the serving certificate: %w", err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encoding the serving key: %w", err)
	}
	certPEM, err := certutil.EncodeCertificates(leaf)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encoding the serving certificate: %w", err)
	}
	return leaf, certPEM, keyPEM, nil
}
