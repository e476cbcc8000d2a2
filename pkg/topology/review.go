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
	"errors"
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// WhatIf is what a review asks about instead of the cluster's state; its
// zero value asks about the state.
type WhatIf struct {
	// NodeLabels, when non-nil, replace the reviewed node's labels: it then
	// also counts its own endpoints in the tiers of these labels.
	NodeLabels map[string]string
	// UnreadyNodes are nodes whose endpoints count as not ready.
	UnreadyNodes sets.Set[string]
}

func (w WhatIf) zero() bool {
	return w.NodeLabels == nil && len(w.UnreadyNodes) == 0
}

// Where a node's traffic to a Service goes; FallbackPosition names the others.
const (
	// PositionLocal is the first tier, the first key's.
	PositionLocal = "local"
	// PositionAll is every endpoint of a Service that is not pruned, or
	// whose only key is "*".
	PositionAll = "all"
	// PositionNone is a pruned Service's node that routes to no endpoint.
	PositionNone = "none"
)

// FallbackPosition names the position of a node whose traffic goes to the
// tier of keys[k], k > 0, "*" included.
func FallbackPosition(k int) string {
	return "fallback-" + strconv.Itoa(k)
}

// Errors of a review of a node or Service the engine does not know; the
// errors returned wrap them and name the node or Service.
var (
	ErrUnknownNode    = errors.New("unknown node")
	ErrUnknownService = errors.New("unknown Service")
)

func unknownService(svc types.NamespacedName) error {
	return fmt.Errorf("service %s has no endpoints to route: it does not exist or is an ExternalName Service: %w", svc, ErrUnknownService)
}

// TierReview is a node's tier of one key of a Service's topology.
type TierReview struct {
	// Key is the key; Value the node's value of it: "" for "*", the node's
	// name for the same-node key.
	Key, Value string
	// In is false when the node has no such label, or an empty one where
	// the rule reads empty as none.
	In bool
	// Ready and Total count the Service's endpoints in the tier, summed over
	// address families.
	Ready, Total int
	// MinReady is how many ready endpoints the tier needs to be chosen; 0
	// for an any-match Service without "*", which keeps its matched
	// endpoints whatever their number.
	MinReady int
	// Chosen says the node routes to endpoints of the tier, of any family.
	Chosen bool
}

// Review explains a node's view of a Service.
type Review struct {
	// Rule is as the view's topology.rule shows it.
	Rule string
	Mode topologyapi.TopologyMode
	// Tiers are in key order; empty for mode None.
	Tiers []TierReview
	// Position is PositionLocal, FallbackPosition(k), PositionAll or
	// PositionNone.
	Position string
	// Addresses are the ready addresses the node routes to, sorted, each once.
	Addresses []string
	// Reason is one sentence a person can act on.
	Reason string
}

// reviewed is what a review reads: a node's view of a Service and what it
// was computed from.
type reviewed struct {
	policy policy
	tiers  *serviceTiers
	slices []*endpointSlice
	labels map[string]string
	viewer []tier
	view   *View
}

// Review explains a node's view of a Service, or what it would be under w,
// without changing the engine: it may run concurrently with View calls.
func (e *Engine) Review(node string, svc types.NamespacedName, w WhatIf) (Review, error) {
	sv, ok := e.views[svc]
	if !ok {
		return Review{}, unknownService(svc)
	}
	labels, ok := e.nodes[node]
	if !ok {
		return Review{}, fmt.Errorf("node %q: %w", node, ErrUnknownNode)
	}
	r := reviewed{policy: sv.policy, tiers: sv.tiers, slices: sv.slices, labels: labels}
	if w.zero() {
		r.view, r.viewer, _ = sv.view(node, labels, nil, nil)
	} else {
		e.whatIf(&r, node, w)
	}
	var namespaceErr error
	if r.policy.inherited {
		namespaceErr = e.namespaces[svc.Namespace].malformed
	}
	return r.explain(namespaceErr), nil
}

// whatIf derives the view of a node under w afresh, from the Service's
// policy and slices, as countTiers would after the change w asks about.
func (e *Engine) whatIf(r *reviewed, node string, w WhatIf) {
	if w.NodeLabels != nil {
		r.labels = w.NodeLabels
	}
	r.slices = withUnready(r.slices, w.UnreadyNodes)
	if r.policy.mode != topologyapi.TopologyModeNone {
		r.tiers = deriveTiers(r.policy, r.slices, func(name string) (map[string]string, bool) {
			if name == node {
				return r.labels, true
			}
			return e.labelsOf(name)
		})
	}
	r.viewer = tiersOf(nil, r.policy, node, r.labels, true)
	r.view = computeView(r.policy, r.slices, r.tiers, r.viewer)
}

// withUnready returns the slices with the ready endpoints on the nodes given
// made not ready, copying the slices it changes.
func withUnready(source []*endpointSlice, nodes sets.Set[string]) []*endpointSlice {
	if len(nodes) == 0 {
		return source
	}
	out := slices.Clone(source)
	for i, slice := range source {
		for j := range slice.endpoints {
			ep := &slice.endpoints[j]
			if ep.NodeName == nil || !nodes.Has(*ep.NodeName) || !Ready(ep) {
				continue
			}
			if out[i] == slice {
				copied := *slice
				copied.endpoints = slices.Clone(slice.endpoints)
				out[i] = &copied
			}
			out[i].endpoints[j].Conditions.Ready = ptr.To(false)
		}
	}
	return out
}

func (r *reviewed) explain(namespaceErr error) Review {
	out := Review{
		Rule: r.view.Topology.Rule, Mode: r.policy.mode,
		Position:  position(r.policy, r.view.Topology.MatchedKey),
		Addresses: readyAddresses(r.view),
	}
	if r.policy.mode != topologyapi.TopologyModeNone {
		out.Tiers = r.tierReviews()
	}
	out.Reason = r.reason(out, namespaceErr)
	return out
}

// tierReviews reviews the tiers of a node of a pruned Service.
func (r *reviewed) tierReviews() []TierReview {
	p, st := r.policy, r.tiers
	chosen := make([]bool, len(p.keys))
	if p.mode == topologyapi.TopologyModeOrdered {
		byFamily, _ := st.chosenTiers(r.viewer)
		for _, k := range byFamily {
			if k >= 0 {
				chosen[k] = true
			}
		}
	} else {
		for k := range p.matching() {
			chosen[k] = st.held(k, r.viewer[k])
		}
		if p.fallsBack() {
			chosen[len(p.keys)-1] = r.view.Topology.MatchedKey == KeyAny
		}
	}
	out := make([]TierReview, len(p.keys))
	for k, key := range p.keys {
		t := r.viewer[k]
		out[k] = TierReview{Key: key, Value: t.value, In: t.in, MinReady: p.mins[k], Chosen: chosen[k]}
		if p.mode == topologyapi.TopologyModeAnyMatch && !p.fallsBack() {
			out[k].MinReady = 0
		}
		for _, family := range st.families {
			c := st.counts[family].count(k, t)
			out[k].Ready += c.ready
			out[k].Total += c.all
		}
	}
	return out
}
