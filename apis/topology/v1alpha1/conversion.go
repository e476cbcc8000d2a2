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

package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// Field selectors each kind supports, besides metadata.name and metadata.namespace.
const (
	FieldNodeName    = "nodeName"
	FieldServiceName = "serviceName"
	FieldGridUniqKey = "spec.gridUniqKey"
)

func addFieldLabelConversionFuncs(scheme *runtime.Scheme) error {
	if err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind("NodeEndpoints"),
		supportedFields("NodeEndpoints", FieldNodeName, FieldServiceName)); err != nil {
		return err
	}
	return scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind("ServiceGrid"),
		supportedFields("ServiceGrid", FieldGridUniqKey))
}

// supportedFields accepts the object-meta field selectors and the given extra
// ones, and names the supported set when a client asks for another.
func supportedFields(kind string, extra ...string) runtime.FieldLabelConversionFunc {
	return func(label, value string) (string, string, error) {
		switch label {
		case "metadata.name", "metadata.namespace":
			return label, value, nil
		}
		for _, f := range extra {
			if label == f {
				return label, value, nil
			}
		}
		return "", "", fmt.Errorf("field label %q is not supported for %s: use metadata.name, metadata.namespace or %v", label, kind, extra)
	}
}
