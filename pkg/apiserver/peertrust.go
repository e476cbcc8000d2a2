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
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/controller/servingcert"
)

const (
	// peerTrustTTL bounds how long a rotated caBundle goes unnoticed.
	peerTrustTTL = time.Minute
	// peerTrustRetry spaces the reads of an APIService that gave no trust,
	// so that followers do not ask kube-apiserver once per request.
	peerTrustRetry = 5 * time.Second
	// peerDialTimeout bounds the wait for a leader that is gone: the
	// request is then served here.
	peerDialTimeout = 2 * time.Second
	// A connection to a leader that went silent (its node lost, no reset)
	// is closed after peerPingAfter without a frame and peerPingTimeout
	// without an answer to the ping; reads then fall back to this replica.
	peerPingAfter   = 5 * time.Second
	peerPingTimeout = 2 * time.Second
	// peerHeaderTimeout bounds the wait for a leader that answers pings but
	// not the read (a handler wedged, or queued for long by its API
	// Priority and Fairness or its list slots, as in a relist storm): the
	// read is then served here, a list in this replica's own slots. A
	// watch's headers come as it starts, a node's list in milliseconds.
	peerHeaderTimeout = 10 * time.Second
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

	mu         sync.Mutex
	caBundle   []byte
	serverName string
	transport  http.RoundTripper
	connection *http.Transport // under transport, whose idle connections a new CA closes
	fetched    time.Time       // when the caBundle was last read, or last failed to be
	err        error           // why the last read gave no trust
	refreshing bool
}

func newPeerTrust(credentials *restclient.Config, client dynamic.Interface) *peerTrust {
	return &peerTrust{credentials: credentials, apiServices: client.Resource(servingcert.APIServicesResource)}
}

// roundTripper returns the transport to the leader. Once it has one, a stale
// trust is refreshed in the background and the transport kept meanwhile, so
// that a slow or failing kube-apiserver never holds up a read.
func (p *peerTrust) roundTripper(ctx context.Context) (http.RoundTripper, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.transport != nil {
		if time.Since(p.fetched) >= peerTrustTTL && !p.refreshing {
			p.refreshing = true
			go p.refresh(context.WithoutCancel(ctx))
		}
		return p.transport, nil
	}
	if p.err != nil && time.Since(p.fetched) < peerTrustRetry {
		return nil, p.err
	}
	p.err = p.fetchLocked(ctx)
	return p.transport, p.err
}

// refresh reads the APIService without the lock, so that reads go on with
// the transport they have meanwhile.
func (p *peerTrust) refresh(ctx context.Context) {
	caBundle, serverName, err := p.read(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshing, p.fetched = false, time.Now()
	if err == nil {
		err = p.useLocked(caBundle, serverName)
	}
	if err != nil {
		klog.ErrorS(err, "Keeping the trust in the leader read before")
	}
}

// fetchLocked reads the trust for a first transport: the reads that wait
// for it have nothing to use meanwhile.
func (p *peerTrust) fetchLocked(ctx context.Context) error {
	p.fetched = time.Now()
	caBundle, serverName, err := p.read(ctx)
	if err != nil {
		return err
	}
	return p.useLocked(caBundle, serverName)
}

// read returns the APIService's caBundle and the DNS name of its Service.
func (p *peerTrust) read(ctx context.Context) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, peerDialTimeout)
	defer cancel()
	apiService, err := p.apiServices.Get(ctx, apiServiceName, metav1.GetOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("reading APIService %s for the leader's CA: %w", apiServiceName, err)
	}
	encoded, _, _ := unstructured.NestedString(apiService.Object, "spec", "caBundle")
	namespace, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "namespace")
	name, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "name")
	caBundle, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(caBundle) == 0 || namespace == "" || name == "" {
		return nil, "", errors.New("APIService " + apiServiceName + " names no Service with a caBundle to verify the leader by")
	}
	return caBundle, name + "." + namespace + ".svc", nil
}

// useLocked builds a new transport when the caBundle changed.
func (p *peerTrust) useLocked(caBundle []byte, serverName string) error {
	if p.transport != nil && bytes.Equal(caBundle, p.caBundle) && serverName == p.serverName {
		return nil
	}
	transport, connection, err := p.build(caBundle, serverName)
	if err != nil {
		return err
	}
	if p.connection != nil {
		p.connection.CloseIdleConnections()
	}
	p.caBundle, p.serverName, p.transport, p.connection = caBundle, serverName, transport, connection
	return nil
}

// build makes a transport of its own rather than client-go's cached one:
// its HTTP/2 health check is what notices a leader gone silent.
func (p *peerTrust) build(caBundle []byte, serverName string) (http.RoundTripper, *http.Transport, error) {
	cfg := restclient.CopyConfig(p.credentials)
	cfg.TLSClientConfig = restclient.TLSClientConfig{
		CAData: caBundle, ServerName: serverName,
		CertData: cfg.CertData, KeyData: cfg.KeyData, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile,
	}
	tlsConfig, err := restclient.TLSConfigFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the TLS configuration for the leader: %w", err)
	}
	connection := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: peerDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   peerDialTimeout,
		ResponseHeaderTimeout: peerHeaderTimeout,
		ForceAttemptHTTP2:     true,
		HTTP2:                 &http.HTTP2Config{SendPingTimeout: peerPingAfter, PingTimeout: peerPingTimeout},
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
	}
	// The follower's own credentials: a token (refreshed from its file) or
	// a client certificate, as its kubeconfig says.
	transport, err := restclient.HTTPWrappersForConfig(cfg, connection)
	if err != nil {
		return nil, nil, fmt.Errorf("building the transport to the leader: %w", err)
	}
	return transport, connection, nil
}
