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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/registry/table"
)

var tableConvertor = table.Convertor[*topology.ServiceGrid]{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Key", Type: "string", Description: "The node label key that names a node's grid unit (spec.gridUniqKey)."},
		{Name: "Service", Type: "string", Description: "The Service this ServiceGrid owns (status.serviceName)."},
		{Name: "Ready", Type: "string", Description: "Whether the owned Service matches the spec (the Ready condition)."},
		table.AgeColumn,
		{Name: "Fallback", Type: "string", Priority: 1, Description: "Where a grid unit without ready endpoints routes (spec.fallback)."},
	},
	Row: func(sg *topology.ServiceGrid) []interface{} {
		service := sg.Status.ServiceName
		if service == "" {
			service = "<none>"
		}
		ready := string(metav1.ConditionUnknown)
		if cond := meta.FindStatusCondition(sg.Status.Conditions, topology.ServiceGridConditionReady); cond != nil {
			ready = string(cond.Status)
		}
		return []interface{}{sg.Name, sg.Spec.GridUniqKey, service, ready, table.Age(sg.CreationTimestamp), string(sg.Spec.Fallback)}
	},
}
