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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// servedVerifies reports whether the APIService's caBundle verifies what r
// serves at now, whatever the Secret holds.
func servedVerifies(t *testing.T, c *cluster, r *replica, now time.Time) error {
	t.Helper()
	cert, key := r.CurrentCertKeyContent()
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.caBundle(t))
	_, err = pair.Leaf.Verify(x509.VerifyOptions{DNSName: testHost, Roots: roots, CurrentTime: now})
	return err
}

// A CA rollover never serves a leaf the APIService's caBundle does not
// verify: the new CA is published first and signs only after signingGrace,
// and a replica that could not publish keeps serving the previous leaf.
func TestCARolloverPublishesBeforeServing(t *testing.T) {
	tests := []struct {
		name       string
		apiService string
		// patchFails makes publishing fail from the CA renewal until the
		// leaf of the new CA is in the Secret.
		patchFails bool
	}{
		{name: "caBundle published", apiService: testAPIService},
		{name: "caBundle patch failing", apiService: testAPIService, patchFails: true},
		{name: "no APIService managed", apiService: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, map[string]any{})
			r := c.replica(start)
			r.cfg.APIService = tc.apiService
			ctx := context.Background()
			if err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.apiService == "" {
				// Whoever copies ca.crt into the APIService in this mode.
				c.publish(t)
			}
			oldCA := caCerts(t, c.secret(t).Data["ca.crt"])[0]
			// Leaves renewed along the way, up to the CA's renewal.
			now := start
			for ; !dueForRenewal(oldCA, now); now = now.Add(50 * 24 * time.Hour) {
				r.clock.SetTime(now)
				if err := r.RunOnce(ctx); err != nil {
					t.Fatal(err)
				}
				checkServes(t, c, r, now)
			}
			failing := tc.patchFails
			c.dynamic.PrependReactor("patch", "apiservices", func(k8stesting.Action) (bool, runtime.Object, error) {
				return failing, nil, errors.New("etcdserver: request timed out")
			})
			oldLeaf := c.secret(t).Data["tls.crt"]

			// Phase 1: the new CA joins ca.crt, the leaf stays.
			r.clock.SetTime(now)
			err := r.RunOnce(ctx)
			if (err != nil) != tc.patchFails {
				t.Fatalf("CA renewal: error %v, want one: %t", err, tc.patchFails)
			}
			cas := caCerts(t, c.secret(t).Data["ca.crt"])
			if len(cas) != 2 || !cas[1].Equal(oldCA) {
				t.Fatalf("ca.crt holds %d CAs after the renewal, want the new one and its predecessor", len(cas))
			}
			if !bytes.Equal(c.secret(t).Data["tls.crt"], oldLeaf) {
				t.Error("a leaf of the new CA was issued together with the CA, before anyone could publish it")
			}
			if tc.apiService == "" {
				c.publish(t)
			}
			if err := servedVerifies(t, c, r, now); err != nil {
				t.Errorf("phase 1: the caBundle does not verify the served leaf: %v", err)
			}

			// Within the grace the leaf still stays.
			now = now.Add(signingGrace / 2)
			r.clock.SetTime(now)
			_ = r.RunOnce(ctx)
			if !bytes.Equal(c.secret(t).Data["tls.crt"], oldLeaf) {
				t.Error("the new CA signed a leaf within its grace")
			}

			// Phase 2: the new CA signs, once it has had time to be published.
			now = now.Add(signingGrace)
			r.clock.SetTime(now)
			err = r.RunOnce(ctx)
			newLeaf := caCerts(t, c.secret(t).Data["tls.crt"])[0]
			if newLeaf.CheckSignatureFrom(cas[0]) != nil {
				t.Fatal("after the grace the leaf is not the new CA's")
			}
			if served, _ := r.CurrentCertKeyContent(); bytes.Equal(served, c.secret(t).Data["tls.crt"]) == tc.patchFails {
				t.Errorf("serves the new CA's leaf: %t, want %t (error %v)", tc.patchFails, !tc.patchFails, err)
			}
			if err := servedVerifies(t, c, r, now); err != nil {
				t.Errorf("phase 2: the caBundle does not verify the served leaf: %v", err)
			}

			// Once published, the new leaf is served.
			failing = false
			if err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.apiService == "" {
				c.publish(t)
			}
			checkServes(t, c, r, now)
		})
	}
}

// A server back after its leaf expired, when its CA is due too, gets a leaf
// of the CA already published, not of the one it issues in the same write:
// served at once, even while the caBundle cannot be patched.
func TestExpiredLeafAtCARenewalComesFromThePublishedCA(t *testing.T) {
	tests := []struct {
		name       string
		patchFails bool
	}{
		{name: "caBundle patched"},
		{name: "caBundle patch failing", patchFails: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, map[string]any{})
			r := c.replica(start)
			if err := r.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			oldCA := caCerts(t, c.secret(t).Data["ca.crt"])[0]
			c.dynamic.PrependReactor("patch", "apiservices", func(k8stesting.Action) (bool, runtime.Object, error) {
				return tc.patchFails, nil, errors.New("etcdserver: request timed out")
			})
			now := start.Add(2*365*24*time.Hour + 24*time.Hour)
			r.clock.SetTime(now)
			if err := r.RunOnce(context.Background()); (err != nil) != tc.patchFails {
				t.Fatalf("error %v, want one: %t", err, tc.patchFails)
			}
			if cas := caCerts(t, c.secret(t).Data["ca.crt"]); len(cas) != 2 || !cas[1].Equal(oldCA) {
				t.Fatalf("ca.crt holds %d CAs, want a new one and its predecessor", len(cas))
			}
			if leaf := caCerts(t, c.secret(t).Data["tls.crt"])[0]; leaf.CheckSignatureFrom(oldCA) != nil || !now.Before(leaf.NotAfter) {
				t.Error("the expired leaf was not replaced by one of the CA already published")
			}
			if served, _ := r.CurrentCertKeyContent(); !bytes.Equal(served, c.secret(t).Data["tls.crt"]) {
				t.Error("the Secret's new leaf is not served")
			}
			if err := servedVerifies(t, c, r, now); err != nil {
				t.Errorf("the caBundle does not verify the served leaf: %v", err)
			}
		})
	}
}
