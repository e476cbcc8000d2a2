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
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Bad query parameters are a 400 naming the parameter, as kube-proxy's
// client, or anyone on the node, may send them; never a silent accept.
func TestServerRefusesBadParameters(t *testing.T) {
	_, client := newTestServer(t, runtime.ContentTypeJSON)
	tests := []struct {
		name   string
		params map[string]string
		want   string
	}{
		{name: "timeoutSeconds=-1", params: map[string]string{"watch": "true", "timeoutSeconds": "-1"}, want: "timeoutSeconds"},
		{name: "timeoutSeconds=abc", params: map[string]string{"watch": "true", "timeoutSeconds": "abc"}, want: "timeoutSeconds"},
		{name: "timeoutSeconds past int64", params: map[string]string{"watch": "true", "timeoutSeconds": "99999999999999999999"}, want: "timeoutSeconds"},
		{name: "limit=-5", params: map[string]string{"limit": "-5"}, want: "limit"},
		{name: "limit=abc", params: map[string]string{"limit": "abc"}, want: "limit"},
		{name: "an unknown field selector", params: map[string]string{"fieldSelector": "spec.nodeName=x"}, want: "spec.nodeName"},
		{name: "an unknown field selector on a watch", params: map[string]string{"watch": "true", "fieldSelector": "status.phase=x"}, want: "status.phase"},
		{name: "a field selector that does not parse", params: map[string]string{"fieldSelector": "a=b=c"}, want: "fieldSelector"},
		{name: "a label selector that does not parse", params: map[string]string{"labelSelector": "!!"}, want: "labelSelector"},
		{name: "resourceVersion=abc", params: map[string]string{"resourceVersion": "abc"}, want: "resourceVersion"},
		{name: "a continue token", params: map[string]string{"limit": "1", "continue": "eyJydiI6MX0"}, want: "continue"},
		{name: "a huge continue token", params: map[string]string{"continue": strings.Repeat("A", 64*1024)}, want: "continue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := client.CoreV1().RESTClient().Get().Resource("services")
			for k, v := range tc.params {
				req.Param(k, v)
			}
			err := req.Do(t.Context()).Error()
			if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v: %v, want 400 naming %s", tc.params, err, tc.want)
			}
			if len(err.Error()) > 1024 {
				t.Errorf("the error is %d bytes long", len(err.Error()))
			}
		})
	}
}

// Names with dots are names: a Service or slice named with dots is served.
func TestServerServesNamesWithDots(t *testing.T) {
	state, client := newTestServer(t, runtime.ContentTypeJSON)
	state.Set(testService("echo.v2", "10.96.0.11", nil))
	svc, err := client.CoreV1().Services("demo").Get(t.Context(), "echo.v2", metav1.GetOptions{})
	if err != nil || svc.Name != "echo.v2" {
		t.Fatalf("get echo.v2: %v, %v", svc, err)
	}
}

// FuzzRoutes: whatever path and method a client on the node sends, the
// wrapper neither panics nor forwards anything but discovery as it is, nor
// takes anything but a write of Events for one (which the eventGate checks),
// and what it serves is a kind it serves.
func FuzzRoutes(f *testing.F) {
	for _, seed := range []string{
		"/api/v1/services", "/api/v1/namespaces/demo/services/echo", "/apis/discovery.k8s.io/v1/endpointslices",
		"/api/v1/namespaces/demo/events", "/apis/events.k8s.io/v1/namespaces/demo/events/x", "/api", "/apis/x",
		"/", "", "//", "/api/v1/namespaces//services", "/api/v1/namespaces/demo/secrets", "/version",
		"/api/v1/namespaces/demo/services/echo/proxy/x", "/api/v1/nodes/edge-1/proxy", "/apis/discovery.k8s.io",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			f.Add(method, seed)
		}
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		r, ok := parseRoute(path)
		if ok && (r.kind == nil || strings.Contains(r.name, "/") || strings.Contains(r.namespace, "/")) {
			t.Fatalf("parseRoute(%q) = %+v", path, r)
		}
		req := &http.Request{Method: method, URL: &url.URL{Path: path}}
		parts := strings.Split(strings.Trim(path, "/"), "/")
		discovery := method == http.MethodGet && (path == "/version" || len(parts) <= 3 && (parts[0] == "api" || parts[0] == "apis"))
		if forwarded(req) && !discovery {
			t.Fatalf("%s %q is forwarded upstream", method, path)
		}
		if writesEvents(req) && (method == http.MethodGet || !slicesContainsEvents(parts)) {
			t.Fatalf("%s %q is taken for an Event write", method, path)
		}
	})
}

// slicesContainsEvents says whether a path names Events in a namespace.
func slicesContainsEvents(parts []string) bool {
	for i, part := range parts {
		if part == "events" && i >= 2 && parts[i-2] == "namespaces" {
			return true
		}
	}
	return false
}

// The server answers any path without panicking, and a path naming nothing
// it serves is a 404, neither served nor forwarded. The state is synced, so
// that each path reaches the routes rather than the 503 of an empty state.
func TestServerAnswersHostilePaths(t *testing.T) {
	state := NewState(1, nil)
	state.Set(testService("echo", "10.96.0.10", nil))
	state.MarkSynced()
	server := NewServer("edge-1", state, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tc := range []struct {
		name string
		path string
		want int
	}{
		{name: "a served Service, for reference", path: "/api/v1/namespaces/demo/services/echo", want: http.StatusOK},
		{name: "the root", path: "/", want: http.StatusNotFound},
		{name: "an empty path", path: "//", want: http.StatusNotFound},
		{name: "an empty namespace", path: "/api/v1/namespaces//services", want: http.StatusNotFound},
		{name: "namespaces", path: "/api/v1/namespaces", want: http.StatusNotFound},
		{name: "a namespace", path: "/api/v1/namespaces/demo", want: http.StatusNotFound},
		{name: "a kind not served", path: "/api/v1/namespaces/demo/secrets", want: http.StatusNotFound},
		{name: "a subpath of a name", path: "/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices/a/b", want: http.StatusNotFound},
		{name: "a missing Service", path: "/api/v1/namespaces/demo/services/missing", want: http.StatusNotFound},
		{name: "a huge name", path: "/api/v1/services/" + strings.Repeat("x", 10000), want: http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://wrapper"+tc.path, nil))
			if rec.Code != tc.want {
				t.Errorf("GET %.100s: %d %.200s, want %d", tc.path, rec.Code, rec.Body, tc.want)
			}
		})
	}
}
