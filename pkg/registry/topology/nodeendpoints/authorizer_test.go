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

package nodeendpoints

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func TestNodeAuthorizer(t *testing.T) {
	edge1 := &user.DefaultInfo{Name: "system:node:edge-1", Groups: []string{user.NodesGroup, user.AllAuthenticated}}
	request := func(u user.Info, verb, name, fieldSelector string) authorizer.AttributesRecord {
		a := authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: "topology.gridview.io", Resource: "nodeendpoints", Name: name, ResourceRequest: true}
		if fieldSelector != "" {
			a.FieldSelectorRequirements = fields.ParseSelectorOrDie(fieldSelector).Requirements()
		}
		return a
	}
	for _, tc := range []struct {
		name  string
		attrs authorizer.AttributesRecord
		want  authorizer.Decision
	}{
		{name: "own view", attrs: request(edge1, "get", "edge-1..echo-x", ""), want: authorizer.DecisionAllow},
		{name: "another node's view", attrs: request(edge1, "get", "edge-2..echo-x", ""), want: authorizer.DecisionDeny},
		{name: "a node whose name has dots", attrs: request(&user.DefaultInfo{Name: "system:node:edge.1", Groups: []string{user.NodesGroup}}, "get", "edge.1..echo.x", ""), want: authorizer.DecisionAllow},
		{name: "a name that is no view", attrs: request(edge1, "get", "edge-1", ""), want: authorizer.DecisionDeny},
		{name: "list own", attrs: request(edge1, "list", "", "nodeName=edge-1"), want: authorizer.DecisionAllow},
		{name: "watch own, with more selectors", attrs: request(edge1, "watch", "", "serviceName=echo,nodeName==edge-1"), want: authorizer.DecisionAllow},
		{name: "list without a node", attrs: request(edge1, "list", "", ""), want: authorizer.DecisionDeny},
		{name: "list another node's", attrs: request(edge1, "list", "", "nodeName=edge-2"), want: authorizer.DecisionDeny},
		{name: "list every node but another", attrs: request(edge1, "list", "", "nodeName!=edge-2"), want: authorizer.DecisionDeny},
		{name: "write", attrs: request(edge1, "create", "", ""), want: authorizer.DecisionDeny},
		{name: "not a node: no opinion", attrs: request(&user.DefaultInfo{Name: "jane"}, "list", "", ""), want: authorizer.DecisionNoOpinion},
		{name: "node name without the group: no opinion", attrs: request(&user.DefaultInfo{Name: "system:node:edge-1"}, "list", "", ""), want: authorizer.DecisionNoOpinion},
		{name: "another resource: no opinion", attrs: authorizer.AttributesRecord{User: edge1, Verb: "list", APIGroup: "topology.gridview.io", Resource: "servicegrids", ResourceRequest: true}, want: authorizer.DecisionNoOpinion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := NewNodeAuthorizer().Authorize(context.Background(), tc.attrs)
			if got != tc.want || err != nil || (got == authorizer.DecisionDeny) != (reason != "") {
				t.Errorf("Authorize = %v, %q, %v; want %v with a reason exactly when denied", got, reason, err, tc.want)
			}
		})
	}
}

// A member of system:nodes whose name is no node's identity is denied
// everything: RBAC grants the group NodeEndpoints for the wrapper, so
// passing the user on would give it every node's views.
func TestNodeAuthorizerDeniesMalformedNodeIdentities(t *testing.T) {
	requests := map[string]authorizer.AttributesRecord{
		"list every view":        {Verb: "list", APIGroup: "topology.gridview.io", Resource: "nodeendpoints", ResourceRequest: true},
		"watch a node's views":   {Verb: "watch", APIGroup: "topology.gridview.io", Resource: "nodeendpoints", ResourceRequest: true, FieldSelectorRequirements: fields.ParseSelectorOrDie("nodeName=edge-1").Requirements()},
		"get a view":             {Verb: "get", APIGroup: "topology.gridview.io", Resource: "nodeendpoints", Name: "edge-1..echo-x", ResourceRequest: true},
		"list service grids":     {Verb: "list", APIGroup: "topology.gridview.io", Resource: "servicegrids", ResourceRequest: true},
		"create a review":        {Verb: "create", APIGroup: "topology.gridview.io", Resource: "topologyreviews", Namespace: "demo", ResourceRequest: true},
		"a non-resource request": {Verb: "get", Path: "/apis/topology.gridview.io/v1alpha1"},
	}
	for _, tc := range []struct {
		name, user string
		want       string
	}{
		{name: "the prefix alone", user: "system:node:", want: `"" is not a node name`},
		{name: "no prefix", user: "edge-1", want: "is not named system:node:<node name>"},
		{name: "another system user", user: "system:kube-proxy", want: "is not named system:node:<node name>"},
		{name: "upper case", user: "system:node:Edge-1", want: `"Edge-1" is not a node name`},
		{name: "a slash", user: "system:node:edge-1/x", want: `"edge-1/x" is not a node name`},
		{name: "a second prefix", user: "system:node:system:node:edge-1", want: "is not a node name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for what, attrs := range requests {
				attrs.User = &user.DefaultInfo{Name: tc.user, Groups: []string{user.NodesGroup, user.AllAuthenticated}}
				got, reason, err := NewNodeAuthorizer().Authorize(context.Background(), attrs)
				if got != authorizer.DecisionDeny || err != nil || !strings.Contains(reason, tc.want) {
					t.Errorf("%s: Authorize = %v, %q, %v; want denied, saying %q", what, got, reason, err, tc.want)
				}
			}
		})
	}
}
