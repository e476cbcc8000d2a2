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
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/gridview/gridview/apis/topology"
	topologyengine "github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/viewstore"
)

const nodeUserPrefix = "system:node:"

// NewNodeAuthorizer confines nodes to their own views: a request authenticated
// as a node (user system:node:<name> in group system:nodes) may get, list
// and watch only the NodeEndpoints of that node, whatever RBAC grants; a
// node's view maps the cluster's endpoints for whoever holds its
// credentials. It has no opinion on anyone else, whom the cluster
// authorizes as usual.
func NewNodeAuthorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(authorizeNode)
}

func authorizeNode(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	node, isNode := nodeOf(a.GetUser())
	if !isNode || !a.IsResourceRequest() || a.GetAPIGroup() != topology.GroupName || a.GetResource() != "nodeendpoints" {
		return authorizer.DecisionNoOpinion, "", nil
	}
	switch a.GetVerb() {
	case "get":
		if viewNode, _, err := topologyengine.ParseName(a.GetName()); err != nil || viewNode != node {
			return authorizer.DecisionDeny, fmt.Sprintf("node %s may read only its own views, named %s.<service>: %q is not one", node, node, a.GetName()), nil
		}
	case "list", "watch":
		if !selectsNode(a, node) {
			return authorizer.DecisionDeny, fmt.Sprintf("node %s may list and watch only its own views: add fieldSelector %s=%s", node, viewstore.FieldNodeName, node), nil
		}
	default:
		return authorizer.DecisionDeny, fmt.Sprintf("node %s may only get, list and watch its own views", node), nil
	}
	return authorizer.DecisionAllow, "", nil
}

// nodeOf returns the node a user is, if it is one.
func nodeOf(u user.Info) (string, bool) {
	if u == nil || !slices.Contains(u.GetGroups(), user.NodesGroup) {
		return "", false
	}
	node, ok := strings.CutPrefix(u.GetName(), nodeUserPrefix)
	return node, ok && node != ""
}

// selectsNode says whether a request's field selector requires nodeName to
// be node.
func selectsNode(a authorizer.Attributes, node string) bool {
	requirements, err := a.GetFieldSelector()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(requirements, func(r fields.Requirement) bool {
		return r.Field == viewstore.FieldNodeName && (r.Operator == selection.Equals || r.Operator == selection.DoubleEquals) && r.Value == node
	})
}
