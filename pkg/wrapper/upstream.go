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
	"reflect"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/topology"
)

// Upstream keeps a state current with the cluster: this node's NodeEndpoints
// (only they cross the WAN, not the cluster's EndpointSlices), the Services,
// this Node and the ServiceCIDRs. While the cluster cannot be reached, the
// reflectors retry and the state stays as it was.
//
// Nothing is read through an informer cache: each object is encoded as it
// is served and its decoded form dropped, so the wrapper holds a node's view
// once, compactly.
type Upstream struct {
	state   *State
	clients *upstreamClients
	sources []*source

	// nodeName is the node whose views are served; no other's.
	nodeName string

	// mu guards what follows: this node's views by name, the Services and
	// the views of their slices, as served, and the local endpoint.
	mu       sync.Mutex
	views    map[types.NamespacedName]*viewRecord
	services map[types.NamespacedName]*serviceViews
	local    localEndpoints
	// viewsListed and servicesListed say the views and the Services have
	// been listed once: Endpoints are served once both have.
	viewsListed, servicesListed bool
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
	clients, err := newUpstreamClients(config, node)
	if err != nil {
		return nil, err
	}
	return newUpstream(clients, node, state, local), nil
}

func newUpstream(clients *upstreamClients, node string, state *State, local *LocalEndpoint) *Upstream {
	u := &Upstream{
		nodeName: node, state: state, clients: clients,
		views:    map[types.NamespacedName]*viewRecord{},
		services: map[types.NamespacedName]*serviceViews{},
		local:    localEndpoints{flag: local, warned: map[string]bool{}},
	}
	u.sources = []*source{
		{record: recordView, put: u.setView, remove: u.deleteView, replace: u.replaceViews},
		{record: recordService, put: u.setService, remove: u.deleteService, replace: u.replaceServices},
		u.mirror(nodes), u.mirror(serviceCIDRs),
		u.annotated(0, &corev1.Endpoints{}), u.annotated(1, &discoveryv1.EndpointSlice{}),
	}
	return u
}

// start runs a reflector for each collection until ctx ends.
func (u *Upstream) start(ctx context.Context) {
	c := u.clients
	for i, collection := range []collection{c.views, c.services, c.nodes, c.serviceCIDRs, c.apiEndpoints, c.apiSlices} {
		go u.sources[i].run(ctx, collection)
	}
}

// synced are the sources' HasSynced.
func (u *Upstream) synced() []cache.InformerSynced {
	out := make([]cache.InformerSynced, 0, len(u.sources))
	for _, s := range u.sources {
		out = append(out, s.HasSynced)
	}
	return out
}

// mirror serves a kind as upstream has it (this Node, the ServiceCIDRs).
func (u *Upstream) mirror(k *kind) *source {
	return &source{
		record: func(obj any) (any, error) {
			if kept, ok := obj.(*stored); ok {
				return kept, nil
			}
			object, ok := obj.(runtime.Object)
			if !ok || kindOf(object) != k {
				return nil, errNotRecorded(obj)
			}
			if _, err := compact(obj); err != nil {
				return nil, err
			}
			return store(object)
		},
		put:    func(record any) { u.state.SetStored(record.(*stored)) },
		remove: func(record any) { u.state.Delete(k, record.(*stored).key()) },
		replace: func(records []any) {
			keep := make(map[types.NamespacedName]bool, len(records))
			for _, record := range records {
				keep[record.(*stored).key()] = true
				u.state.SetStored(record.(*stored))
			}
			u.state.Retain(k, keep)
		},
	}
}

// annotated keeps default/kubernetes's Endpoints (i = 0) or EndpointSlice
// (i = 1) for the local endpoint annotations, and applies them.
func (u *Upstream) annotated(i int, expected runtime.Object) *source {
	set := func(record any) {
		u.mu.Lock()
		if m, ok := record.(metav1.Object); ok {
			u.local.annotated[i] = m
		} else {
			u.local.annotated[i] = nil
		}
		u.mu.Unlock()
		u.refreshLocalEndpoint()
	}
	// The watches ask for default/kubernetes only; whatever else a server
	// sends neither sets nor clears the local endpoint.
	isKubernetes := func(record any) bool {
		m, ok := record.(metav1.Object)
		return ok && m.GetNamespace() == kubernetesService.Namespace && m.GetName() == kubernetesService.Name
	}
	return &source{
		record: func(obj any) (any, error) {
			if reflect.TypeOf(obj) != reflect.TypeOf(expected) {
				return nil, errNotRecorded(obj)
			}
			return compact(obj)
		},
		put: func(record any) {
			if isKubernetes(record) {
				set(record)
			}
		},
		remove: func(record any) {
			if isKubernetes(record) {
				set(nil)
			}
		},
		replace: func(records []any) {
			for _, record := range records {
				if isKubernetes(record) {
					set(record)
					return
				}
			}
			set(nil)
		},
	}
}

// ours says whether a view is this node's. The wrapper asks only for its
// node's views, so another node's can only come from a server that is
// broken or not the one it trusts; served, it would route this node's
// traffic by another node's topology, and deleted, it would take this
// node's view of the same slice with it.
func (u *Upstream) ours(view *viewRecord) bool {
	return view.node == u.nodeName
}

// named says whether a view has the name of this node's view of its slice,
// <node>..<slice>, as gridview names them: views are kept by name and
// served by slice, and two names for one slice would make one view's
// deletion take the other's slice.
func (u *Upstream) named(view *viewRecord) bool {
	return view.name.Name == topology.Name(u.nodeName, view.sliceName)
}

// accept says whether to serve a view received, and counts and logs one
// that is another node's or misnamed.
func (u *Upstream) accept(view *viewRecord) bool {
	switch {
	case !u.ours(view):
		rejectedViews.WithLabelValues("foreign_node").Inc()
		klog.InfoS("Warning: rejecting a view of another node", "view", view.name, "viewNode", view.node, "node", u.nodeName)
		return false
	case !u.named(view):
		rejectedViews.WithLabelValues("misnamed").Inc()
		klog.InfoS("Warning: rejecting a view not named <node>..<slice>", "view", view.name, "slice", view.sliceName, "node", u.nodeName)
		return false
	}
	return true
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
	if !u.viewsListed {
		u.viewsListed = true
		u.serveAll()
	}
}

// serveAll serves every Service again: their Endpoints, once the views and
// the Services have both been listed. Callers hold u.mu.
func (u *Upstream) serveAll() {
	if !u.viewsListed || !u.servicesListed {
		return
	}
	for key := range u.services {
		u.serve(key)
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
	if !u.servicesListed {
		u.servicesListed = true
		u.serveAll()
	}
}
