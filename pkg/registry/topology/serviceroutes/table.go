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

package serviceroutes

import (
	"cmp"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/registry/table"
)

var tableConvertor = table.Convertor[*topology.ServiceRoutes]{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Rule", Type: "string", Description: "The rule that decides, and its keys."},
		{Name: "Nodes", Type: "integer", Description: "Every node."},
		{Name: "Local", Type: "integer", Description: "Nodes routing inside their first tier."},
		{Name: "Fallback", Type: "integer", Description: "Nodes routing to a wider tier than their first."},
		{Name: "All", Type: "integer", Description: "Nodes routing to every endpoint of a Service that is not pruned."},
		{Name: "None", Type: "integer", Description: "Nodes routing to no endpoint."},
		{Name: "Endpoints", Type: "string", Description: "The Service's ready endpoints of all."},
		{Name: "Groups", Type: "integer", Priority: 1, Description: "The groups of nodes that route alike."},
	},
	Row: func(r *topology.ServiceRoutes) []interface{} {
		byRoute := map[string]int32{}
		for _, g := range r.Groups {
			route := g.Route
			if strings.HasPrefix(route, "fallback-") {
				route = "fallback"
			}
			byRoute[route] += g.Nodes
		}
		rule := cmp.Or(r.Rule, string(r.Mode))
		if len(r.Keys) > 0 {
			rule += "(" + strings.Join(r.Keys, ",") + ")"
		}
		return []interface{}{r.Name, rule, r.Nodes, byRoute[topology.RouteLocal], byRoute["fallback"], byRoute[topology.RouteAll], byRoute[topology.RouteNone],
			fmt.Sprintf("%d/%d", r.ReadyEndpoints, r.TotalEndpoints), len(r.Groups)}
	},
}
