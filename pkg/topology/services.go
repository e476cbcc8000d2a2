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
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// SetService adds or updates a Service; an ExternalName Service has no view.
func (e *Engine) SetService(svc *corev1.Service) []SliceChange {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	return e.change(e.serviceScope(key), func() { e.setService(svc) })
}

// DeleteService removes a Service and its views.
func (e *Engine) DeleteService(key types.NamespacedName) []SliceChange {
	return e.change(e.serviceScope(key), func() { e.deleteService(key) })
}

// serviceScope is what a change of a Service may change: every node's view,
// unless it has no endpoint for anyone to see.
func (e *Engine) serviceScope(svc types.NamespacedName) scope {
	for _, slice := range e.slices[svc] {
		if len(slice.endpoints) > 0 {
			return allNodesOf(svc)
		}
	}
	return scope{}
}

func (e *Engine) setService(svc *corev1.Service) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		e.deleteService(key)
		return
	}
	p, own := ownPolicy(svc)
	p = withMinReady(p, svc.Annotations)
	p.labels = maps.Clone(svc.Labels)
	if !own {
		p = inherit(e.namespaceDefault(svc.Namespace), p)
	}
	e.trackInherited(key, p.inherited)
	e.usePolicy(key, gate(p))
}

// usePolicy prunes a Service by a policy.
func (e *Engine) usePolicy(key types.NamespacedName, p policy) {
	// Read the new keys before forgetting the old ones, so that a key both
	// read stays indexed.
	old := e.services[key]
	e.services[key] = p
	e.useGrouping(p)
	e.dropGrouping(old)
	read := labelKeys(p)
	for _, label := range read {
		e.readKey(label, key)
	}
	for _, label := range labelKeys(old) {
		if !slices.Contains(read, label) {
			e.forgetKey(label, key)
		}
	}
	e.countTiers(key)
}

func (e *Engine) deleteService(key types.NamespacedName) {
	e.trackInherited(key, false)
	for _, label := range labelKeys(e.services[key]) {
		e.forgetKey(label, key)
	}
	e.dropGrouping(e.services[key])
	delete(e.services, key)
	e.countTiers(key)
}

// readKey records that a Service reads a label key, indexing the nodes by it
// if no other Service did.
func (e *Engine) readKey(label string, svc types.NamespacedName) {
	if e.keyServices[label] == nil {
		e.keyServices[label] = sets.New[types.NamespacedName]()
		e.byLabel.addKey(label, e.nodes)
	}
	e.keyServices[label].Insert(svc)
}

func (e *Engine) forgetKey(label string, svc types.NamespacedName) {
	if e.keyServices[label].Delete(svc).Len() == 0 {
		delete(e.keyServices, label)
		e.byLabel.dropKey(label)
	}
}

// gate sets the ready endpoints each key's tier needs to be chosen. An
// OpenYurt Service's one tier is a hard filter, with nothing to fall back to.
// An any-match Service without "*" keeps its matched endpoints whatever
// their number, as issue 13 says.
func gate(p policy) policy {
	p.mins = make([]int, len(p.keys))
	for k, key := range p.keys {
		p.mins[k] = 1
		if p.rule != RuleOpenYurt {
			p.mins[k] = p.minReady.For(key)
		}
	}
	return p
}

// appendSignature appends what a node's view of a Service depends on besides
// the Service's endpoints: nodes with equal signatures share the view. For an
// ordered Service, that is the tier it chooses for each address family; for
// an any-match one, its tiers that hold an endpoint and the families it
// gets every endpoint of.
func appendSignature(b []byte, p policy, st *serviceTiers, viewer []tier) []byte {
	switch p.mode {
	case topologyapi.TopologyModeOrdered:
		for _, family := range st.families {
			if k := st.counts[family].chosenTier(viewer, p.mins); k >= 0 {
				b = append(b, family...)
				b = append(b, 0)
				b = append(b, p.keys[k]...)
				b = append(b, 0)
				b = append(b, viewer[k].value...)
				b = append(b, 0)
			}
		}
	case topologyapi.TopologyModeAnyMatch:
		for k, t := range viewer {
			if st.held(k, t) {
				b = append(b, '=')
				b = append(b, t.value...)
			} else {
				b = append(b, '-')
			}
			b = append(b, 0)
		}
		// In sorted order, so that equal views have equal signatures.
		falling := st.fallingFamilies(viewer)
		for _, family := range st.families {
			if falling[family] {
				b = append(b, family...)
				b = append(b, 0)
			}
		}
	}
	return b
}
