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

package servicegrid

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gridview/gridview/apis/topology"
)

func serviceGrid(generation int64, key string) *topology.ServiceGrid {
	return &topology.ServiceGrid{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo", Generation: generation, Labels: map[string]string{"app": "echo"}},
		Spec: topology.ServiceGridSpec{
			GridUniqKey: key,
			Fallback:    topology.FallbackNone,
			Template:    corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		},
		Status: topology.ServiceGridStatus{ServiceName: "echo-svc", ObservedGeneration: generation},
	}
}

func TestPrepareForCreate(t *testing.T) {
	sg := serviceGrid(7, "superedge.io/nodeunit")
	NewStrategy(runtime.NewScheme()).PrepareForCreate(context.Background(), sg)
	if sg.Generation != 1 {
		t.Errorf("generation = %d, want 1", sg.Generation)
	}
	if sg.Status.ServiceName != "" || sg.Status.ObservedGeneration != 0 {
		t.Errorf("status kept on create: %+v", sg.Status)
	}
}

func TestPrepareForUpdate(t *testing.T) {
	tests := []struct {
		name           string
		update         func(*topology.ServiceGrid)
		wantGeneration int64
	}{
		{name: "spec change bumps the generation", update: func(sg *topology.ServiceGrid) { sg.Spec.GridUniqKey = "zone" }, wantGeneration: 4},
		{name: "template change bumps the generation", update: func(sg *topology.ServiceGrid) { sg.Spec.Template.Ports[0].Port = 81 }, wantGeneration: 4},
		{name: "label change keeps the generation", update: func(sg *topology.ServiceGrid) { sg.Labels["tier"] = "web" }, wantGeneration: 3},
		{name: "status change is discarded", update: func(sg *topology.ServiceGrid) { sg.Status.ServiceName = "other-svc" }, wantGeneration: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := serviceGrid(3, "superedge.io/nodeunit")
			sg := old.DeepCopy()
			tc.update(sg)
			NewStrategy(runtime.NewScheme()).PrepareForUpdate(context.Background(), sg, old)
			if sg.Generation != tc.wantGeneration {
				t.Errorf("generation = %d, want %d", sg.Generation, tc.wantGeneration)
			}
			if !apiequality.Semantic.DeepEqual(sg.Status, old.Status) {
				t.Errorf("status = %+v, want the stored %+v", sg.Status, old.Status)
			}
		})
	}
}

func TestStatusPrepareForUpdate(t *testing.T) {
	old := serviceGrid(3, "superedge.io/nodeunit")
	sg := old.DeepCopy()
	sg.Spec.GridUniqKey = "zone"
	sg.Labels = map[string]string{"changed": "yes"}
	sg.Status.ObservedGeneration = 3
	sg.Status.ServiceName = "echo-svc"
	sg.Status.Conditions = []metav1.Condition{{Type: topology.ServiceGridConditionReady, Status: metav1.ConditionTrue}}

	NewStatusStrategy(NewStrategy(runtime.NewScheme())).PrepareForUpdate(context.Background(), sg, old)
	if sg.Spec.GridUniqKey != "superedge.io/nodeunit" {
		t.Errorf("status write changed the spec: gridUniqKey = %q", sg.Spec.GridUniqKey)
	}
	if sg.Labels["changed"] != "" || sg.Labels["app"] != "echo" {
		t.Errorf("status write changed the labels: %v", sg.Labels)
	}
	if len(sg.Status.Conditions) != 1 {
		t.Errorf("status write lost the new conditions: %+v", sg.Status)
	}
}

func TestSelectableFields(t *testing.T) {
	fields := SelectableFields(serviceGrid(1, "superedge.io/nodeunit"))
	want := map[string]string{"metadata.name": "echo", "metadata.namespace": "demo", "spec.gridUniqKey": "superedge.io/nodeunit"}
	for k, v := range want {
		if fields[k] != v {
			t.Errorf("field %s = %q, want %q", k, fields[k], v)
		}
	}
}

func TestTable(t *testing.T) {
	ready := serviceGrid(1, "superedge.io/nodeunit")
	ready.Status.Conditions = []metav1.Condition{{Type: topology.ServiceGridConditionReady, Status: metav1.ConditionTrue}}
	fresh := serviceGrid(1, "zone")
	fresh.Name = "fresh"
	fresh.Status = topology.ServiceGridStatus{}

	table, err := tableConvertor.ConvertToTable(context.Background(),
		&topology.ServiceGridList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}, Items: []topology.ServiceGrid{*ready, *fresh}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if table.ResourceVersion != "42" || len(table.ColumnDefinitions) != 6 || len(table.Rows) != 2 {
		t.Fatalf("table = rv %q, %d columns, %d rows", table.ResourceVersion, len(table.ColumnDefinitions), len(table.Rows))
	}
	tests := []struct {
		row  int
		want []interface{}
	}{
		{row: 0, want: []interface{}{"echo", "superedge.io/nodeunit", "echo-svc", "True"}},
		{row: 1, want: []interface{}{"fresh", "zone", "<none>", "Unknown"}},
	}
	for _, tc := range tests {
		cells := table.Rows[tc.row].Cells
		for i, want := range tc.want {
			if cells[i] != want {
				t.Errorf("row %d cell %d (%s) = %v, want %v", tc.row, i, table.ColumnDefinitions[i].Name, cells[i], want)
			}
		}
	}
}
