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
	"strings"

	corev1 "k8s.io/api/core/v1"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// rule is the oracle's reading of the rule that prunes a Service, from the
// text of issue 13 and the sources it names.
type rule struct {
	mode topologyapi.TopologyMode
	keys []string
	name string
	// minimum returns how many ready endpoints a key's tier needs.
	minimum func(key string) int
	// emptyIsNone: a node whose label is empty carries none (Kubernetes'
	// zone, OpenYurt's pool).
	emptyIsNone bool
	// openYurt is the value of openyurt.io/topologyKeys that applies, if any.
	openYurt string
}

const (
	zoneLabel = "topology.kubernetes.io/zone"
	poolLabel = "apps.openyurt.io/nodepool"
)

// ruleOf returns the rule of a Service: the first of its own by
// precedence, else its Namespace's default.
func (o *Oracle) ruleOf(svc *corev1.Service) rule {
	r := o.ownRule(svc)
	if r == nil {
		r = &rule{mode: topologyapi.TopologyModeNone}
		if value, ok := o.Namespaces[svc.Namespace][topology.AnnotationGridviewKeys]; ok {
			if keys, err := topology.ParseGridviewKeys(value); err == nil {
				r = &rule{mode: topologyapi.TopologyModeOrdered, keys: keys, name: "Namespace"}
			}
		}
	}
	r.minimum = func(string) int { return 1 }
	if value, ok := svc.Annotations[topology.AnnotationMinReady]; ok && r.openYurt == "" {
		// A malformed min-ready is ignored.
		if m, err := topology.ParseMinReady(value); err == nil {
			r.minimum = func(key string) int {
				if n, named := m.PerKey[key]; named && key != topology.KeyAny {
					return int(n)
				}
				if key == topology.KeyAny || m.Default == 0 {
					return 1
				}
				return int(m.Default)
			}
		}
	}
	return *r
}

// ownRule returns the first rule a Service carries, or nil. A rule that is
// present but malformed leaves the Service unpruned.
func (o *Oracle) ownRule(svc *corev1.Service) *rule {
	unpruned := &rule{mode: topologyapi.TopologyModeNone}
	if value, ok := svc.Annotations[topology.AnnotationGridviewKeys]; ok {
		if keys, err := topology.ParseGridviewKeys(value); err == nil {
			return &rule{mode: topologyapi.TopologyModeOrdered, keys: keys, name: "Gridview"}
		}
		return unpruned
	}
	if value, ok := svc.Annotations[topology.AnnotationTopologyKeys]; ok {
		if keys, err := topology.ParseTopologyKeys(value); err == nil {
			return &rule{mode: topologyapi.TopologyModeAnyMatch, keys: keys, name: "SuperEdge"}
		}
		return unpruned
	}
	if value, ok := svc.Annotations["openyurt.io/topologyKeys"]; ok {
		r := &rule{mode: topologyapi.TopologyModeOrdered, name: "OpenYurt", emptyIsNone: true, openYurt: strings.TrimSpace(value)}
		switch r.openYurt {
		case "kubernetes.io/hostname":
			r.keys = []string{"kubernetes.io/hostname"}
		case "openyurt.io/nodepool", "kubernetes.io/zone":
			r.keys = []string{poolLabel, "kubernetes.io/hostname"}
		case zoneLabel:
			r.keys = []string{zoneLabel}
		default:
			return unpruned
		}
		return r
	}
	if td := svc.Spec.TrafficDistribution; td != nil {
		r := &rule{mode: topologyapi.TopologyModeOrdered, name: "Native(" + *td + ")", emptyIsNone: true}
		switch *td {
		case "PreferSameNode":
			r.keys = []string{"kubernetes.io/hostname", zoneLabel, "*"}
		case "PreferSameZone", "PreferClose":
			r.keys = []string{zoneLabel, "*"}
		default:
			r.mode = topologyapi.TopologyModeNone
		}
		return r
	}
	mode, ok := svc.Annotations["service.kubernetes.io/topology-mode"]
	if !ok {
		mode = svc.Annotations["service.kubernetes.io/topology-aware-hints"]
	}
	if mode == "Auto" || mode == "auto" {
		return &rule{mode: topologyapi.TopologyModeNone, name: "Hints"}
	}
	return nil
}
