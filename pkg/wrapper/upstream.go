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
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	topologyinformers "github.com/gridview/gridview/generated/informers/externalversions"
)

// Upstream keeps a state current with the cluster: this node's NodeEndpoints
// (only they cross the WAN, not the cluster's EndpointSlices), the Services,
// this Node and the ServiceCIDRs. While the cluster cannot be reached, the
// informers retry and the state stays as it was.
type Upstream struct {
	state  *State
	kube   kubernetes.Interface
	shared informers.SharedInformerFactory
	node   informers.SharedInformerFactory
	views  topologyinformers.SharedInformerFactory
	synced []cache.InformerSynced

	// nodeName is the node whose views are served; no other's.
	nodeName string

	// apiServer reads the annotations of default/kubernetes's Endpoints and
	// EndpointSlice that name an edge-local API server.
	apiServer informers.SharedInformerFactory

	// mu guards what follows: the Services and this node's views of their
	// slices, as rendered and served, and the local endpoint.
	mu       sync.Mutex
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
		nodeName: node, state: state, kube: kube,
		shared: informers.NewSharedInformerFactoryWithOptions(kube, 0, lean),
		node: informers.NewSharedInformerFactoryWithOptions(kube, 0, lean, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = "metadata.name=" + node
		})),
		views: topologyinformers.NewSharedInformerFactoryWithOptions(gridview, 0, topologyinformers.WithTransform(compact),
			topologyinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = "nodeName=" + node
			})),
		apiServer: informers.NewSharedInformerFactoryWithOptions(kube, 0, lean, informers.WithNamespace(kubernetesService.Namespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + kubernetesService.Name })),
		services: map[types.NamespacedName]*serviceViews{},
		local:    localEndpoints{flag: local, warned: map[string]bool{}},
	}
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
	err := u.handle(u.shared.Core().V1().Services().Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { u.setService(obj.(*corev1.Service)) },
		UpdateFunc: func(_, obj any) { u.setService(obj.(*corev1.Service)) },
		DeleteFunc: func(obj any) {
			if svc, ok := unwrap(obj).(*corev1.Service); ok {
				u.deleteService(svc)
			}
		},
	})
	if err != nil {
		return nil, err
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
	err = u.handle(u.views.Topology().V1alpha1().NodeEndpoints().Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if view := obj.(*topologyv1alpha1.NodeEndpoints); u.accept(view) {
				u.setView(nil, view)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			old, view := oldObj.(*topologyv1alpha1.NodeEndpoints), obj.(*topologyv1alpha1.NodeEndpoints)
			if u.accept(view) {
				u.setView(old, view)
			} else if u.ours(old) {
				u.deleteView(old)
			}
		},
		DeleteFunc: func(obj any) {
			if view, ok := unwrap(obj).(*topologyv1alpha1.NodeEndpoints); ok && u.ours(view) {
				u.deleteView(view)
			}
		},
	})
	return u, err
}

// ours says whether a view is this node's. The wrapper asks only for its
// node's views, so another node's can only come from a server that is
// broken or not the one it trusts; served, it would route this node's
// traffic by another node's topology, and deleted, it would take this
// node's view of the same slice with it.
func (u *Upstream) ours(view *topologyv1alpha1.NodeEndpoints) bool {
	return view.NodeName == u.nodeName
}

// accept says whether to serve a view received, and counts and logs one
// that is another node's.
func (u *Upstream) accept(view *topologyv1alpha1.NodeEndpoints) bool {
	if u.ours(view) {
		return true
	}
	rejectedViews.WithLabelValues("foreign_node").Inc()
	klog.InfoS("Warning: rejecting a view of another node", "view", klog.KObj(view), "viewNode", view.NodeName, "node", u.nodeName)
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

// setView serves a view as an EndpointSlice and its Service's Endpoints. A
// view whose slice or Service changed (an upstream that renamed nothing
// would not do it, but a broken one might) first stops serving the old one.
func (u *Upstream) setView(old, view *topologyv1alpha1.NodeEndpoints) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if old != nil && u.ours(old) && (serviceOf(old) != serviceOf(view) || old.Slice.Name != view.Slice.Name) {
		u.removeView(old)
	}
	u.putView(view)
}

func (u *Upstream) deleteView(view *topologyv1alpha1.NodeEndpoints) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.removeView(view)
}

func (u *Upstream) setService(svc *corev1.Service) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.putService(keyOf(svc), svc)
}

func (u *Upstream) deleteService(svc *corev1.Service) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.putService(keyOf(svc), nil)
}
