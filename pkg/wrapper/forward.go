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
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// NewForwarder sends the requests the wrapper forwards (discovery,
// kube-proxy's Events) upstream with the wrapper's credentials. A local
// caller's own credentials and Impersonate-* headers are dropped: the node's
// identity may impersonate nobody, and must not be made to try. So are the
// front proxy's X-Remote-* identity headers: an upstream that trusts the
// wrapper's client certificate as a front proxy would take them for the
// user.
func NewForwarder(config *rest.Config) (http.Handler, error) {
	transport, err := rest.TransportFor(config)
	if err != nil {
		return nil, fmt.Errorf("creating the upstream transport: %w", err)
	}
	target, err := url.Parse(config.Host)
	if err != nil {
		return nil, fmt.Errorf("upstream address %q: %w", config.Host, err)
	}
	return &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			for key := range r.Out.Header {
				if callerIdentity(key) {
					delete(r.Out.Header, key)
				}
			}
		},
	}, nil
}

// callerIdentity says whether a header carries an identity of the caller's:
// credentials, impersonation or a front proxy's user.
func callerIdentity(key string) bool {
	key = strings.ToLower(key)
	return key == "authorization" || strings.HasPrefix(key, "impersonate-") || strings.HasPrefix(key, "x-remote-")
}
