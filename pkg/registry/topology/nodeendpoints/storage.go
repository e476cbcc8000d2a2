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

// Package nodeendpoints serves NodeEndpoints, the per-node views computed from
// Nodes, Services and EndpointSlices. Nothing is stored: views are computed.
package nodeendpoints

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/gridview/gridview/apis/topology"
)

var (
	_ rest.Storage              = &storage{}
	_ rest.Getter               = &storage{}
	_ rest.Lister               = &storage{}
	_ rest.Watcher              = &storage{}
	_ rest.Scoper               = &storage{}
	_ rest.SingularNameProvider = &storage{}
	_ rest.ShortNamesProvider   = &storage{}
	_ rest.CategoriesProvider   = &storage{}
)

// emptyResourceVersion is the resourceVersion of the state without any view.
const emptyResourceVersion = "1"

// storage serves the NodeEndpoints resource before the topology engine feeds
// it: it holds no view, so lists are empty, gets are 404 and watches are
// refused with an error that is not 410, so that clients do not loop on re-lists.
type storage struct {
	rest.TableConvertor
}

// NewStorage returns the read-only storage of nodeendpoints.
func NewStorage() rest.Storage {
	return &storage{TableConvertor: tableConvertor}
}

func (*storage) New() runtime.Object     { return &topology.NodeEndpoints{} }
func (*storage) NewList() runtime.Object { return &topology.NodeEndpointsList{} }
func (*storage) Destroy()                {}
func (*storage) NamespaceScoped() bool   { return true }
func (*storage) GetSingularName() string { return "nodeendpoints" }
func (*storage) ShortNames() []string    { return []string{"nep"} }
func (*storage) Categories() []string    { return []string{"gridview"} }

func (*storage) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	return nil, apierrors.NewNotFound(topology.Resource("nodeendpoints"), name)
}

func (*storage) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	return &topology.NodeEndpointsList{ListMeta: metav1.ListMeta{ResourceVersion: emptyResourceVersion}}, nil
}

func (*storage) Watch(context.Context, *metainternalversion.ListOptions) (watch.Interface, error) {
	return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusMethodNotAllowed,
		Reason:  metav1.StatusReasonMethodNotAllowed,
		Message: fmt.Sprintf("watching %s is not available yet: this server does not compute node views", topology.Resource("nodeendpoints")),
	}}
}
