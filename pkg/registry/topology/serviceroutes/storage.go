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

// Package serviceroutes serves ServiceRoutes: where every group of nodes
// routes one Service's traffic, computed from the replica's own views when
// it is read.
package serviceroutes

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/gridview/gridview/apis/topology"
	topologyengine "github.com/gridview/gridview/pkg/topology"
)

var (
	_ rest.Storage              = &storage{}
	_ rest.Getter               = &storage{}
	_ rest.Lister               = &storage{}
	_ rest.Scoper               = &storage{}
	_ rest.SingularNameProvider = &storage{}
	_ rest.CategoriesProvider   = &storage{}
	_ rest.TableConvertor       = &storage{}
)

// Router computes the routes of a Service from the current views.
type Router interface {
	Routes(svc types.NamespacedName) (topologyengine.Routes, error)
	// RouteCounts counts the nodes of a Service by route, cached.
	RouteCounts(svc types.NamespacedName) (topologyengine.RouteCounts, error)
	// RoutedServices returns the Services that have views, sorted.
	RoutedServices() []types.NamespacedName
}

type storage struct {
	rest.TableConvertor
	routes Router
}

// NewStorage returns the read-only storage of serviceroutes.
func NewStorage(routes Router) rest.Storage {
	return &storage{TableConvertor: tableConvertor, routes: routes}
}

func (*storage) New() runtime.Object     { return &topology.ServiceRoutes{} }
func (*storage) NewList() runtime.Object { return &topology.ServiceRoutesList{} }
func (*storage) Destroy()                {}
func (*storage) NamespaceScoped() bool   { return true }
func (*storage) GetSingularName() string { return "serviceroutes" }
func (*storage) Categories() []string    { return []string{"gridview"} }

func (s *storage) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	namespace := genericapirequest.NamespaceValue(ctx)
	routes, err := s.routes.Routes(types.NamespacedName{Namespace: namespace, Name: name})
	if err != nil {
		return nil, err
	}
	return object(namespace, name, routes), nil
}

// List counts the routes of every Service of the namespace, or of all: one
// group per route, without labels, as a list of thousands of Services with
// thousands of groups each would not fit in memory (a get names the
// groups). Each Service is read apart, from counts the views cache, so that
// a list never holds the views' lock for long; a Service that goes meanwhile
// is left out, and a client that gives up stops the list.
func (s *storage) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	if opts != nil && opts.LabelSelector != nil && !opts.LabelSelector.Empty() {
		return nil, apierrors.NewBadRequest("labelSelector: serviceroutes have no labels; select by metadata.name with fieldSelector")
	}
	namespace := genericapirequest.NamespaceValue(ctx)
	list := &topology.ServiceRoutesList{}
	for _, svc := range s.routes.RoutedServices() {
		if namespace != "" && svc.Namespace != namespace {
			continue
		}
		if opts != nil && opts.FieldSelector != nil && !opts.FieldSelector.Matches(fields.Set{"metadata.name": svc.Name, "metadata.namespace": svc.Namespace}) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, apierrors.NewTimeoutError(fmt.Sprintf("listing serviceroutes: %v", err), 0)
		}
		counts, err := s.routes.RouteCounts(svc)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, err
		}
		list.Items = append(list.Items, *summary(svc, counts))
	}
	return list, nil
}

// summary is a Service's routes with one group per route.
func summary(svc types.NamespacedName, c topologyengine.RouteCounts) *topology.ServiceRoutes {
	out := object(svc.Namespace, svc.Name, topologyengine.Routes{Rule: c.Rule, Mode: c.Mode, Keys: c.Keys, Nodes: c.Nodes, Ready: c.Ready, Total: c.Total})
	for route, nodes := range c.ByPosition() {
		out.Groups = append(out.Groups, topology.RouteGroup{Route: route, Nodes: int32(nodes)})
	}
	return out
}

func object(namespace, name string, r topologyengine.Routes) *topology.ServiceRoutes {
	out := &topology.ServiceRoutes{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Rule:       r.Rule, Mode: r.Mode, Keys: slices.Clone(r.Keys),
		Nodes: int32(r.Nodes), ReadyEndpoints: int32(r.Ready), TotalEndpoints: int32(r.Total),
	}
	for _, g := range r.Groups {
		out.Groups = append(out.Groups, topology.RouteGroup{
			Labels: maps.Clone(g.Labels), Nodes: int32(g.Nodes), SampleNodes: slices.Clone(g.SampleNodes),
			Route: g.Position, ChosenKey: g.ChosenKey, ChosenValue: g.ChosenValue, ReadyEndpoints: int32(g.Ready),
		})
	}
	return out
}
