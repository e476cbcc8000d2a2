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
	"cmp"
	"fmt"
	"net"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/registry/table"
	topologyengine "github.com/gridview/gridview/pkg/topology"
)

// maxEndpointsShown matches kubectl's "kubectl get endpoints".
const maxEndpointsShown = 3

var tableConvertor = table.Convertor[*topology.NodeEndpoints]{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Node", Type: "string", Description: "The node this view is for."},
		{Name: "Service", Type: "string", Description: "The Service whose EndpointSlice this view is of."},
		{Name: "Topology", Type: "string", Description: "The topology mode, the key whose tier was chosen and, unless the Service's own gridview or SuperEdge keys, the rule the topology came from."},
		{Name: "Endpoints", Type: "string", Description: "The ready endpoints the node routes to, as kubectl get endpoints shows them."},
		table.AgeColumn,
		{Name: "Not Ready", Type: "integer", Priority: 1, Description: "The endpoints of the view that are not ready, terminating ones among them: kube-proxy routes to them only when none is ready."},
		{Name: "Slice", Type: "string", Priority: 1, Description: "The source EndpointSlice."},
	},
	Row: func(ne *topology.NodeEndpoints) []interface{} {
		return []interface{}{ne.Name, ne.NodeName, ne.ServiceName, formatTopology(ne.Topology), formatEndpoints(&ne.Slice), table.Age(ne.CreationTimestamp), notReady(&ne.Slice), ne.Slice.Name}
	},
}

// formatTopology shows the mode and the key whose tier was chosen, then the
// rule the topology came from, unless the mode tells it: AnyMatch is only
// ever SuperEdge's topologyKeys and Ordered by default gridview's own keys,
// whose rows read as they always have. A view pruned by a rule the Service
// does not spell out (a Namespace default, trafficDistribution) says why.
func formatTopology(t topology.TopologyInfo) string {
	if t.Mode == "" || t.Mode == topology.TopologyModeNone {
		// An unpruned view names its rule only when it has one: Hints.
		return cmp.Or(t.Rule, string(topology.TopologyModeNone))
	}
	out := fmt.Sprintf("%s(%s)", t.Mode, cmp.Or(t.MatchedKey, "<none>"))
	if t.Rule != "" && t.Rule != impliedRules[t.Mode] {
		out += " " + t.Rule
	}
	return out
}

// impliedRules are the rules each mode means unless the view says otherwise.
var impliedRules = map[topology.TopologyMode]string{
	topology.TopologyModeAnyMatch: topologyengine.RuleSuperEdge,
	topology.TopologyModeOrdered:  topologyengine.RuleGridview,
}

// formatEndpoints prints the ready endpoints the way "kubectl get endpoints"
// does for the Endpoints the wrapper renders of a view: each port of each
// ready endpoint's first address (the one kube-proxy uses), the first few,
// then how many more.
func formatEndpoints(slice *topology.NodeEndpointSlice) string {
	var shown []string
	total := 0
	add := func(endpoint string) {
		total++
		if len(shown) < maxEndpointsShown {
			shown = append(shown, endpoint)
		}
	}
	var addrs []string
	for i := range slice.Endpoints {
		if ep := &slice.Endpoints[i]; len(ep.Addresses) > 0 && topologyengine.Ready(ep) {
			addrs = append(addrs, ep.Addresses[0])
		}
	}
	if len(slice.Ports) == 0 {
		for _, addr := range addrs {
			add(addr)
		}
	}
	for _, port := range slice.Ports {
		for _, addr := range addrs {
			add(hostPort(addr, port.Port))
		}
	}
	if total == 0 {
		return "<none>"
	}
	out := strings.Join(shown, ",")
	if total > len(shown) {
		out += fmt.Sprintf(" + %d more...", total-len(shown))
	}
	return out
}

// notReady counts the endpoints that are not ready.
func notReady(slice *topology.NodeEndpointSlice) int {
	n := 0
	for i := range slice.Endpoints {
		if !topologyengine.Ready(&slice.Endpoints[i]) {
			n++
		}
	}
	return n
}

func hostPort(addr string, port *int32) string {
	if port == nil {
		return addr
	}
	return net.JoinHostPort(addr, strconv.Itoa(int(*port)))
}
