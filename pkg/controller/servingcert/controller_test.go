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
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	certutil "k8s.io/client-go/util/cert"
	testingclock "k8s.io/utils/clock/testing"
)

const (
	testNamespace  = "gridview-system"
	testSecret     = "gridview-apiserver-serving-cert"
	testAPIService = "v1alpha1.topology.gridview.io"
	testHost       = "gridview-apiserver.gridview-system.svc"
)

var testHosts = []string{testHost, testHost + ".cluster.local"}

// replica is one gridview-apiserver's controller on the shared fake cluster.
type replica struct {
	*Controller
	clock    *testingclock.FakeClock
	enqueued int
}

func (r *replica) Enqueue() { r.enqueued++ }

// cluster is the fake kube-apiserver every replica of a test talks to.
type cluster struct {
	kube    *fake.Clientset
	dynamic *dynamicfake.FakeDynamicClient
}

func newCluster(t *testing.T, apiServiceSpec map[string]any, objects ...runtime.Object) *cluster {
	t.Helper()
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": testAPIService, "resourceVersion": "1"},
		"spec":       apiServiceSpec,
	}}
	return &cluster{
		kube: fake.NewClientset(objects...),
		dynamic: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{APIServicesResource: "APIServiceList"}, apiService),
	}
}

func (c *cluster) replica(now time.Time) *replica {
	r := &replica{
		Controller: NewController(c.kube, c.dynamic, Config{SecretNamespace: testNamespace, SecretName: testSecret, Hosts: testHosts, APIService: testAPIService}),
		clock:      testingclock.NewFakeClock(now),
	}
	r.Controller.clock = r.clock
	r.AddListener(r)
	return r
}

func (c *cluster) secret(t *testing.T) *corev1.Secret {
	t.Helper()
	secret, err := c.kube.CoreV1().Secrets(testNamespace).Get(context.Background(), testSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Secret: %v", err)
	}
	return secret
}

func (c *cluster) caBundle(t *testing.T) []byte {
	t.Helper()
	apiService, err := c.dynamic.Resource(APIServicesResource).Get(context.Background(), testAPIService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	encoded, _, _ := unstructured.NestedString(apiService.Object, "spec", "caBundle")
	caBundle, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatalf("caBundle %q: %v", encoded, err)
	}
	return caBundle
}

// publish sets the APIService's caBundle to the Secret's ca.crt, as
// cainjector would when gridview-apiserver does not.
func (c *cluster) publish(t *testing.T) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"caBundle":%q}}`, base64.StdEncoding.EncodeToString(c.secret(t).Data["ca.crt"]))
	if _, err := c.dynamic.Resource(APIServicesResource).Patch(context.Background(), testAPIService, "application/merge-patch+json",
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// writes counts the Secret creates/updates and APIService patches.
func (c *cluster) writes() (secretWrites, apiServicePatches int) {
	for _, action := range c.kube.Actions() {
		if action.GetResource().Resource == "secrets" && (action.GetVerb() == "create" || action.GetVerb() == "update") {
			secretWrites++
		}
	}
	for _, action := range c.dynamic.Actions() {
		if action.GetVerb() == "patch" {
			apiServicePatches++
		}
	}
	return secretWrites, apiServicePatches
}

// checkServes fails unless r serves the Secret's certificate, one that the
// APIService's caBundle verifies for the Service's DNS name at now.
func checkServes(t *testing.T, c *cluster, r *replica, now time.Time) *x509.Certificate {
	t.Helper()
	secret := c.secret(t)
	cert, key := r.CurrentCertKeyContent()
	if !bytes.Equal(cert, secret.Data[corev1.TLSCertKey]) || !bytes.Equal(key, secret.Data[corev1.TLSPrivateKeyKey]) {
		t.Fatal("the replica does not serve the certificate the Secret holds")
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		t.Fatalf("served pair: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(c.caBundle(t)) {
		t.Fatal("the APIService has no caBundle")
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: testHost, Roots: roots, CurrentTime: now}); err != nil {
		t.Fatalf("the caBundle does not verify the served certificate: %v", err)
	}
	return pair.Leaf
}

func caCerts(t *testing.T, pemBytes []byte) []*x509.Certificate {
	t.Helper()
	certs, err := certutil.ParseCertsPEM(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return certs
}

var start = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func TestIssuesServesAndPublishes(t *testing.T) {
	tests := []struct {
		name           string
		apiServiceSpec map[string]any
		secret         *corev1.Secret
	}{
		{name: "no Secret", apiServiceSpec: map[string]any{"group": "topology.gridview.io"}},
		{name: "empty Secret", apiServiceSpec: map[string]any{"caBundle": base64.StdEncoding.EncodeToString([]byte("stale"))},
			secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testSecret}, Type: corev1.SecretTypeTLS}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var objects []runtime.Object
			if tc.secret != nil {
				objects = append(objects, tc.secret)
			}
			c := newCluster(t, tc.apiServiceSpec, objects...)
			r := c.replica(start)
			if cert, _ := r.CurrentCertKeyContent(); cert != nil {
				t.Fatal("a certificate is served before the first sync")
			}
			if err := r.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			leaf := checkServes(t, c, r, start)
			if got := leaf.DNSNames; len(got) != 2 || got[0] != testHosts[0] || got[1] != testHosts[1] {
				t.Errorf("DNS names %v, want %v", got, testHosts)
			}
			if secret := c.secret(t); secret.Type != corev1.SecretTypeTLS || len(secret.Data[caKeyKey]) == 0 {
				t.Errorf("Secret of type %q with keys %v, want kubernetes.io/tls with the CA key", secret.Type, secret.Data)
			}
			if r.enqueued != 1 {
				t.Errorf("listeners told %d times, want once", r.enqueued)
			}
		})
	}
}

// A second replica, or a restarted one, serves the certificate in the
// Secret and writes nothing.
func TestReusesTheSecret(t *testing.T) {
	c := newCluster(t, map[string]any{})
	first := c.replica(start)
	if err := first.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantCert, _ := first.CurrentCertKeyContent()
	c.kube.ClearActions()
	c.dynamic.ClearActions()

	second := c.replica(start.Add(time.Hour))
	if err := second.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cert, _ := second.CurrentCertKeyContent(); !bytes.Equal(cert, wantCert) {
		t.Error("the second replica serves another certificate than the first")
	}
	if secretWrites, patches := c.writes(); secretWrites != 0 || patches != 0 {
		t.Errorf("%d Secret writes and %d APIService patches, want none", secretWrites, patches)
	}
}

func TestRenewsBeforeExpiry(t *testing.T) {
	tests := []struct {
		name      string
		after     time.Duration
		wantLeaf  bool // a new serving certificate
		wantCAs   int  // CAs in the bundle; more than one after a CA renewal
		wantPatch bool
	}{
		{name: "fresh leaf", after: 59 * 24 * time.Hour, wantCAs: 1},
		{name: "leaf in the last third of its lifetime", after: 61 * 24 * time.Hour, wantLeaf: true, wantCAs: 1},
		{name: "expired leaf", after: 91 * 24 * time.Hour, wantLeaf: true, wantCAs: 1},
		{name: "CA in the last third of its lifetime", after: 2*365*24*time.Hour + 24*time.Hour, wantLeaf: true, wantCAs: 2, wantPatch: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, map[string]any{})
			r := c.replica(start)
			if err := r.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			before := c.secret(t)
			c.kube.ClearActions()
			c.dynamic.ClearActions()
			r.enqueued = 0

			now := start.Add(tc.after)
			r.clock.SetTime(now)
			if err := r.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			after := c.secret(t)
			if renewed := !bytes.Equal(before.Data["tls.crt"], after.Data["tls.crt"]); renewed != tc.wantLeaf {
				t.Errorf("leaf renewed: %t, want %t", renewed, tc.wantLeaf)
			}
			if tc.wantLeaf && r.enqueued != 1 {
				t.Errorf("listeners told %d times of the new leaf, want once", r.enqueued)
			}
			cas := caCerts(t, after.Data["ca.crt"])
			if len(cas) != tc.wantCAs {
				t.Fatalf("%d CAs in the bundle, want %d", len(cas), tc.wantCAs)
			}
			if tc.wantCAs > 1 && !cas[1].Equal(caCerts(t, before.Data["ca.crt"])[0]) {
				t.Error("the renewed bundle does not keep the previous CA, whose leaves replicas may still serve")
			}
			if _, patches := c.writes(); (patches > 0) != tc.wantPatch {
				t.Errorf("%d APIService patches, want a patch: %t", patches, tc.wantPatch)
			}
			checkServes(t, c, r, now)
		})
	}
}

// Replicas that find the Secret due at the same time both try to write it;
// the one that loses uses what the winner wrote.
func TestLosesWriteRacesGracefully(t *testing.T) {
	secrets := corev1.SchemeGroupVersion.WithResource("secrets")
	tests := []struct {
		name   string
		verb   string
		seeded bool // a Secret exists, due for renewal
		err    error
	}{
		{name: "create", verb: "create", err: apierrors.NewAlreadyExists(corev1.Resource("secrets"), testSecret)},
		{name: "update", verb: "update", seeded: true, err: apierrors.NewConflict(corev1.Resource("secrets"), testSecret, nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, map[string]any{})
			now := start
			if tc.seeded {
				if err := c.replica(start).RunOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
				now = start.Add(80 * 24 * time.Hour)
			}
			var winner []byte
			c.kube.PrependReactor(tc.verb, "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
				if winner != nil {
					return false, nil, nil
				}
				// The winner's write lands between the loser's read and write.
				var stored *bundle
				if tc.seeded {
					obj, err := c.kube.Tracker().Get(secrets, testNamespace, testSecret)
					if err != nil {
						t.Fatal(err)
					}
					if stored, err = parseBundle(obj.(*corev1.Secret).Data); err != nil {
						t.Fatal(err)
					}
				}
				next, _, err := renew(stored, testHosts, now)
				if err != nil {
					t.Fatal(err)
				}
				winner = next.certPEM
				secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testSecret},
					Type: corev1.SecretTypeTLS, Data: next.data()}
				if tc.seeded {
					err = c.kube.Tracker().Update(secrets, secret, testNamespace)
				} else {
					err = c.kube.Tracker().Create(secrets, secret, testNamespace)
				}
				if err != nil {
					t.Fatal(err)
				}
				return true, nil, tc.err
			})
			loser := c.replica(now)
			if err := loser.RunOnce(context.Background()); err != nil {
				t.Fatalf("the replica that lost the race: %v", err)
			}
			if winner == nil {
				t.Fatal("no write raced")
			}
			if served, _ := loser.CurrentCertKeyContent(); !bytes.Equal(served, winner) {
				t.Error("the replica that lost the race serves another certificate than the winner")
			}
			checkServes(t, c, loser, now)
		})
	}
}

func TestRepairsTheCABundle(t *testing.T) {
	c := newCluster(t, map[string]any{})
	r := c.replica(start)
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Someone re-applies the APIService without a caBundle.
	if _, err := c.dynamic.Resource(APIServicesResource).Patch(context.Background(), testAPIService, "application/merge-patch+json",
		[]byte(`{"spec":{"caBundle":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	c.dynamic.ClearActions()
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.caBundle(t), c.secret(t).Data["ca.crt"]) {
		t.Error("the caBundle was not restored")
	}
	patch := c.dynamic.Actions()[1].(k8stesting.PatchAction).GetPatch()
	if !bytes.Contains(patch, []byte(`"resourceVersion"`)) || bytes.Contains(patch, []byte("insecureSkipTLSVerify")) {
		t.Errorf("patch %s, want one of spec.caBundle with a resourceVersion precondition", patch)
	}
}

// An APIService that is not registered yet is reported, and the
// certificate served all the same.
func TestServesWithoutTheAPIService(t *testing.T) {
	c := newCluster(t, map[string]any{})
	r := c.replica(start)
	r.cfg.APIService = "v1.missing.example.com"
	if err := r.RunOnce(context.Background()); !apierrors.IsNotFound(err) {
		t.Fatalf("error %v, want the APIService's NotFound", err)
	}
	if cert, _ := r.CurrentCertKeyContent(); !bytes.Equal(cert, c.secret(t).Data["tls.crt"]) {
		t.Error("the Secret's certificate is not served")
	}
}
