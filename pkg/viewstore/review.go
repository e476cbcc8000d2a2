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
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/pkg/topology"
)

// Review explains a node's view of a Service, or what it would be under a
// what-if, from the current state: a node or Service the store does not know
// is a NotFound naming it.
func (s *Store) Review(node string, svc types.NamespacedName, whatIf topology.WhatIf) (topology.Review, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stream == nil {
		return topology.Review{}, errNotLoaded
	}
	review, err := s.engine.Review(node, svc, whatIf)
	return review, notFound(err, node, svc)
}

// Routes is where every node's traffic to a Service goes, by group.
func (s *Store) Routes(svc types.NamespacedName) (topology.Routes, error) {
	return readRoutes(s, svc, (*topology.Engine).Routes)
}

// RouteCounts is how many nodes route a Service to each position: the
// cheap part of Routes, which the routing metrics read for every Service.
func (s *Store) RouteCounts(svc types.NamespacedName) (topology.RouteCounts, error) {
	return readRoutes(s, svc, (*topology.Engine).RouteCounts)
}

// readRoutes reads a Service's routes under the store's read lock.
func readRoutes[T any](s *Store, svc types.NamespacedName, read func(*topology.Engine, types.NamespacedName) (T, error)) (T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stream == nil {
		var none T
		return none, errNotLoaded
	}
	out, err := read(s.engine, svc)
	return out, notFound(err, "", svc)
}

// RoutedServices returns the Services that have views, sorted. Shared: never
// modify it.
func (s *Store) RoutedServices() []types.NamespacedName {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.engine.Services("")
}

// notFound turns the engine's errors of an unknown node or Service into the
// API's, which name the object as kube-apiserver would.
func notFound(err error, node string, svc types.NamespacedName) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, topology.ErrUnknownNode):
		return apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, node)
	case errors.Is(err, topology.ErrUnknownService):
		status := apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, svc.Name)
		status.ErrStatus.Message += ": no such Service, or one without endpoints to route (ExternalName)"
		return status
	}
	return err
}
