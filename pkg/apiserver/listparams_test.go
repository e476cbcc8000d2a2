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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

func TestListParametersAreNamedWhenBad(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	handler := withListParameters(next)
	tests := []struct {
		name, verb, query string
		wantCode          int
		want              string
	}{
		{name: "a good watch", verb: "watch", query: "watch=true&timeoutSeconds=30&fieldSelector=nodeName%3Dedge-1", wantCode: http.StatusOK},
		{name: "timeoutSeconds=-1", verb: "watch", query: "watch=true&timeoutSeconds=-1", wantCode: http.StatusBadRequest, want: "timeoutSeconds"},
		{name: "timeoutSeconds=abc", verb: "watch", query: "watch=true&timeoutSeconds=abc", wantCode: http.StatusBadRequest, want: "timeoutSeconds"},
		{name: "limit=-5", verb: "list", query: "limit=-5", wantCode: http.StatusBadRequest, want: "limit"},
		{name: "limit=abc", verb: "list", query: "limit=abc&labelSelector=app%3Decho", wantCode: http.StatusBadRequest, want: "limit"},
		{name: "a label selector that does not parse", verb: "list", query: "labelSelector=%21%21", wantCode: http.StatusBadRequest, want: "labelSelector"},
		// Other verbs have other parameters: theirs to check.
		{name: "a get", verb: "get", query: "timeoutSeconds=abc", wantCode: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/apis/topology.gridview.io/v1alpha1/namespaces/demo/nodeendpoints?"+tc.query, nil)
			req = req.WithContext(genericapirequest.WithRequestInfo(req.Context(), &genericapirequest.RequestInfo{
				IsResourceRequest: true, Verb: tc.verb, APIGroup: "topology.gridview.io", APIVersion: "v1alpha1", Resource: "nodeendpoints",
			}))
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%s: %d %s, want %d naming %q", tc.query, rec.Code, rec.Body, tc.wantCode, tc.want)
			}
		})
	}
}
