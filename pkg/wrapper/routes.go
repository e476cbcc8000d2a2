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
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// route is what a request path names.
type route struct {
	kind      *kind
	namespace string
	name      string
}

// parseRoute reads /api/v1/[namespaces/<ns>/]<resource>[/<name>] and
// /apis/<group>/<version>/[namespaces/<ns>/]<resource>[/<name>].
func parseRoute(path string) (route, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// An empty segment names nothing: /api/v1/namespaces//services is not
	// every namespace's Services.
	if slices.Contains(parts, "") {
		return route{}, false
	}
	var gv schema.GroupVersion
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		gv, parts = schema.GroupVersion{Version: parts[1]}, parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gv, parts = schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:]
	default:
		return route{}, false
	}
	var r route
	if len(parts) >= 3 && parts[0] == "namespaces" {
		r.namespace, parts = parts[1], parts[2:]
	}
	if len(parts) > 2 {
		return route{}, false
	}
	for _, k := range kinds {
		if k.gvr == gv.WithResource(parts[0]) && (k.namespaced || r.namespace == "") {
			r.kind = k
		}
	}
	if len(parts) == 2 {
		r.name = parts[1]
	}
	return r, r.kind != nil
}

func (r route) key() types.NamespacedName {
	return types.NamespacedName{Namespace: r.namespace, Name: r.name}
}

// forwarded says whether a request goes upstream as it is: discovery only.
// Event writes go upstream as the eventGate admits them; nothing else does:
// the wrapper is not an open proxy.
func forwarded(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	return req.URL.Path == "/version" || parts[0] == "api" && len(parts) <= 2 || parts[0] == "apis" && len(parts) <= 3
}

// writesEvents says whether a request writes Events.
func writesEvents(req *http.Request) bool {
	_, _, _, ok := eventPath(req.URL.Path)
	return ok && req.Method != http.MethodGet
}

// refusal is the answer to a request the wrapper neither serves nor forwards.
func refusal(req *http.Request) error {
	if _, ok := parseRoute(req.URL.Path); ok {
		return apierrors.NewForbidden(schema.GroupResource{}, req.URL.Path,
			fmt.Errorf("gridview-wrapper serves kube-proxy read-only: %s is not allowed", req.Method))
	}
	return apierrors.NewNotFound(schema.GroupResource{}, req.URL.Path)
}
