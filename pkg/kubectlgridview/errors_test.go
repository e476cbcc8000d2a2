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

package kubectlgridview

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

func TestAPIErrors(t *testing.T) {
	reviews := v1alpha1.Resource("topologyreviews")
	notFoundService := apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "nope")
	forbidden := apierrors.NewForbidden(reviews, "", errors.New(`node "edge-1" may review only itself`))
	invalid := apierrors.NewInvalid(v1alpha1.SchemeGroupVersion.WithKind("TopologyReview").GroupKind(), "", field.ErrorList{field.Required(field.NewPath("spec", "nodeName"), "")})
	unavailable := apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	// kube-apiserver's answer for a group it does not serve.
	noGroup := apierrors.NewGenericServerResponse(404, "post", reviews, "", "", 0, false)
	// A gridview-apiserver of before TopologyReview serves the group only.
	older := []*metav1.APIResourceList{{GroupVersion: v1alpha1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{{Name: "nodeendpoints", Kind: "NodeEndpoints"}}}}
	for name, tc := range map[string]struct {
		resources []*metav1.APIResourceList
		served    bool
		err       error
		args      []string
		wantError string
	}{
		"group not served, explain":          {err: noGroup, args: []string{"explain", "edge-1", "web"}, wantError: errNotServed.Error()},
		"group not served, routes":           {err: noGroup, args: []string{"routes", "web"}, wantError: errNotServed.Error()},
		"group not served, map":              {err: noGroup, args: []string{"map", "web"}, wantError: errNotServed.Error()},
		"kind not served by an older server": {resources: older, err: noGroup, args: []string{"explain", "edge-1", "web"}, wantError: errNotServed.Error()},
		"APIService unavailable":             {err: unavailable, args: []string{"routes", "web"}, wantError: errNotServed.Error()},
		"unknown Service, the server's 404":  {served: true, err: notFoundService, args: []string{"explain", "edge-1", "nope"}, wantError: notFoundService.Error()},
		"forbidden, the server's message":    {served: true, err: forbidden, args: []string{"explain", "edge-2", "web"}, wantError: forbidden.Error()},
		"forbidden even if discovery lacks":  {err: forbidden, args: []string{"routes", "web"}, wantError: forbidden.Error()},
		"invalid, the server's field paths":  {served: true, err: invalid, args: []string{"explain", "edge-1", "web"}, wantError: invalid.Error()},
		"unavailable while served is itself": {served: true, err: unavailable, args: []string{"routes", "web"}, wantError: unavailable.Error()},
	} {
		t.Run(name, func(t *testing.T) {
			client := fakeTopology(returning(nil, tc.err))
			if !tc.served {
				client.Resources = append(tc.resources, &metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "services", Kind: "Service"}}})
			}
			_, err := run(t, client, nil, tc.args...)
			if err == nil || err.Error() != tc.wantError {
				t.Fatalf("error %v, want %q", err, tc.wantError)
			}
		})
	}
}
