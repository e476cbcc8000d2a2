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

package apiserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	restclient "k8s.io/client-go/rest"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/controller/servingcert"
)

const (
	// peerTrustTTL bounds how long a rotated caBundle goes unnoticed.
	peerTrustTTL = time.Minute
	// peerDialTimeout bounds the wait for a leader that is gone: the
	// request is then served here.
	peerDialTimeout = 2 * time.Second
)

// apiServiceName is the APIService the aggregator routes gridview's group by.
var apiServiceName = v1alpha1.SchemeGroupVersion.Version + "." + v1alpha1.GroupName

// peerTrust builds the transport a replica reaches the leader with. It trusts
// the leader exactly as kube-apiserver's aggregator does: the APIService's
// caBundle, for the DNS name of its Service. So a Lease pointing elsewhere
// gets neither the request nor this replica's credentials, which are its
// kube-apiserver ones (--kubeconfig): the leader authenticates and
// authorizes them as it does every caller.
type peerTrust struct {
	credentials *restclient.Config
	apiServices dynamic.NamespaceableResourceInterface

	mu        sync.Mutex
	caBundle  []byte
	transport http.RoundTripper
	fetched   time.Time
}

func newPeerTrust(credentials *restclient.Config, client dynamic.Interface) *peerTrust {
	return &peerTrust{credentials: credentials, apiServices: client.Resource(servingcert.APIServicesResource)}
}

// roundTripper returns the transport to the leader, refreshed from the
// APIService once its trust is older than peerTrustTTL.
func (p *peerTrust) roundTripper(ctx context.Context) (http.RoundTripper, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.transport != nil && time.Since(p.fetched) < peerTrustTTL {
		return p.transport, nil
	}
	ctx, cancel := context.WithTimeout(ctx, peerDialTimeout)
	defer cancel()
	apiService, err := p.apiServices.Get(ctx, apiServiceName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading APIService %s for the leader's CA: %w", apiServiceName, err)
	}
	encoded, _, _ := unstructured.NestedString(apiService.Object, "spec", "caBundle")
	namespace, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "namespace")
	name, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "name")
	caBundle, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(caBundle) == 0 || namespace == "" || name == "" {
		return nil, errors.New("APIService " + apiServiceName + " names no Service with a caBundle to verify the leader by")
	}
	if p.transport != nil && bytes.Equal(caBundle, p.caBundle) {
		p.fetched = time.Now()
		return p.transport, nil
	}
	cfg := restclient.CopyConfig(p.credentials)
	cfg.TLSClientConfig = restclient.TLSClientConfig{
		CAData:     caBundle,
		ServerName: name + "." + namespace + ".svc",
		CertData:   cfg.CertData, KeyData: cfg.KeyData,
		CertFile: cfg.CertFile, KeyFile: cfg.KeyFile,
	}
	cfg.Timeout = 0 // watches stream for as long as they last
	cfg.Dial = (&net.Dialer{Timeout: peerDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	transport, err := restclient.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the transport to the leader: %w", err)
	}
	p.caBundle, p.transport, p.fetched = caBundle, transport, time.Now()
	return transport, nil
}
