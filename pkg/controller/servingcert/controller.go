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

// Package servingcert lets gridview-apiserver run with a verified chain out
// of the box: it keeps a CA of its own and the serving certificate it issues
// in one Secret, serves that certificate, and makes the APIService trust the
// CA, as cert-manager's CA issuer and cainjector would.
package servingcert

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// resyncPeriod bounds how long a replica serves a leaf another replica
	// has replaced (both stay valid for weeks) and how long a caBundle
	// overwritten by someone else stays wrong.
	resyncPeriod = time.Minute
	// retryPeriod is short because until the first sync succeeds the server
	// has no certificate to serve.
	retryPeriod = 5 * time.Second
	// writeAttempts bounds the rereads after another replica wrote the
	// Secret first.
	writeAttempts = 3
	fieldManager  = "gridview-apiserver"
)

// APIServicesResource is read through the dynamic client: client-go has no
// typed client for the aggregator's API, and one field does not justify
// depending on k8s.io/kube-aggregator.
var APIServicesResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

var (
	_ dynamiccertificates.CertKeyContentProvider = &Controller{}
	_ dynamiccertificates.ControllerRunner       = &Controller{}
)

// Config names what the Controller manages.
type Config struct {
	SecretNamespace, SecretName string
	// Hosts are the serving certificate's DNS names: those of the Service
	// the APIService points at.
	Hosts []string
	// APIService, unless empty, gets the CA bundle as its spec.caBundle.
	APIService string
}

// Controller is the serving certificate provider of the generic API server:
// its secure serving starts it and reloads the TLS config whenever it
// announces a new certificate, so that rotation needs no restart. Every
// replica runs one on the same Secret; all serve what the Secret holds.
type Controller struct {
	cfg     Config
	kube    kubernetes.Interface
	dynamic dynamic.Interface
	clock   clock.Clock

	served    atomic.Pointer[certKey]
	listeners []dynamiccertificates.Listener
}

type certKey struct {
	cert, key []byte
	leaf      *x509.Certificate
}

// NewController returns a Controller; the server runs it.
func NewController(kube kubernetes.Interface, dyn dynamic.Interface, cfg Config) *Controller {
	return &Controller{cfg: cfg, kube: kube, dynamic: dyn, clock: clock.RealClock{}}
}

// Name names the certificate in the server's logs.
func (c *Controller) Name() string {
	return "secret::" + c.cfg.SecretNamespace + "/" + c.cfg.SecretName
}

// AddListener registers a listener told of every new certificate. The
// server adds its listeners before it runs the controller.
func (c *Controller) AddListener(listener dynamiccertificates.Listener) {
	c.listeners = append(c.listeners, listener)
}

// CurrentCertKeyContent returns the PEM certificate and key being served,
// nil until the first sync succeeded: the server refuses handshakes until
// then rather than serve a certificate nobody trusts.
func (c *Controller) CurrentCertKeyContent() ([]byte, []byte) {
	served := c.served.Load()
	if served == nil {
		return nil, nil
	}
	return served.cert, served.key
}

// Run syncs until ctx ends, sooner after a failure.
func (c *Controller) Run(ctx context.Context, _ int) {
	for {
		interval := resyncPeriod
		if err := c.RunOnce(ctx); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Syncing the serving certificate", "secret", klog.KRef(c.cfg.SecretNamespace, c.cfg.SecretName))
			interval = retryPeriod
		}
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(interval):
		}
	}
}

// RunOnce makes the Secret hold a CA and a serving certificate neither of
// which is due for renewal, publishes the CA bundle in the APIService, then
// serves the certificate, even when the APIService cannot be read or
// patched: it may not be registered yet, and serving does not depend on it.
func (c *Controller) RunOnce(ctx context.Context) error {
	var errs []error
	// The APIService is read before the Secret: its resourceVersion, sent
	// with the patch, makes the patch fail if another replica renewed the CA
	// and published it after this replica read the Secret.
	var apiService *unstructured.Unstructured
	if c.cfg.APIService != "" {
		var err error
		if apiService, err = c.dynamic.Resource(APIServicesResource).Get(ctx, c.cfg.APIService, metav1.GetOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("reading APIService %s: %w", c.cfg.APIService, err))
		}
	}
	current, err := c.ensureSecret(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if apiService == nil {
		// Served even when the APIService cannot be read: it may not be
		// registered yet, and signingGrace keeps a new CA's leaves out of the
		// Secret until it has had time to be published.
		c.serve(current)
		return errors.Join(errs...)
	}
	published, err := c.publishCABundle(ctx, apiService, current.caBundlePEM)
	if err != nil {
		errs = append(errs, err)
	}
	// What the Secret holds is what the other replicas serve, but not a leaf
	// that the caBundle in force does not verify: the aggregator would
	// refuse it, while the previous leaf is still valid.
	if c.verifies(published, current.leaf) || !c.verifies(published, c.servedLeaf()) {
		c.serve(current)
	} else {
		errs = append(errs, fmt.Errorf("the caBundle of APIService %s does not verify the Secret's certificate yet: "+
			"still serving the previous one", c.cfg.APIService))
	}
	return errors.Join(errs...)
}

// verifies reports whether caBundle verifies leaf for the Service's name now.
func (c *Controller) verifies(caBundle []byte, leaf *x509.Certificate) bool {
	roots := x509.NewCertPool()
	if leaf == nil || !roots.AppendCertsFromPEM(caBundle) {
		return false
	}
	_, err := leaf.Verify(x509.VerifyOptions{DNSName: c.cfg.Hosts[0], Roots: roots, CurrentTime: c.clock.Now()})
	return err == nil
}

func (c *Controller) servedLeaf() *x509.Certificate {
	if served := c.served.Load(); served != nil {
		return served.leaf
	}
	return nil
}

// ensureSecret returns the Secret's bundle, renewed and written first if
// needed. Replicas race to write it; the loser reads and uses the winner's.
func (c *Controller) ensureSecret(ctx context.Context) (*bundle, error) {
	secrets := c.kube.CoreV1().Secrets(c.cfg.SecretNamespace)
	for attempt := 1; ; attempt++ {
		secret, err := secrets.Get(ctx, c.cfg.SecretName, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s/%s: %w", c.cfg.SecretNamespace, c.cfg.SecretName, err)
		}
		var stored *bundle
		switch {
		case err != nil:
			secret = nil
		case len(secret.Data) > 0:
			// Never replaced, only an empty one filled: a user may have
			// seeded it, and a new CA would drop at once the one the other
			// replicas' leaves chain to. Run logs the error as one; fixing or
			// deleting the Secret gets it used or issued anew, and meanwhile
			// the certificate served stays.
			if stored, err = parseBundle(secret.Data); err != nil {
				return nil, fmt.Errorf("the Secret %s/%s holds no usable CA; leaving it alone until it is fixed or deleted: %w",
					c.cfg.SecretNamespace, c.cfg.SecretName, err)
			}
		}
		next, changed, err := renew(stored, c.cfg.Hosts, c.clock.Now())
		if err != nil {
			return nil, err
		}
		if !changed {
			return next, nil
		}
		err = c.writeSecret(ctx, secret, next)
		switch {
		case err == nil:
			klog.InfoS("Issued a serving certificate", "secret", klog.KRef(c.cfg.SecretNamespace, c.cfg.SecretName),
				"hosts", c.cfg.Hosts, "notAfter", next.leaf.NotAfter, "ca", next.cas[0].Subject.CommonName, "caNotAfter", next.cas[0].NotAfter)
			return next, nil
		case (apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err)) && attempt < writeAttempts:
			continue
		default:
			return nil, err
		}
	}
}

// writeSecret creates the Secret, or updates the one read, which fails with
// a conflict if another replica has written it since.
func (c *Controller) writeSecret(ctx context.Context, existing *corev1.Secret, b *bundle) error {
	secrets := c.kube.CoreV1().Secrets(c.cfg.SecretNamespace)
	if existing == nil {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: c.cfg.SecretNamespace,
				Name:      c.cfg.SecretName,
				Labels:    map[string]string{"app.kubernetes.io/managed-by": fieldManager},
			},
			Type: corev1.SecretTypeTLS,
			Data: b.data(),
		}
		if _, err := secrets.Create(ctx, secret, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("creating Secret %s/%s: %w", c.cfg.SecretNamespace, c.cfg.SecretName, err)
		}
		return nil
	}
	secret := existing.DeepCopy()
	secret.Data = b.data()
	if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("updating Secret %s/%s: %w", c.cfg.SecretNamespace, c.cfg.SecretName, err)
	}
	return nil
}

// publishCABundle sets the APIService's spec.caBundle and nothing else, and
// returns the caBundle in force afterwards: the one read if the patch
// failed.
func (c *Controller) publishCABundle(ctx context.Context, apiService *unstructured.Unstructured, caBundle []byte) ([]byte, error) {
	want := base64.StdEncoding.EncodeToString(caBundle)
	have, _, _ := unstructured.NestedString(apiService.Object, "spec", "caBundle")
	if have == want {
		return caBundle, nil
	}
	// Undecodable means none the aggregator can use.
	inForce, _ := base64.StdEncoding.DecodeString(have)
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": apiService.GetResourceVersion()},
		"spec":     map[string]any{"caBundle": want},
	})
	if err != nil {
		return inForce, fmt.Errorf("encoding the caBundle patch: %w", err)
	}
	if _, err := c.dynamic.Resource(APIServicesResource).Patch(ctx, c.cfg.APIService, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
		return inForce, fmt.Errorf("setting the caBundle of APIService %s: %w", c.cfg.APIService, err)
	}
	klog.InfoS("Published the serving CA as the APIService's caBundle", "apiService", c.cfg.APIService)
	return caBundle, nil
}

func (c *Controller) serve(b *bundle) {
	if served := c.served.Load(); served != nil && bytes.Equal(served.cert, b.certPEM) && bytes.Equal(served.key, b.keyPEM) {
		return
	}
	c.served.Store(&certKey{cert: b.certPEM, key: b.keyPEM, leaf: b.leaf})
	klog.InfoS("Serving a new certificate", "name", c.Name(), "notAfter", b.leaf.NotAfter)
	for _, listener := range c.listeners {
		listener.Enqueue()
	}
}
