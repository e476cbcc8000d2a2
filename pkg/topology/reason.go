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
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// describedTiers is how many tiers a reason names before it counts the
// rest: a rule may list thousands of keys.
const describedTiers = 3

// reason says in one sentence why the node routes where rv says, and what
// would change it.
func (r *reviewed) reason(rv Review, namespaceErr error) string {
	p := r.policy
	ready, total := countEndpoints(r.slices)
	switch {
	case total == 0:
		return "the Service has no endpoints, so no node routes to any: check that its selector matches running pods"
	case p.mode == topologyapi.TopologyModeNone:
		return notPruned(p, namespaceErr, ready)
	}
	s := ruleSource(p) + r.pruned(rv)
	if len(rv.Addresses) == 0 && rv.Position != PositionNone {
		s += "; none of the endpoints it routes to is ready"
	}
	if p.malformed != nil {
		s += fmt.Sprintf("; a malformed annotation is ignored: %v", p.malformed)
	}
	return s
}

// notPruned explains a Service that is not pruned.
func notPruned(p policy, namespaceErr error, ready int) string {
	kept := fmt.Sprintf("every endpoint is kept (%d ready)", ready)
	switch {
	case p.malformed != nil:
		return fmt.Sprintf("the Service's topology annotations are malformed, so it is not pruned and %s: %v", kept, p.malformed)
	case namespaceErr != nil:
		return fmt.Sprintf("the default rule of the Service's Namespace is malformed, so it is not pruned and %s: %v", kept, namespaceErr)
	case p.rule == RuleHints:
		return fmt.Sprintf("the Service asks for topology hints (%s: Auto): %s with its hints, and kube-proxy chooses by zone", corev1.AnnotationTopologyMode, kept)
	case p.rule != "":
		return fmt.Sprintf("spec.trafficDistribution %s is not one gridview prunes by: %s with its hints, for kube-proxy to route as without gridview", nativeValue(p.rule), kept)
	default:
		return "the Service carries no topology rule: " + kept
	}
}

// ruleSource names the rules whose keys a reason would not make plain.
func ruleSource(p policy) string {
	switch {
	case p.rule == RuleNamespace:
		return "by its Namespace's default " + AnnotationGridviewKeys + ", "
	case p.rule == RuleOpenYurt:
		return "by OpenYurt's " + AnnotationOpenYurtTopologyKeys + ", "
	case nativeValue(p.rule) != p.rule:
		return "by spec.trafficDistribution " + nativeValue(p.rule) + ", "
	}
	return ""
}

// nativeValue returns the trafficDistribution a native rule's name holds;
// the name itself for other rules.
func nativeValue(rule string) string {
	value, ok := strings.CutPrefix(rule, strings.TrimSuffix(NativeRule(""), ")"))
	if !ok {
		return rule
	}
	return strings.TrimSuffix(value, ")")
}

// pruned explains the view of a node of a pruned Service with endpoints.
func (r *reviewed) pruned(rv Review) string {
	p, tiers := r.policy, rv.Tiers
	k := slices.Index(p.keys, r.view.Topology.MatchedKey)
	switch {
	case k < 0:
		return fmt.Sprintf("no tier of the node holds an endpoint (%s); the node routes nowhere: %s", r.describe(tiers), advice(p))
	case k == 0 && p.keys[0] == KeyAny:
		return fmt.Sprintf(`"*" is the only key: traffic goes to every endpoint (%d ready)`, tiers[0].Ready)
	case p.mode == topologyapi.TopologyModeAnyMatch && p.keys[k] == KeyAny:
		s := r.describe(tiers[:k])
		if least, held := leastMinimum(tiers[:k]); least > 1 && held > 1 {
			s += fmt.Sprintf("; together they hold fewer than the %d ready endpoints min-ready asks", least)
		}
		return s + "; fell back to " + routedTo(tiers[k])
	case p.mode == topologyapi.TopologyModeAnyMatch:
		var held []string
		for _, t := range tiers[k:] {
			if t.Chosen {
				held = append(held, routedTo(t))
			}
		}
		if k == 0 && len(held) == 1 {
			return r.has(tiers[0]) + "; traffic stays there"
		}
		if k == 0 {
			return "traffic goes to the endpoints of " + strings.Join(held, " and ")
		}
		return r.describe(tiers[:k]) + "; fell back to " + strings.Join(held, " and ")
	}
	chosen := tiers[k]
	switch {
	case chosen.Ready >= chosen.MinReady && k == 0:
		return r.has(chosen) + "; traffic stays there" + r.perFamily()
	case chosen.Ready >= chosen.MinReady:
		return r.describe(tiers[:k]) + "; fell back to " + routedTo(chosen) + r.perFamily()
	case chosen.Ready > 0:
		return fmt.Sprintf("no tier of the node holds the ready endpoints min-ready asks (%s); traffic goes to %s, the first with a ready endpoint%s",
			r.describe(tiers), routedTo(chosen), r.perFamily())
	default:
		return fmt.Sprintf("no tier of the node holds a ready endpoint (%s); traffic goes to %s, the first with endpoints, for kube-proxy to use serving or terminating ones%s",
			r.describe(tiers), routedTo(chosen), r.perFamily())
	}
}

// describe says what the first tiers hold and counts the rest.
func (r *reviewed) describe(tiers []TierReview) string {
	parts := make([]string, 0, describedTiers+1)
	for _, t := range tiers[:min(len(tiers), describedTiers)] {
		parts = append(parts, r.has(t))
	}
	if more := len(tiers) - describedTiers; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more %s", more, plural(more, "tier")))
	}
	return strings.Join(parts, "; ")
}

// has says what a tier of the node holds, and why it falls short of its
// minimum.
func (r *reviewed) has(t TierReview) string {
	if !t.In {
		if value, ok := r.labels[t.Key]; ok && value == "" {
			return fmt.Sprintf("the node's %s label is empty, so it is in no tier of it", t.Key)
		}
		return fmt.Sprintf("the node has no %s label, so it is in no tier of it", t.Key)
	}
	s := fmt.Sprintf("%s has %d ready %s of %d", tierName(t), t.Ready, plural(t.Ready, "endpoint"), t.Total)
	if t.Ready > 0 && t.Ready < t.MinReady {
		s += fmt.Sprintf(", fewer than the %d min-ready asks", t.MinReady)
	}
	return s
}

// perFamily names the tier each address family chose, when a dual-stack
// Service's families chose apart.
func (r *reviewed) perFamily() string {
	byFamily, _ := r.tiers.chosenTiers(r.viewer)
	families := r.tiers.families
	parts := make([]string, 0, len(families))
	apart := false
	for _, family := range families {
		name := "nothing"
		if k := byFamily[family]; k >= 0 {
			name = tierName(TierReview{Key: r.policy.keys[k], Value: r.viewer[k].value})
		}
		parts = append(parts, fmt.Sprintf("%s routes to %s", family, name))
		apart = apart || byFamily[family] != byFamily[families[0]]
	}
	if !apart {
		return ""
	}
	return "; per address family, " + strings.Join(parts, " and ")
}

// leastMinimum is the least min-ready of the tiers that hold an endpoint,
// which an any-match node's matched ready endpoints must reach, 0 for none;
// and how many tiers hold one.
func leastMinimum(tiers []TierReview) (least, held int) {
	for _, t := range tiers {
		if t.Total > 0 {
			held++
			if least == 0 || t.MinReady < least {
				least = t.MinReady
			}
		}
	}
	return least, held
}

func advice(p policy) string {
	if p.rule == RuleOpenYurt {
		return "OpenYurt's rule does not fall back, so an endpoint must run in the node's tier"
	}
	return `add "*" as the last key (or fallback Any on a ServiceGrid) to fall back`
}

func tierName(t TierReview) string {
	if t.Key == KeyAny {
		return `every endpoint ("*")`
	}
	return t.Key + "=" + t.Value
}

func routedTo(t TierReview) string {
	if t.Key == KeyAny {
		return fmt.Sprintf(`every endpoint ("*", %d ready)`, t.Ready)
	}
	return fmt.Sprintf("%s (%d ready)", tierName(t), t.Ready)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
