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

package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/test/e2e/framework"
)

func TestInvalidServiceGridsAreRefused(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	client := gridview.TopologyV1alpha1().ServiceGrids(ns)

	tests := []struct {
		name      string
		mutate    func(*topologyv1alpha1.ServiceGrid)
		wantField string
	}{
		{name: "empty gridUniqKey", mutate: func(sg *topologyv1alpha1.ServiceGrid) { sg.Spec.GridUniqKey = "" }, wantField: "spec.gridUniqKey"},
		{name: "malformed gridUniqKey", mutate: func(sg *topologyv1alpha1.ServiceGrid) { sg.Spec.GridUniqKey = "-bad key" }, wantField: "spec.gridUniqKey"},
		{name: "unknown fallback", mutate: func(sg *topologyv1alpha1.ServiceGrid) { sg.Spec.Fallback = "Nearest" }, wantField: "spec.fallback"},
		{name: "name too long for its Service", mutate: func(sg *topologyv1alpha1.ServiceGrid) { sg.Name = strings.Repeat("x", 60) }, wantField: "metadata.name"},
		{name: "template without ports", mutate: func(sg *topologyv1alpha1.ServiceGrid) { sg.Spec.Template.Ports = nil }, wantField: "spec.template.ports"},
		{name: "port out of range", mutate: func(sg *topologyv1alpha1.ServiceGrid) { sg.Spec.Template.Ports[0].Port = 0 }, wantField: "spec.template.ports[0].port"},
	}
	for _, tc := range tests {
		t.Run("create/"+tc.name, func(t *testing.T) {
			sg := framework.NewServiceGrid("bad")
			tc.mutate(sg)
			_, err := client.Create(ctx, sg, metav1.CreateOptions{})
			expectInvalid(t, err, tc.wantField)
		})
	}

	if _, err := client.Create(ctx, framework.NewServiceGrid("good"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	// Once Ready, the reconciler no longer writes the status, so a read and
	// an update meet no conflict.
	framework.WaitServiceGridReady(t, gridview, ns, "good", 5*time.Second)
	for _, tc := range tests {
		if tc.wantField == "metadata.name" {
			continue // a name cannot change
		}
		t.Run("update/"+tc.name, func(t *testing.T) {
			sg, err := client.Get(ctx, "good", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(sg)
			_, err = client.Update(ctx, sg, metav1.UpdateOptions{})
			expectInvalid(t, err, tc.wantField)
		})
	}
}

func expectInvalid(t *testing.T, err error, wantField string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want 422 Invalid", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if status.Code != http.StatusUnprocessableEntity {
		t.Errorf("code = %d, want 422", status.Code)
	}
	for _, cause := range status.Details.Causes {
		if cause.Field == wantField {
			return
		}
	}
	t.Errorf("causes %+v name no field %s", status.Details.Causes, wantField)
}
