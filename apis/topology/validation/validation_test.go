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

package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gridview/gridview/apis/topology"
)

func validServiceGrid() *topology.ServiceGrid {
	return &topology.ServiceGrid{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo", ResourceVersion: "1"},
		Spec: topology.ServiceGridSpec{
			GridUniqKey: "superedge.io/nodeunit",
			Fallback:    topology.FallbackNone,
			Template: corev1.ServiceSpec{
				Selector: map[string]string{"app": "echo"},
				Ports:    []corev1.ServicePort{{Port: 80}},
			},
		},
	}
}

func TestValidateServiceGrid(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*topology.ServiceGrid)
		// wantErrs are "<type> <field path>" of every expected error, in order.
		wantErrs []string
	}{
		{name: "valid", mutate: func(*topology.ServiceGrid) {}},
		{name: "fallback Any", mutate: func(sg *topology.ServiceGrid) { sg.Spec.Fallback = topology.FallbackAny }},
		{name: "name of 59 characters", mutate: func(sg *topology.ServiceGrid) { sg.Name = strings.Repeat("a", 59) }},
		{name: "several named ports", mutate: func(sg *topology.ServiceGrid) {
			sg.Spec.Template.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}
		}},
		{
			name:     "empty gridUniqKey",
			mutate:   func(sg *topology.ServiceGrid) { sg.Spec.GridUniqKey = "" },
			wantErrs: []string{"FieldValueRequired spec.gridUniqKey"},
		},
		{
			name:     "malformed gridUniqKey",
			mutate:   func(sg *topology.ServiceGrid) { sg.Spec.GridUniqKey = "superedge.io/node unit" },
			wantErrs: []string{"FieldValueInvalid spec.gridUniqKey"},
		},
		{
			name:     "unknown fallback",
			mutate:   func(sg *topology.ServiceGrid) { sg.Spec.Fallback = "Nearest" },
			wantErrs: []string{"FieldValueNotSupported spec.fallback"},
		},
		{
			name:     "empty fallback",
			mutate:   func(sg *topology.ServiceGrid) { sg.Spec.Fallback = "" },
			wantErrs: []string{"FieldValueNotSupported spec.fallback"},
		},
		{
			name:     "name too long for the Service name",
			mutate:   func(sg *topology.ServiceGrid) { sg.Name = strings.Repeat("a", 60) },
			wantErrs: []string{"FieldValueInvalid metadata.name"},
		},
		{
			name:     "name that is no DNS-1035 label",
			mutate:   func(sg *topology.ServiceGrid) { sg.Name = "1echo" },
			wantErrs: []string{"FieldValueInvalid metadata.name"},
		},
		{
			name:     "template without ports",
			mutate:   func(sg *topology.ServiceGrid) { sg.Spec.Template.Ports = nil },
			wantErrs: []string{"FieldValueRequired spec.template.ports"},
		},
		{
			name: "unnamed port among several",
			mutate: func(sg *topology.ServiceGrid) {
				sg.Spec.Template.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Port: 443}}
			},
			wantErrs: []string{"FieldValueRequired spec.template.ports[1].name"},
		},
		{
			name: "duplicate port names",
			mutate: func(sg *topology.ServiceGrid) {
				sg.Spec.Template.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "http", Port: 8080}}
			},
			wantErrs: []string{"FieldValueDuplicate spec.template.ports[1].name"},
		},
		{
			name:     "port out of range",
			mutate:   func(sg *topology.ServiceGrid) { sg.Spec.Template.Ports[0].Port = 70000 },
			wantErrs: []string{"FieldValueInvalid spec.template.ports[0].port"},
		},
		{
			name:     "unknown protocol",
			mutate:   func(sg *topology.ServiceGrid) { sg.Spec.Template.Ports[0].Protocol = "ICMP" },
			wantErrs: []string{"FieldValueNotSupported spec.template.ports[0].protocol"},
		},
		{
			name: "every error at once",
			mutate: func(sg *topology.ServiceGrid) {
				sg.Spec.GridUniqKey = ""
				sg.Spec.Fallback = "Nearest"
				sg.Spec.Template.Ports = nil
			},
			wantErrs: []string{"FieldValueRequired spec.gridUniqKey", "FieldValueNotSupported spec.fallback", "FieldValueRequired spec.template.ports"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sg := validServiceGrid()
			tc.mutate(sg)
			assertErrors(t, ValidateServiceGrid(sg), tc.wantErrs)

			// A name cannot change, so an update never reports it again.
			var wantOnUpdate []string
			for _, want := range tc.wantErrs {
				if !strings.HasSuffix(want, " metadata.name") {
					wantOnUpdate = append(wantOnUpdate, want)
				}
			}
			old := validServiceGrid()
			old.Name = sg.Name
			assertErrors(t, ValidateServiceGridUpdate(sg, old), wantOnUpdate)
		})
	}
}

func TestValidateServiceGridStatusUpdate(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name     string
		status   topology.ServiceGridStatus
		wantErrs []string
	}{
		{name: "empty", status: topology.ServiceGridStatus{}},
		{name: "ready", status: topology.ServiceGridStatus{
			ServiceName: "echo-svc", ObservedGeneration: 2,
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ServiceSynced", LastTransitionTime: now}},
		}},
		{name: "negative observedGeneration", status: topology.ServiceGridStatus{ObservedGeneration: -1},
			wantErrs: []string{"FieldValueInvalid status.observedGeneration"}},
		{name: "invalid serviceName", status: topology.ServiceGridStatus{ServiceName: "Echo_svc"},
			wantErrs: []string{"FieldValueInvalid status.serviceName"}},
		{name: "condition without reason", status: topology.ServiceGridStatus{
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, LastTransitionTime: now}},
		}, wantErrs: []string{"FieldValueRequired status.conditions[0].reason"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validServiceGrid()
			sg := validServiceGrid()
			sg.Status = tc.status
			assertErrors(t, ValidateServiceGridStatusUpdate(sg, old), tc.wantErrs)
		})
	}
}

func TestValidateServiceGridNamePrefix(t *testing.T) {
	if errs := ValidateServiceGridName("echo-", true); len(errs) != 0 {
		t.Errorf("generateName prefix echo- refused: %v", errs)
	}
	if errs := ValidateServiceGridName(strings.Repeat("a", 59), true); len(errs) == 0 {
		t.Error("generateName prefix of 59 characters accepted, but no character is left for the generated part")
	}
}

func assertErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	var got []string
	for _, err := range errs {
		got = append(got, string(err.Type)+" "+err.Field)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n got %q\nwant %q\nfull: %v", got, want, errs)
	}
}
