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

package topology

import (
	"iter"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// RouteCounts is how many nodes route a Service to each position, as Routes
// groups them but without naming a group or a node: what the routing
// metrics read of every Service on every pass.
type RouteCounts struct {
	Rule string
	Mode topologyapi.TopologyMode
	// Keys are the policy's. Shared: never modify them.
	Keys []string
	// Nodes counts every known node.
	Nodes int
	// Ready and Total count the Service's endpoints.
	Ready, Total int
	// Local, All and None count the nodes at those positions.
	Local, All, None int
	// Fallback counts at k-1 the nodes at FallbackPosition(k). Shared: never
	// modify it.
	Fallback []int
}

// countsAt is a Service's RouteCounts at one node generation.
type countsAt struct {
	generation uint64
	counts     RouteCounts
}

// RouteCounts counts the nodes by where their traffic to a Service goes.
// The counts are cached on the Service's views, which are replaced when the
// Service, its policy or its endpoints change, or a node it has endpoints on
// appears, goes or changes a label the Service reads; nodes that appeared,
// went or changed labels since are counted anew from the engine's last node
// changes, or, when it no longer holds them all, every node is. It may run
// concurrently with View, Routes and itself.
func (e *Engine) RouteCounts(svc types.NamespacedName) (RouteCounts, error) {
	sv, ok := e.views[svc]
	if !ok {
		return RouteCounts{}, unknownService(svc)
	}
	cached := sv.counts.Load()
	if cached != nil && cached.generation == e.nodeGeneration {
		return cached.counts, nil
	}
	p, nodes := sv.policy, e.Nodes()
	out := RouteCounts{Rule: p.rule, Mode: p.mode, Keys: p.keys, Nodes: len(nodes)}
	out.Ready, out.Total = countEndpoints(sv.slices)
	switch {
	case len(nodes) == 0:
	case sv.uniform():
		out.All = len(nodes)
	case cached != nil && e.countChangedNodes(sv, cached, &out):
	default:
		e.visitRoutes(svc, sv, nodes, &out)
	}
	// Readers that race here computed the same counts.
	sv.counts.Store(&countsAt{generation: e.nodeGeneration, counts: out})
	return out, nil
}

// countChangedNodes brings counts cached a few node generations ago up to
// date: a node that moved routes anew, and the others as before, the
// Service's tiers being those of the same views. False when the engine no
// longer holds every change since.
func (e *Engine) countChangedNodes(sv *serviceViews, cached *countsAt, out *RouteCounts) bool {
	changes, ok := e.nodeChangesSince(cached.generation)
	if !ok {
		return false
	}
	out.Local, out.All, out.None = cached.counts.Local, cached.counts.All, cached.counts.None
	out.Fallback = slices.Clone(cached.counts.Fallback)
	b := &routeBuilder{sv: sv, bySignature: map[string]routing{}}
	for _, c := range changes {
		if c.known {
			out.add("", nil, b.route(c.name, c.old), -1, nil)
		}
		if c.kept {
			out.add("", nil, b.route(c.name, c.new), 1, nil)
		}
	}
	// As counted afresh: no fallback tier that no node routes to last.
	for len(out.Fallback) > 0 && out.Fallback[len(out.Fallback)-1] == 0 {
		out.Fallback = out.Fallback[:len(out.Fallback)-1]
	}
	if len(out.Fallback) == 0 {
		out.Fallback = nil
	}
	return true
}

// add counts nodes that route alike: RouteCounts is a routeSink.
func (c *RouteCounts) add(_ string, _ map[string]string, rt routing, nodes int, _ []string) {
	switch rt.position {
	case PositionLocal:
		c.Local += nodes
	case PositionAll:
		c.All += nodes
	case PositionNone:
		c.None += nodes
	default:
		// A fallback's rank is its key's index.
		for len(c.Fallback) < rt.rank {
			c.Fallback = append(c.Fallback, 0)
		}
		c.Fallback[rt.rank-1] += nodes
	}
}

// ByPosition yields each position some nodes route to with their number:
// local, the fallbacks in order, all, none.
func (c RouteCounts) ByPosition() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		if c.Local > 0 && !yield(PositionLocal, c.Local) {
			return
		}
		for i, n := range c.Fallback {
			if n > 0 && !yield(FallbackPosition(i+1), n) {
				return
			}
		}
		if c.All > 0 && !yield(PositionAll, c.All) {
			return
		}
		if c.None > 0 {
			yield(PositionNone, c.None)
		}
	}
}

// Astray counts the nodes that route to a fallback tier or to none.
func (c RouteCounts) Astray() int {
	n := c.None
	for _, f := range c.Fallback {
		n += f
	}
	return n
}
