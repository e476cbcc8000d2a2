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
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestFieldLabelConversions(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		kind    string
		label   string
		wantErr bool
	}{
		{kind: "NodeEndpoints", label: "nodeName"},
		{kind: "NodeEndpoints", label: "serviceName"},
		{kind: "NodeEndpoints", label: "metadata.name"},
		{kind: "NodeEndpoints", label: "metadata.namespace"},
		{kind: "NodeEndpoints", label: "spec.nodeName", wantErr: true},
		{kind: "NodeEndpoints", label: "spec.gridUniqKey", wantErr: true},
		{kind: "ServiceGrid", label: "spec.gridUniqKey"},
		{kind: "ServiceGrid", label: "metadata.name"},
		{kind: "ServiceGrid", label: "nodeName", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.kind+"/"+tc.label, func(t *testing.T) {
			label, value, err := scheme.ConvertFieldLabel(SchemeGroupVersion.WithKind(tc.kind), tc.label, "edge-1")
			if tc.wantErr {
				if err == nil {
					t.Fatalf("field label %q accepted for %s", tc.label, tc.kind)
				}
				return
			}
			if err != nil || label != tc.label || value != "edge-1" {
				t.Fatalf("ConvertFieldLabel = %q, %q, %v; want %q, %q, nil", label, value, err, tc.label, "edge-1")
			}
		})
	}
}

func TestDefaultFallback(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   FallbackPolicy
		want FallbackPolicy
	}{
		{name: "unset is None", in: "", want: FallbackNone},
		{name: "Any is kept", in: FallbackAny, want: FallbackAny},
		{name: "None is kept", in: FallbackNone, want: FallbackNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sg := &ServiceGrid{Spec: ServiceGridSpec{Fallback: tc.in}}
			scheme.Default(sg)
			if sg.Spec.Fallback != tc.want {
				t.Errorf("fallback = %q, want %q", sg.Spec.Fallback, tc.want)
			}
		})
	}
}
