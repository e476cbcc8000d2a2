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

package wrapper

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
)

// Upstream keeps a state current with the cluster: this node's NodeEndpoints
// (only they cross the WAN, not the cluster's EndpointSlices), the Services,
// this Node and the ServiceCIDRs. While the cluster cannot be reached, the
// reflectors retry and the state stays as it was.
//
// NodeEndpoints and Services, nearly all a node holds, are read without an
// informer cache: each is encoded as it is served and its decoded form is
// dropped, so the wrapper holds a node's view once, compactly.
type Upstream struct {
	state    *State
	kube     kubernetes.Interface
	gridview versioned.Interface
	node     informers.SharedInformerFactory
	shared   informers.SharedInformerFactory
	synced   []cache.InformerSynced

	viewSource, serviceSource *source

	// nodeName is the node whose views are served; no other's.
	nodeName string

	// apiServer reads the annotations of default/kubernetes's Endpoints and
	// EndpointSlice that name an edge-local API server.
	apiServer informers.SharedInformerFactory

	// mu guards what follows: this node's views by name, the Services and
	// the views of their slices, as served, and the local endpoint.
	mu       sync.Mutex
	views    map[types.NamespacedName]*viewRecord
	services map[types.NamespacedName]*serviceViews
	local    localEndpoints
}

// upstreamContentTypes ask for protobuf, which is smaller on the WAN and
// cheaper to decode, and take JSON from a server that does not offer it.
const upstreamContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON

// NewUpstream watches the cluster behind config on behalf of node. A local
// endpoint given replaces the endpoints of default/kubernetes whatever the
// annotations say.
func NewUpstream(config *rest.Config, node string, state *State, local *LocalEndpoint) (*Upstream, error) {
	config = rest.CopyConfig(config)
	config.AcceptContentTypes, config.ContentType = upstreamContentTypes, runtime.ContentTypeProtobuf
	config.Wrap(countReceivedBytes)
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	gridview, err := versioned.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("creating the gridview client: %w", err)
	}
	return newUpstream(kube, gridview, node, state, local)
}

func newUpstream(kube kubernetes.Interface, gridview versioned.Interface, node string, state *State, local *LocalEndpoint) (*Upstream, error) {
	lean := informers.WithTransform(compact)
	u := &Upstream{
		nodeName: node, state: state, kube: kube, gridview: gridview,
		shared: informers.NewSharedInformerFactoryWithOptions(kube, 0, lean),
		node: informers.NewSharedInformerFactoryWithOptions(kube, 0, lean, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = "metadata.name=" + node
		})),
		apiServer: informers.NewSharedInformerFactoryWithOptions(kube, 0, lean, informers.WithNamespace(kubernetesService.Namespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + kubernetesService.Name })),
		views:    map[types.NamespacedName]*viewRecord{},
		services: map[types.NamespacedName]*serviceViews{},
		local:    localEndpoints{flag: local, warned: map[string]bool{}},
	}
	u.viewSource = &source{record: recordView, put: u.setView, remove: u.deleteView, replace: u.replaceViews}
	u.serviceSource = &source{record: recordService, put: u.setService, remove: u.deleteService, replace: u.replaceServices}
	u.synced = append(u.synced, u.viewSource.HasSynced, u.serviceSource.HasSynced)
	mirror := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { state.Set(obj.(runtime.Object)) },
		UpdateFunc: func(_, obj any) { state.Set(obj.(runtime.Object)) },
		DeleteFunc: func(obj any) {
			if object := unwrap(obj); object != nil {
				state.Delete(kindOf(object), keyOf(object))
			}
		},
	}
	for _, informer := range []cache.SharedIndexInformer{
		u.node.Core().V1().Nodes().Informer(),
		u.shared.Networking().V1().ServiceCIDRs().Informer(),
	} {
		if err := u.handle(informer, mirror); err != nil {
			return nil, err
		}
	}
	refresh := func(any) { u.refreshLocalEndpoint() }
	annotated := cache.ResourceEventHandlerFuncs{AddFunc: refresh, UpdateFunc: func(_, obj any) { refresh(obj) }, DeleteFunc: refresh}
	for _, informer := range []cache.SharedIndexInformer{
		u.apiServer.Core().V1().Endpoints().Informer(),
		u.apiServer.Discovery().V1().EndpointSlices().Informer(),
	} {
		if err := u.handle(informer, annotated); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// start runs the informers and the reflectors until ctx ends.
func (u *Upstream) start(ctx context.Context) {
	u.shared.Start(ctx.Done())
	u.node.Start(ctx.Done())
	u.apiServer.Start(ctx.Done())
	views := u.gridview.TopologyV1alpha1().NodeEndpoints(metav1.NamespaceAll)
	ours := func(o metav1.ListOptions) metav1.ListOptions {
		o.FieldSelector = "nodeName=" + u.nodeName
		return o
	}
	go u.viewSource.run(ctx, "nodeendpoints", &topologyv1alpha1.NodeEndpoints{}, u.gridview,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return views.List(ctx, ours(o))
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return views.Watch(ctx, ours(o))
		})
	svcs := u.kube.CoreV1().Services(metav1.NamespaceAll)
	go u.serviceSource.run(ctx, "services", &corev1.Service{}, u.kube,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return svcs.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return svcs.Watch(ctx, o) })
}

// ours says whether a view is this node's. The wrapper asks only for its
// node's views, so another node's can only come from a server that is
// broken or not the one it trusts; served, it would route this node's
// traffic by another node's topology, and deleted, it would take this
// node's view of the same slice with it.
func (u *Upstream) ours(view *viewRecord) bool {
	return view.node == u.nodeName
}

// accept says whether to serve a view received, and counts and logs one
// that is another node's.
func (u *Upstream) accept(view *viewRecord) bool {
	if u.ours(view) {
		return true
	}
	rejectedViews.WithLabelValues("foreign_node").Inc()
	klog.InfoS("Warning: rejecting a view of another node", "view", view.name, "viewNode", view.node, "node", u.nodeName)
	return false
}

func (u *Upstream) handle(informer cache.SharedIndexInformer, handler cache.ResourceEventHandler) error {
	registration, err := informer.AddEventHandler(handler)
	if err != nil {
		return fmt.Errorf("watching upstream: %w", err)
	}
	u.synced = append(u.synced, registration.HasSynced)
	return nil
}

// unwrap returns a deleted object, also when the informer missed its
// deletion; nil when it is neither.
func unwrap(obj any) runtime.Object {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	object, _ := obj.(runtime.Object)
	return object
}

// setView serves a view of this node as an EndpointSlice and its Service's
// Endpoints. Another node's is not served, and when it comes under the name
// of one of this node's (a view turned into another node's), that one is
// no longer served either.
func (u *Upstream) setView(record any) {
	view := record.(*viewRecord)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.accept(view) {
		u.putView(view)
	} else {
		u.removeView(view.name)
	}
}

func (u *Upstream) deleteView(record any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.removeView(record.(*viewRecord).name)
}

// replaceViews makes records the views served, after a (re)list.
func (u *Upstream) replaceViews(records []any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	listed := make(map[types.NamespacedName]bool, len(records))
	for _, record := range records {
		view := record.(*viewRecord)
		listed[view.name] = true
		if u.accept(view) {
			u.putView(view)
		} else {
			u.removeView(view.name)
		}
	}
	for name := range u.views {
		if !listed[name] {
			u.removeView(name)
		}
	}
}

func (u *Upstream) setService(record any) {
	svc := record.(*serviceRecord)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.putService(svc.key, svc)
}

func (u *Upstream) deleteService(record any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.putService(record.(*serviceRecord).key, nil)
}

// replaceServices makes records the Services served, after a (re)list.
func (u *Upstream) replaceServices(records []any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	listed := make(map[types.NamespacedName]bool, len(records))
	for _, record := range records {
		svc := record.(*serviceRecord)
		listed[svc.key] = true
		u.putService(svc.key, svc)
	}
	for key, sv := range u.services {
		if sv.service != nil && !listed[key] {
			u.putService(key, nil)
		}
	}
}
