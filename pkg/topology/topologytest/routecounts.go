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

package topologytest

import (
	"strconv"
	"strings"

	"github.com/gridview/gridview/pkg/topology"
)

// CountRoutes sums the nodes of a Service's route groups by position: what
// the engine's RouteCounts should return in the state routes were read in.
func CountRoutes(routes topology.Routes) topology.RouteCounts {
	out := topology.RouteCounts{Rule: routes.Rule, Mode: routes.Mode, Keys: routes.Keys, Nodes: routes.Nodes, Ready: routes.Ready, Total: routes.Total}
	for _, g := range routes.Groups {
		switch g.Position {
		case topology.PositionLocal:
			out.Local += g.Nodes
		case topology.PositionAll:
			out.All += g.Nodes
		case topology.PositionNone:
			out.None += g.Nodes
		default:
			// An unknown position reads as fallback-0, out of range: a panic.
			k, _ := strconv.Atoi(strings.TrimPrefix(g.Position, "fallback-"))
			for len(out.Fallback) < k {
				out.Fallback = append(out.Fallback, 0)
			}
			out.Fallback[k-1] += g.Nodes
		}
	}
	return out
}
