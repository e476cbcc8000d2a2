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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	apistorage "k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/viewstore"
	"github.com/gridview/gridview/pkg/watchstream"
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

// storage serves the views of a store, read-only.
type storage struct {
	rest.TableConvertor
	views *viewstore.Store
}

// NewStorage returns the read-only storage of nodeendpoints.
func NewStorage(views *viewstore.Store) rest.Storage {
	return &storage{TableConvertor: tableConvertor, views: views}
}

func (*storage) New() runtime.Object     { return &topology.NodeEndpoints{} }
func (*storage) NewList() runtime.Object { return &topology.NodeEndpointsList{} }
func (*storage) Destroy()                {}
func (*storage) NamespaceScoped() bool   { return true }
func (*storage) GetSingularName() string { return "nodeendpoints" }
func (*storage) ShortNames() []string    { return []string{"nep"} }
func (*storage) Categories() []string    { return []string{"gridview"} }

func (s *storage) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	var resourceVersion string
	if opts != nil {
		resourceVersion = opts.ResourceVersion
	}
	if err := s.views.AwaitFresh(ctx, resourceVersion, ""); err != nil {
		return nil, err
	}
	return s.views.Get(genericapirequest.NamespaceValue(ctx), name)
}

func (s *storage) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	if opts == nil {
		opts = &metainternalversion.ListOptions{}
	}
	if err := s.views.AwaitFresh(ctx, opts.ResourceVersion, opts.Continue); err != nil {
		return nil, err
	}
	return s.views.List(filter(ctx, opts), viewstore.ListOptions{
		ResourceVersion: opts.ResourceVersion,
		Exact:           opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact,
		Limit:           opts.Limit,
		Continue:        opts.Continue,
	})
}

func (s *storage) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	if opts == nil {
		opts = &metainternalversion.ListOptions{}
	}
	if err := s.views.AwaitFresh(ctx, opts.ResourceVersion, ""); err != nil {
		if apistorage.IsTooLargeResourceVersion(err) {
			// client-go lists again after any error of a watch but this
			// one, and this replica will number the same changes alike
			// once it gets there: the client watches again from where it
			// was, here or on another replica.
			return nil, apierrors.NewTooManyRequests(err.Error()+"; this replica has not read gridview's input log that far yet: watch again", 1)
		}
		return nil, err
	}
	f := filter(ctx, opts)
	watchOpts := watchstream.WatchOptions{
		ResourceVersion:   opts.ResourceVersion,
		SendInitialEvents: opts.SendInitialEvents,
		Bookmarks:         opts.AllowWatchBookmarks,
	}
	w, err := s.views.Watch(ctx, f, watchOpts)
	if err == nil && !viewstore.StateBuiltAfterWatch(f, watchOpts) {
		// API Priority and Fairness holds a watch's seat until its storage
		// says the watch is set up, as kube-apiserver's storage does; without
		// this every node's watch would hold one for its whole life, and
		// the nodes beyond the seats of their priority level would wait. A
		// wide watch whose state its watcher builds keeps its seat: nothing
		// else bounds that work, and such watches are an operator's few.
		utilflowcontrol.WatchInitialized(ctx)
	}
	return w, err
}

func filter(ctx context.Context, opts *metainternalversion.ListOptions) viewstore.Filter {
	return viewstore.Filter{Namespace: genericapirequest.NamespaceValue(ctx), Fields: opts.FieldSelector, Labels: opts.LabelSelector}
}
