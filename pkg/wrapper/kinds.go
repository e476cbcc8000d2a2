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

// Package wrapper is gridview-wrapper's core: it keeps this node's view of
// the cluster (its NodeEndpoints rendered as EndpointSlices and Endpoints,
// Services, its own Node, ServiceCIDRs) and serves it to kube-proxy the way
// kube-apiserver would, from memory and, through WAN outages, from disk.
package wrapper

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kind is one resource the wrapper serves.
type kind struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	newObject  func() runtime.Object
	newList    func() runtime.Object
	// extraFieldNames are the field selector labels the kind supports
	// besides metadata.name and metadata.namespace, and extraFields reads
	// their values, in the same order.
	extraFieldNames []string
	extraFields     func(obj runtime.Object) []string
}

// supportsField says whether the kind's objects can be selected by field.
func (k *kind) supportsField(field string) bool {
	return field == "metadata.name" || field == "metadata.namespace" || slices.Contains(k.extraFieldNames, field)
}

var (
	services = &kind{
		gvr: corev1.SchemeGroupVersion.WithResource("services"), namespaced: true,
		newObject:       func() runtime.Object { return &corev1.Service{} },
		newList:         func() runtime.Object { return &corev1.ServiceList{} },
		extraFieldNames: []string{"spec.clusterIP", "spec.type"},
		extraFields: func(obj runtime.Object) []string {
			spec := &obj.(*corev1.Service).Spec
			return []string{spec.ClusterIP, string(spec.Type)}
		},
	}
	endpoints = &kind{
		gvr: corev1.SchemeGroupVersion.WithResource("endpoints"), namespaced: true,
		newObject: func() runtime.Object { return &corev1.Endpoints{} },
		newList:   func() runtime.Object { return &corev1.EndpointsList{} },
	}
	endpointSlices = &kind{
		gvr: discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), namespaced: true,
		newObject: func() runtime.Object { return &discoveryv1.EndpointSlice{} },
		newList:   func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
	}
	nodes = &kind{
		gvr:       corev1.SchemeGroupVersion.WithResource("nodes"),
		newObject: func() runtime.Object { return &corev1.Node{} },
		newList:   func() runtime.Object { return &corev1.NodeList{} },
	}
	serviceCIDRs = &kind{
		gvr:       networkingv1.SchemeGroupVersion.WithResource("servicecidrs"),
		newObject: func() runtime.Object { return &networkingv1.ServiceCIDR{} },
		newList:   func() runtime.Object { return &networkingv1.ServiceCIDRList{} },
	}
	kinds = []*kind{services, endpoints, endpointSlices, nodes, serviceCIDRs}
)

// kindOf is the served kind of an object.
func kindOf(obj runtime.Object) *kind {
	switch obj := obj.(type) {
	case *stored:
		return obj.kind
	case *corev1.Service:
		return services
	case *corev1.Endpoints:
		return endpoints
	case *discoveryv1.EndpointSlice:
		return endpointSlices
	case *corev1.Node:
		return nodes
	default:
		return serviceCIDRs
	}
}

// list wraps objects in the kind's list type.
func (k *kind) list(items []runtime.Object, rv uint64) (runtime.Object, error) {
	list := k.newList()
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	list.(metav1.ListInterface).SetResourceVersion(strconv.FormatUint(rv, 10))
	return list, nil
}

// bookmark is an empty object of a kind carrying a resourceVersion.
func (k *kind) bookmark(rv uint64, initialEventsEnd bool) runtime.Object {
	obj := k.newObject()
	m := obj.(metav1.Object)
	m.SetResourceVersion(strconv.FormatUint(rv, 10))
	if initialEventsEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return obj
}
