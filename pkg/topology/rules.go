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
	"strings"

	corev1 "k8s.io/api/core/v1"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// The names of the rules a view's topology.rule shows.
const (
	RuleGridview  = "Gridview"
	RuleSuperEdge = "SuperEdge"
	RuleOpenYurt  = "OpenYurt"
	RuleNamespace = "Namespace"
	RuleHints     = "Hints"
)

// NativeRule names the rule of a Service's spec.trafficDistribution.
func NativeRule(trafficDistribution string) string {
	return "Native(" + trafficDistribution + ")"
}

// Node label keys the rules read besides the Service's own keys.
const (
	KeyZone = "topology.kubernetes.io/zone"
	// KeyNodePool is the label OpenYurt puts on the nodes of a node pool.
	KeyNodePool = "apps.openyurt.io/nodepool"
)

// serviceRule is a topology rule a Service may carry of its own; the first
// of serviceRules a Service carries applies.
type serviceRule struct {
	// read returns the rule's value on a Service, false when it has none.
	read func(svc *corev1.Service) (string, bool)
	name func(value string) string
	// policy derives the rule's policy from its value.
	policy func(value string) (policy, error)
}

// serviceRules are in the order of precedence issue 13 states. topology-mode
// Auto comes after trafficDistribution, as the issue leaves hints to
// kube-proxy only for Services without a higher rule (the EndpointSlice
// controller would prefer the annotation), and before the Namespace
// default, being a rule of the Service's own.
var serviceRules = []serviceRule{
	{read: annotation(AnnotationGridviewKeys), name: named(RuleGridview), policy: ordered(ParseGridviewKeys, RuleGridview)},
	{read: annotation(AnnotationTopologyKeys), name: named(RuleSuperEdge), policy: anyMatch},
	{read: annotation(AnnotationOpenYurtTopologyKeys), name: named(RuleOpenYurt), policy: openYurt},
	{read: trafficDistribution, name: NativeRule, policy: native},
	{read: topologyHints, name: named(RuleHints), policy: func(string) (policy, error) {
		return policy{mode: topologyapi.TopologyModeNone, rule: RuleHints}, nil
	}},
}

// Rules returns the names of the rules a Service carries of its own, the
// one that applies first; when it carries none, its Namespace's default
// applies.
func Rules(svc *corev1.Service) []string {
	var names []string
	for _, r := range serviceRules {
		if value, ok := r.read(svc); ok {
			names = append(names, r.name(value))
		}
	}
	return names
}

// ownPolicy returns the policy of the first rule a Service carries, with its
// min-ready; false when it carries none. A malformed rule still applies: the
// Service is then not pruned, rather than pruned by a rule its owner did
// not choose.
func ownPolicy(svc *corev1.Service) (policy, bool) {
	for _, r := range serviceRules {
		value, ok := r.read(svc)
		if !ok {
			continue
		}
		p, err := r.policy(value)
		if err != nil {
			p = policy{mode: topologyapi.TopologyModeNone, malformed: err}
		}
		return p, true
	}
	return policy{mode: topologyapi.TopologyModeNone}, false
}

// namespacePolicy returns the default a Namespace's annotations set for its
// Services without a rule of their own.
func namespacePolicy(annotations map[string]string) policy {
	value, ok := annotations[AnnotationGridviewKeys]
	if !ok {
		return policy{mode: topologyapi.TopologyModeNone}
	}
	p, err := ordered(ParseGridviewKeys, RuleNamespace)(value)
	if err != nil {
		return policy{mode: topologyapi.TopologyModeNone, malformed: err}
	}
	return p
}

func annotation(key string) func(*corev1.Service) (string, bool) {
	return func(svc *corev1.Service) (string, bool) {
		value, ok := svc.Annotations[key]
		return value, ok
	}
}

func named(name string) func(string) string {
	return func(string) string { return name }
}

func ordered(parse func(string) ([]string, error), rule string) func(string) (policy, error) {
	return func(value string) (policy, error) {
		keys, err := parse(value)
		return policy{mode: topologyapi.TopologyModeOrdered, keys: keys, rule: rule}, err
	}
}

func anyMatch(value string) (policy, error) {
	keys, err := ParseTopologyKeys(value)
	return policy{mode: topologyapi.TopologyModeAnyMatch, keys: keys, rule: RuleSuperEdge}, err
}

// openYurt reads openyurt.io/topologyKeys as yurthub's servicetopology filter
// does (github.com/openyurtio/openyurt, pkg/yurthub/filter/servicetopology/
// filter.go: resolveServiceTopologyType, nodeTopologyHandler,
// nodePoolTopologyHandler): exactly one of three values, a hard filter;
// kubernetes.io/hostname keeps the endpoints on the node itself;
// openyurt.io/nodepool and kubernetes.io/zone alike keep those of the node's
// pool, and a node in no pool falls into the node topology. The pool is read
// from the label OpenYurt sets, not from the NodePool's status; an empty
// value is no pool, as for OpenYurt. A node pool
// tier holds the node's own tier, so "pool, else the node" chooses the pool
// for every pooled node and the node for the others. Besides OpenYurt's
// values, topology.kubernetes.io/zone keeps the node's zone. min-ready does
// not apply: there is no tier to fall back to.
func openYurt(value string) (policy, error) {
	p := policy{mode: topologyapi.TopologyModeOrdered, rule: RuleOpenYurt, emptyIsNone: true}
	switch strings.TrimSpace(value) {
	case KeyHostname:
		p.keys = []string{KeyHostname}
	case "openyurt.io/nodepool", "kubernetes.io/zone":
		p.keys = []string{KeyNodePool, KeyHostname}
	case KeyZone:
		p.keys = []string{KeyZone}
	default:
		return p, fmt.Errorf("%s: %s is none of kubernetes.io/hostname, openyurt.io/nodepool, kubernetes.io/zone and %s",
			AnnotationOpenYurtTopologyKeys, quoteKey(value), KeyZone)
	}
	return p, nil
}

func trafficDistribution(svc *corev1.Service) (string, bool) {
	if svc.Spec.TrafficDistribution == nil {
		return "", false
	}
	return *svc.Spec.TrafficDistribution, true
}

// native prunes as the ordered keys a trafficDistribution implies; a node
// with an empty zone is in no zone, as kube-proxy does not route it by zone
// hints. A value this version does not know leaves the endpoints and their
// hints to kube-proxy, as it would be without gridview.
func native(value string) (policy, error) {
	p := policy{mode: topologyapi.TopologyModeOrdered, rule: NativeRule(value), emptyIsNone: true}
	switch value {
	case corev1.ServiceTrafficDistributionPreferSameNode:
		p.keys = []string{KeyHostname, KeyZone, KeyAny}
	case corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferClose:
		p.keys = []string{KeyZone, KeyAny}
	default:
		p.mode = topologyapi.TopologyModeNone
	}
	return p, nil
}

// topologyHints reads whether the EndpointSlice controller writes topology
// hints for a Service, as it reads it: topology-mode, else the deprecated
// topology-aware-hints, set to Auto or auto.
func topologyHints(svc *corev1.Service) (string, bool) {
	value, ok := svc.Annotations[corev1.AnnotationTopologyMode]
	if !ok {
		value = svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	}
	return value, value == "Auto" || value == "auto"
}

// withMinReady gates the tiers of a policy by a Service's min-ready
// annotation; a malformed one is ignored and reported with the rule's.
func withMinReady(p policy, annotations map[string]string) policy {
	value, ok := annotations[AnnotationMinReady]
	if !ok {
		return p
	}
	m, err := ParseMinReady(value)
	if err != nil {
		p.malformed = errors.Join(p.malformed, err)
		return p
	}
	p.minReady = m
	return p
}
