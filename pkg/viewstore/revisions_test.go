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
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The store's inputs come from gridview's log (Feed), a revision's at a
// time. For tests and benchmarks, each of these applies one input as a
// revision of its own, after the store's: outside them, a revision the log
// did not number would name other content than on another replica.

// SetNode adds or updates a node.
func (s *Store) SetNode(node *corev1.Node) { s.asRevision(func() { s.setNode(node) }) }

// DeleteNode removes a node and its views.
func (s *Store) DeleteNode(name string) { s.asRevision(func() { s.deleteNode(name) }) }

// SetService adds or updates a Service. It returns why its topology
// annotation cannot be parsed when that is news.
func (s *Store) SetService(svc *corev1.Service) (newlyMalformed string) {
	s.asRevision(func() { newlyMalformed = s.setService(svc) })
	return newlyMalformed
}

// DeleteService removes a Service and its views.
func (s *Store) DeleteService(key types.NamespacedName) {
	s.asRevision(func() { s.deleteService(key) })
}

// SetEndpointSlice adds or updates an EndpointSlice.
func (s *Store) SetEndpointSlice(slice *discoveryv1.EndpointSlice) {
	s.asRevision(func() { s.setEndpointSlice(slice) })
}

// DeleteEndpointSlice removes an EndpointSlice.
func (s *Store) DeleteEndpointSlice(key types.NamespacedName) {
	s.asRevision(func() { s.deleteEndpointSlice(key) })
}

// SetNamespace applies a Namespace's default topology rule. It returns why
// the default cannot be parsed when that is news.
func (s *Store) SetNamespace(ns *corev1.Namespace) (newlyMalformed string) {
	s.asRevision(func() { newlyMalformed = s.setNamespace(ns) })
	return newlyMalformed
}

// DeleteNamespace forgets a Namespace's default topology rule.
func (s *Store) DeleteNamespace(name string) { s.asRevision(func() { s.deleteNamespace(name) }) }

func (s *Store) asRevision(apply func()) {
	s.mu.RLock()
	revision := s.revision + 1
	s.mu.RUnlock()
	s.beginRevision(revision)
	apply()
	s.endRevision(revision)
}
