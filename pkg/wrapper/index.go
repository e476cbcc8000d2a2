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
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

// serviceViews is what the wrapper keeps of one Service: the Service and
// this node's views of its slices, each rendered once, and what it serves
// for them. A view changes one slice: only that slice is rendered again,
// and the Endpoints object is assembled from the subsets already rendered,
// sharing them with its previous version.
type serviceViews struct {
	// service is nil while the Service is not known.
	service *corev1.Service
	// views are by slice name.
	views map[string]*renderedView
	// served are the EndpointSlices served for the Service, by name: the
	// rendered ones, or the local endpoint's.
	served map[string]*discoveryv1.EndpointSlice
}

// renderedView is a view and what it renders into.
type renderedView struct {
	view   *topologyv1alpha1.NodeEndpoints
	slice  *discoveryv1.EndpointSlice
	subset corev1.EndpointSubset
	// hasSubset is false for a slice with no endpoint.
	hasSubset bool
}

func newRenderedView(view *topologyv1alpha1.NodeEndpoints) *renderedView {
	r := &renderedView{view: view, slice: renderSlice(view)}
	r.subset, r.hasSubset = renderSubset(r.slice)
	return r
}

// hasEndpoints says whether a Service has an Endpoints object: every Service
// but an ExternalName one has a view, as it had when views were per Service,
// and a view received for a Service not known yet has one too.
func (sv *serviceViews) hasEndpoints() bool {
	if sv.service != nil {
		return sv.service.Spec.Type != corev1.ServiceTypeExternalName
	}
	return len(sv.views) > 0
}

// endpointsMeta names the Endpoints object as the Service and gives it the
// Service's labels, as views carry them.
func (sv *serviceViews) endpointsMeta(key types.NamespacedName) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
	if sv.service != nil {
		meta.Labels, meta.CreationTimestamp = sv.service.Labels, sv.service.CreationTimestamp
		return meta
	}
	for _, name := range slices.Sorted(maps.Keys(sv.views)) {
		meta.Labels, meta.CreationTimestamp = sv.views[name].view.Labels, sv.views[name].view.CreationTimestamp
		break
	}
	return meta
}

// serviceOf is the Service a view is of.
func serviceOf(view *topologyv1alpha1.NodeEndpoints) types.NamespacedName {
	return types.NamespacedName{Namespace: view.Namespace, Name: view.ServiceName}
}

// viewsOf returns the record of a Service, made when missing.
func (u *Upstream) viewsOf(key types.NamespacedName) *serviceViews {
	sv, ok := u.services[key]
	if !ok {
		sv = &serviceViews{views: map[string]*renderedView{}, served: map[string]*discoveryv1.EndpointSlice{}}
		u.services[key] = sv
	}
	return sv
}

// putView records a view of this node, replacing the one of the same slice,
// and serves its Service again. Callers hold u.mu.
func (u *Upstream) putView(view *topologyv1alpha1.NodeEndpoints) {
	key := serviceOf(view)
	sv := u.viewsOf(key)
	if old, ok := sv.views[view.Slice.Name]; ok && old.view == view {
		return
	}
	sv.views[view.Slice.Name] = newRenderedView(view)
	u.serve(key)
}

// removeView forgets a view, as it was received, and serves its Service
// again. Callers hold u.mu.
func (u *Upstream) removeView(view *topologyv1alpha1.NodeEndpoints) {
	key := serviceOf(view)
	sv, ok := u.services[key]
	if !ok {
		return
	}
	if _, ok := sv.views[view.Slice.Name]; !ok {
		return
	}
	delete(sv.views, view.Slice.Name)
	u.serve(key)
}

// putService records a Service and serves it; nil forgets it. Callers hold
// u.mu.
func (u *Upstream) putService(key types.NamespacedName, svc *corev1.Service) {
	if svc != nil {
		u.state.Set(svc)
	} else {
		u.state.Delete(services, key)
	}
	u.viewsOf(key).service = svc
	u.serve(key)
}

// serve brings what the state serves for a Service in line with what the
// wrapper knows of it: its EndpointSlices, the local endpoint's for
// default/kubernetes when one is active, and its Endpoints. Only the slices
// rendered again are compared and published. Callers hold u.mu.
func (u *Upstream) serve(key types.NamespacedName) {
	sv := u.services[key]
	names := slices.Sorted(maps.Keys(sv.views))
	want := make(map[string]*discoveryv1.EndpointSlice, len(names))
	var subsets []corev1.EndpointSubset
	if key == kubernetesService && u.local.active != nil {
		slice := u.local.slice(key, sv, names)
		want[slice.Name] = slice
		subset, _ := renderSubset(slice)
		subsets = append(subsets, subset)
	} else {
		for _, name := range names {
			r := sv.views[name]
			want[name] = r.slice
			if r.hasSubset {
				subsets = append(subsets, r.subset)
			}
		}
	}
	for name, slice := range want {
		if sv.served[name] != slice {
			u.state.Set(slice)
		}
	}
	for name := range sv.served {
		if _, ok := want[name]; !ok {
			u.state.Delete(endpointSlices, types.NamespacedName{Namespace: key.Namespace, Name: name})
		}
	}
	sv.served = want
	if sv.hasEndpoints() {
		u.state.Set(renderEndpoints(sv.endpointsMeta(key), subsets))
	} else {
		u.state.Delete(endpoints, key)
	}
	if sv.service == nil && len(sv.views) == 0 {
		delete(u.services, key)
	}
}

// dropUnrendered stops serving the EndpointSlices and Endpoints the index
// does not render: those loaded from the cache that went while the wrapper
// was away. Callers hold u.mu.
func (u *Upstream) dropUnrendered() {
	slices, legacy := map[types.NamespacedName]bool{}, map[types.NamespacedName]bool{}
	for key, sv := range u.services {
		for name := range sv.served {
			slices[types.NamespacedName{Namespace: key.Namespace, Name: name}] = true
		}
		if sv.hasEndpoints() {
			legacy[key] = true
		}
	}
	u.state.Retain(endpointSlices, slices)
	u.state.Retain(endpoints, legacy)
}
