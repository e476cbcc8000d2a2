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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

// viewRecord is what the wrapper keeps of a NodeEndpoints: whose view of
// which slice of which Service it is, and the EndpointSlice it renders,
// encoded. The Service's labels and creation time name its Endpoints while
// the Service itself is not known.
type viewRecord struct {
	name      types.NamespacedName
	node      string
	service   string
	sliceName string
	slice     *stored
	// labels are compact (compactLabels).
	labels  []string
	created metav1.Time
}

// recordView renders a NodeEndpoints; a record passes through.
func recordView(obj any) (any, error) {
	switch obj := obj.(type) {
	case *viewRecord:
		return obj, nil
	case *topologyv1alpha1.NodeEndpoints:
		slice, err := store(renderSlice(obj))
		if err != nil {
			return nil, err
		}
		return &viewRecord{
			name: types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}, node: obj.NodeName, service: obj.ServiceName,
			slice: slice, labels: compactLabels(obj.Labels), created: obj.CreationTimestamp, sliceName: obj.Slice.Name,
		}, nil
	}
	return nil, errNotRecorded(obj)
}

func (r *viewRecord) serviceKey() types.NamespacedName {
	return types.NamespacedName{Namespace: r.name.Namespace, Name: r.service}
}

// serviceRecord is what the wrapper keeps of a Service besides the Service
// it serves: what its Endpoints object needs.
type serviceRecord struct {
	key types.NamespacedName
	// service is the Service encoded; once served, the state's own.
	service  *stored
	external bool
	// labels are compact (compactLabels).
	labels  []string
	created metav1.Time
}

// recordService encodes a Service; a record passes through.
func recordService(obj any) (any, error) {
	switch obj := obj.(type) {
	case *serviceRecord:
		return obj, nil
	case *corev1.Service:
		if _, err := compact(obj); err != nil {
			return nil, err
		}
		svc, err := store(obj)
		if err != nil {
			return nil, err
		}
		return &serviceRecord{
			key: keyOf(obj), service: svc, external: obj.Spec.Type == corev1.ServiceTypeExternalName,
			labels: compactLabels(obj.Labels), created: obj.CreationTimestamp,
		}, nil
	}
	return nil, errNotRecorded(obj)
}

// serviceViews is what the wrapper keeps of one Service: the Service and
// this node's views of its slices, each rendered once, and what it serves
// for them. A view changes one slice: only that slice is encoded and
// published again, and the Endpoints object, assembled from the slices when
// served, shares them with its previous version.
type serviceViews struct {
	// service is nil while the Service is not known.
	service *serviceRecord
	// views are sorted by slice name.
	views []*viewRecord
	// served are the EndpointSlices served for the Service, sorted by name:
	// the views', or the local endpoint's.
	served []*stored
}

// hasEndpoints says whether a Service has an Endpoints object: every Service
// but an ExternalName one has a view, as it had when views were per Service,
// and a view received for a Service not known yet has one too.
func (sv *serviceViews) hasEndpoints() bool {
	if sv.service != nil {
		return !sv.service.external
	}
	return len(sv.views) > 0
}

// endpointsMeta names the Endpoints object as the Service and gives it the
// Service's labels, as views carry them.
func (sv *serviceViews) endpointsMeta(key types.NamespacedName) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
	switch {
	case sv.service != nil:
		meta.Labels, meta.CreationTimestamp = labelMap(sv.service.labels), sv.service.created
	case len(sv.views) > 0:
		meta.Labels, meta.CreationTimestamp = labelMap(sv.views[0].labels), sv.views[0].created
	}
	return meta
}

func (sv *serviceViews) find(slice string) (int, bool) {
	return slices.BinarySearchFunc(sv.views, slice, func(v *viewRecord, slice string) int { return strings.Compare(v.sliceName, slice) })
}

// viewsOf returns the record of a Service, made when missing.
func (u *Upstream) viewsOf(key types.NamespacedName) *serviceViews {
	sv, ok := u.services[key]
	if !ok {
		sv = &serviceViews{}
		u.services[key] = sv
	}
	return sv
}

// putView records a view of this node, replacing the one of the same name,
// and serves its Service again. Callers hold u.mu.
func (u *Upstream) putView(r *viewRecord) {
	if old, ok := u.views[r.name]; ok {
		if old == r {
			return
		}
		if old.serviceKey() != r.serviceKey() || old.sliceName != r.sliceName {
			u.removeView(old.name)
		}
	}
	u.views[r.name] = r
	key := r.serviceKey()
	sv := u.viewsOf(key)
	if i, ok := sv.find(r.sliceName); ok {
		sv.views[i] = r
	} else {
		sv.views = slices.Insert(sv.views, i, r)
	}
	u.serve(key)
}

// removeView forgets a view by its name and serves its Service again.
// Callers hold u.mu.
func (u *Upstream) removeView(name types.NamespacedName) {
	r, ok := u.views[name]
	if !ok {
		return
	}
	delete(u.views, name)
	key := r.serviceKey()
	sv, ok := u.services[key]
	if !ok {
		return
	}
	if i, ok := sv.find(r.sliceName); ok && sv.views[i] == r {
		sv.views = slices.Delete(sv.views, i, i+1)
	}
	u.serve(key)
}

// putService records a Service and serves it; nil forgets it. Callers hold
// u.mu.
func (u *Upstream) putService(key types.NamespacedName, r *serviceRecord) {
	if r != nil {
		// The state's own, which a re-read of the same content leaves
		// served: the record keeps no second encoding of it.
		r.service = u.state.SetStored(r.service)
	} else {
		u.state.Delete(services, key)
	}
	u.viewsOf(key).service = r
	u.serve(key)
}

// serve brings what the state serves for a Service in line with what the
// wrapper knows of it: its EndpointSlices, the local endpoint's for
// default/kubernetes when one is active, and its Endpoints. Only slices
// that changed are published. Callers hold u.mu.
func (u *Upstream) serve(key types.NamespacedName) {
	sv := u.services[key]
	var want []*stored
	// The local slice stands in for the Service's: none once the Service
	// and its views are gone, or it would outlive the record that tracks it.
	if key == kubernetesService && u.local.active != nil && (sv.service != nil || len(sv.views) > 0) {
		local := u.local.slice(key, sv)
		if !slices.Contains(sv.served, local) {
			local = u.state.SetStored(local)
			u.local.served = local
		}
		want = []*stored{local}
	} else {
		want = make([]*stored, 0, len(sv.views))
		for _, v := range sv.views {
			if !slices.Contains(sv.served, v.slice) {
				// The same content served already stays, and the view
				// refers to it.
				v.slice = u.state.SetStored(v.slice)
			}
			want = append(want, v.slice)
		}
	}
	for _, old := range sv.served {
		if !slices.ContainsFunc(want, func(s *stored) bool { return s.name == old.name }) {
			u.state.Delete(endpointSlices, old.key())
		}
	}
	sv.served = want
	switch {
	case !u.viewsListed || !u.servicesListed:
		// The Endpoints wait for the first lists of views and Services: a
		// Service seen before its views would be served with no subset,
		// then with its subsets again, and views seen before their Service
		// with its labels and creation time as the views have them, then
		// as the Service has them, over the cache's.
	case sv.hasEndpoints():
		u.state.SetStored(storeEndpoints(sv.endpointsMeta(key), want))
	default:
		u.state.Delete(endpoints, key)
	}
	if sv.service == nil && len(sv.views) == 0 {
		delete(u.services, key)
	}
}

// dropUnrendered stops serving the Services, EndpointSlices and Endpoints
// the index does not hold: those loaded from the cache that went while the
// wrapper was away. Callers hold u.mu.
func (u *Upstream) dropUnrendered() {
	svcs, slices, legacy := map[types.NamespacedName]bool{}, map[types.NamespacedName]bool{}, map[types.NamespacedName]bool{}
	for key, sv := range u.services {
		svcs[key] = sv.service != nil
		for _, slice := range sv.served {
			slices[slice.key()] = true
		}
		legacy[key] = sv.hasEndpoints()
	}
	u.state.Retain(services, svcs)
	u.state.Retain(endpointSlices, slices)
	u.state.Retain(endpoints, legacy)
}
