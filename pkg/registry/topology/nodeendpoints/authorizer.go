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
	"k8s.io/apimachinery/pkg/util/validation"
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
// credentials. A member of system:nodes that names no valid node is denied
// everything. It has no opinion on anyone else, whom the cluster authorizes
// as usual.
func NewNodeAuthorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(authorizeNode)
}

func authorizeNode(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	node, isNode, err := NodeOf(a.GetUser())
	if err != nil {
		// kube-apiserver's Node authorizer answers such a user NoOpinion
		// ("unknown node for user", plugin/pkg/auth/authorizer/node/
		// node_authorizer.go), which is safe there because RBAC binds
		// nothing to system:nodes. Here RBAC must grant the group
		// NodeEndpoints for nodes to read theirs, so NoOpinion would pass
		// the user on to that grant, every node's views: deny instead. A
		// bootstrap token or a misissued certificate can carry such an
		// identity.
		return authorizer.DecisionDeny, err.Error(), nil
	}
	if !isNode || !a.IsResourceRequest() || a.GetAPIGroup() != topology.GroupName || a.GetResource() != "nodeendpoints" {
		return authorizer.DecisionNoOpinion, "", nil
	}
	switch a.GetVerb() {
	case "get":
		if viewNode, _, err := topologyengine.ParseName(a.GetName()); err != nil || viewNode != node {
			return authorizer.DecisionDeny, fmt.Sprintf("node %s may read only its own views, named %s..<endpointslice>: %q is not one", node, node, a.GetName()), nil
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

// NodeOf returns the node a user is, if it is one; an error when the user
// is in group system:nodes but its name is not system:node:<node name>.
func NodeOf(u user.Info) (string, bool, error) {
	if u == nil || !slices.Contains(u.GetGroups(), user.NodesGroup) {
		return "", false, nil
	}
	node, ok := strings.CutPrefix(u.GetName(), nodeUserPrefix)
	if !ok {
		return "", false, fmt.Errorf("user %q is in group %s but is not named %s<node name>: it is no node's identity", u.GetName(), user.NodesGroup, nodeUserPrefix)
	}
	// Node names are DNS subdomains, as kube-apiserver validates them.
	if msgs := validation.IsDNS1123Subdomain(node); len(msgs) > 0 {
		return "", false, fmt.Errorf("user %q is in group %s but %q is not a node name: %s", u.GetName(), user.NodesGroup, node, strings.Join(msgs, "; "))
	}
	return node, true, nil
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
