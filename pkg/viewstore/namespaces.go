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

package viewstore

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/gridview/gridview/pkg/topology"
)

// setNamespace applies a Namespace's default topology rule. It returns why
// the default cannot be parsed when that is news: the caller reports it.
func (s *Store) setNamespace(ns *corev1.Namespace) (newlyMalformed string) {
	s.apply(func(uint64) []topology.SliceChange {
		before := s.malformedNamespaces[ns.Name]
		changes := s.engine.SetNamespace(ns.Name, ns.Annotations)
		if after := s.recordNamespace(ns.Name); after != "" && after != before {
			newlyMalformed = after
		}
		return changes
	})
	return newlyMalformed
}

// deleteNamespace forgets a Namespace's default topology rule.
func (s *Store) deleteNamespace(name string) {
	s.apply(func(uint64) []topology.SliceChange {
		changes := s.engine.DeleteNamespace(name)
		s.recordNamespace(name)
		return changes
	})
}

// namespaceMalformed returns why a Namespace's default cannot be parsed,
// or "".
func (s *Store) namespaceMalformed(name string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.malformedNamespaces[name]
}

// recordNamespace notes whether a Namespace's default, as the engine has
// it, is malformed, for the gauge, and returns why, or "".
func (s *Store) recordNamespace(name string) string {
	err := s.engine.NamespaceMalformed(name)
	if err == nil {
		delete(s.malformedNamespaces, name)
	} else {
		s.malformedNamespaces[name] = err.Error()
	}
	malformedDefaults.Set(float64(len(s.malformedNamespaces)))
	return s.malformedNamespaces[name]
}
