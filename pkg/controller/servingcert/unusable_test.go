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
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/keyutil"
)

// seededCA is a self-signed certificate and its key as a user would put
// them in the Secret.
func seededCA(t *testing.T, isCA bool, keyUsage x509.KeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "user-ca"},
		NotBefore: start.Add(-time.Hour), NotAfter: start.Add(10 * 365 * 24 * time.Hour),
		BasicConstraintsValid: true, IsCA: isCA, KeyUsage: keyUsage}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM
}

// A seeded CA that cannot sign is reported and left alone, not replaced by
// a leaf that verifies nowhere on every sync; one that can gets a leaf.
func TestSeededCAMustBeAbleToSign(t *testing.T) {
	tests := []struct {
		name     string
		isCA     bool
		keyUsage x509.KeyUsage
		wantErr  bool
	}{
		{name: "CA without keyCertSign", isCA: true, keyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, wantErr: true},
		{name: "not a CA", keyUsage: x509.KeyUsageDigitalSignature, wantErr: true},
		{name: "CA with keyCertSign", isCA: true, keyUsage: x509.KeyUsageCertSign},
		{name: "CA without key usage", isCA: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			caPEM, keyPEM := seededCA(t, tc.isCA, tc.keyUsage)
			c := newCluster(t, map[string]any{}, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testSecret},
				Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"ca.crt": caPEM, "ca.key": keyPEM}})
			r := c.replica(start)
			for sync := range 3 {
				err := r.RunOnce(context.Background())
				if tc.wantErr && (err == nil || !strings.Contains(err.Error(), "cannot sign")) {
					t.Fatalf("sync %d: error %v, want one saying the CA cannot sign", sync, err)
				}
				if !tc.wantErr && err != nil {
					t.Fatalf("sync %d: %v", sync, err)
				}
			}
			secretWrites, _ := c.writes()
			if want := map[bool]int{true: 0, false: 1}[tc.wantErr]; secretWrites != want {
				t.Errorf("%d Secret writes in 3 syncs, want %d", secretWrites, want)
			}
			if tc.wantErr {
				if cert, _ := r.CurrentCertKeyContent(); cert != nil {
					t.Error("a certificate no caBundle verifies is served")
				}
				return
			}
			checkServes(t, c, r, start)
		})
	}
}

// A Secret that no longer parses is neither replaced nor served from: the
// replicas keep serving their certificates, which the published caBundle
// still verifies, and report the error until someone fixes the Secret.
func TestUnusableSecretIsLeftAlone(t *testing.T) {
	tests := []struct {
		name   string
		mangle func(data map[string][]byte)
	}{
		{name: "CA key garbled", mangle: func(data map[string][]byte) { data["ca.key"] = []byte("garbage") }},
		{name: "ca.crt garbled", mangle: func(data map[string][]byte) { data["ca.crt"] = []byte("garbage") }},
		{name: "CA key removed", mangle: func(data map[string][]byte) { delete(data, "ca.key") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, map[string]any{})
			a, b := c.replica(start), c.replica(start)
			for _, r := range []*replica{a, b} {
				if err := r.RunOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			served, _ := a.CurrentCertKeyContent()
			caBundle := c.caBundle(t)
			secret := c.secret(t)
			tc.mangle(secret.Data)
			if _, err := c.kube.CoreV1().Secrets(testNamespace).Update(context.Background(), secret, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			mangled := c.secret(t).Data
			c.kube.ClearActions()
			c.dynamic.ClearActions()

			if err := a.RunOnce(context.Background()); err == nil || !strings.Contains(err.Error(), "no usable CA") {
				t.Errorf("error %v, want one saying the Secret holds no usable CA", err)
			}
			if secretWrites, patches := c.writes(); secretWrites != 0 || patches != 0 {
				t.Errorf("%d Secret writes and %d APIService patches, want none", secretWrites, patches)
			}
			for key, value := range c.secret(t).Data {
				if !bytes.Equal(value, mangled[key]) {
					t.Errorf("the Secret's %s was rewritten", key)
				}
			}
			if !bytes.Equal(c.caBundle(t), caBundle) {
				t.Error("the caBundle changed")
			}
			if cert, _ := a.CurrentCertKeyContent(); !bytes.Equal(cert, served) {
				t.Error("the replica stopped serving its certificate")
			}
			if err := servedVerifies(t, c, b, start); err != nil {
				t.Errorf("the other replica's certificate no longer verifies: %v", err)
			}
		})
	}
}

// Only the certificates of ca.crt are published: the cluster-scoped
// APIService gets nothing else a user put there by mistake.
func TestPublishesOnlyCertificates(t *testing.T) {
	tests := []struct {
		name  string
		extra func(data map[string][]byte) []byte
	}{
		{name: "CA key appended", extra: func(data map[string][]byte) []byte { return data["ca.key"] }},
		{name: "serving key appended", extra: func(data map[string][]byte) []byte { return data["tls.key"] }},
		{name: "text between certificates", extra: func(map[string][]byte) []byte { return []byte("issued by ops, see ticket 42\n") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, map[string]any{})
			r := c.replica(start)
			if err := r.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			secret := c.secret(t)
			certs := secret.Data["ca.crt"]
			secret.Data["ca.crt"] = append(append(slices.Clone(certs), tc.extra(secret.Data)...), certs...)
			if _, err := c.kube.CoreV1().Secrets(testNamespace).Update(context.Background(), secret, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := r.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			published := c.caBundle(t)
			if want := bytes.Repeat(certs, 2); !bytes.Equal(published, want) {
				t.Errorf("caBundle of %d bytes (with a private key: %t), want the %d bytes of the certificates of ca.crt only",
					len(published), bytes.Contains(published, []byte("PRIVATE KEY")), len(want))
			}
		})
	}
}
