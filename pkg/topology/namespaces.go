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

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// SetNamespace records the default rule a Namespace's annotations set, and
// re-prunes the Services in it that carry no rule of their own, one after
// another: each Service's views before and after are garbage once its
// changes are known, so that a Namespace of thousands of Services does not
// hold them all at once. No slice moves between Services, so the changes of
// one need no ordering against another's.
func (e *Engine) SetNamespace(name string, annotations map[string]string) []SliceChange {
	p := namespacePolicy(annotations)
	if old := e.namespaceDefault(name); old.mode == p.mode && slices.Equal(old.keys, p.keys) && errorText(old.malformed) == errorText(p.malformed) {
		// Another annotation or label: nothing the views read.
		return nil
	}
	if p.mode == topologyapi.TopologyModeNone && p.malformed == nil {
		delete(e.namespaces, name)
	} else {
		e.namespaces[name] = p
	}
	var changes []SliceChange
	for _, svc := range slices.SortedFunc(maps.Keys(e.inheriting[name]), compareServices) {
		changes = append(changes, e.change(e.serviceScope(svc), func() { e.usePolicy(svc, gate(inherit(p, e.services[svc]))) })...)
	}
	return changes
}

// DeleteNamespace forgets a Namespace's default rule.
func (e *Engine) DeleteNamespace(name string) []SliceChange {
	return e.SetNamespace(name, nil)
}

// NamespaceMalformed returns why a Namespace's default rule could not be
// parsed: its Services without a rule of their own are then not pruned.
func (e *Engine) NamespaceMalformed(name string) error {
	return e.namespaces[name].malformed
}

// namespaceDefault returns the default rule of a Namespace, known or not.
func (e *Engine) namespaceDefault(name string) policy {
	if p, ok := e.namespaces[name]; ok {
		return p
	}
	return policy{mode: topologyapi.TopologyModeNone}
}

// inherit returns the policy of a Service without a rule of its own: its
// Namespace's default, with what the Service says of itself.
func inherit(namespace, svc policy) policy {
	p := policy{mode: namespace.mode, keys: namespace.keys, rule: namespace.rule, inherited: true}
	p.labels, p.minReady, p.malformed = svc.labels, svc.minReady, svc.malformed
	return p
}

// trackInherited records whether a Service follows its Namespace's default.
func (e *Engine) trackInherited(svc types.NamespacedName, inherited bool) {
	switch set := e.inheriting[svc.Namespace]; {
	case inherited && set == nil:
		e.inheriting[svc.Namespace] = sets.New(svc)
	case inherited:
		set.Insert(svc)
	case set.Delete(svc).Len() == 0:
		delete(e.inheriting, svc.Namespace)
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
