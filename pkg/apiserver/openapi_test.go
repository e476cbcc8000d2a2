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
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	generatedopenapi "github.com/gridview/gridview/generated/openapi"
)

// Every type a served definition refers to must itself be defined: the server
// refuses to start otherwise ("cannot find model definition").
func TestOpenAPIDefinitionsAreComplete(t *testing.T) {
	defs := generatedopenapi.GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) })
	for _, model := range []string{
		v1alpha1.ServiceGrid{}.OpenAPIModelName(), v1alpha1.ServiceGridList{}.OpenAPIModelName(),
		v1alpha1.NodeEndpoints{}.OpenAPIModelName(), v1alpha1.NodeEndpointsList{}.OpenAPIModelName(),
	} {
		if _, ok := defs[model]; !ok {
			t.Errorf("no OpenAPI definition for %s", model)
		}
	}
	for name, def := range defs {
		for _, dep := range def.Dependencies {
			if _, ok := defs[dep]; !ok {
				t.Errorf("%s refers to %s, which has no definition", name, dep)
			}
		}
	}
}
