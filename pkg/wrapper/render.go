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
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
)

// renderSlices turns a node's view of a Service into the EndpointSlices
// kube-proxy reads, each keeping its source slice's name and labels (its
// Service name and manager among them), and the hints the view kept: only an
// unpruned view has any.
func renderSlices(view *topologyv1alpha1.NodeEndpoints) []runtime.Object {
	out := make([]runtime.Object, 0, len(view.Slices))
	for _, slice := range view.Slices {
		out = append(out, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: view.Namespace, Name: slice.Name, Labels: slice.Labels, CreationTimestamp: view.CreationTimestamp},
			AddressType: slice.AddressType,
			Ports:       slice.Ports,
			Endpoints:   slice.Endpoints,
		})
	}
	return out
}

// renderEndpoints turns a node's view of a Service into the legacy Endpoints
// object: one subset per slice, ready endpoints as addresses, the others as
// not-ready addresses, as the endpoints controller writes them.
func renderEndpoints(view *topologyv1alpha1.NodeEndpoints) *corev1.Endpoints {
	out := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: view.Namespace, Name: view.ServiceName, Labels: view.Labels, CreationTimestamp: view.CreationTimestamp},
	}
	for _, slice := range view.Slices {
		if len(slice.Endpoints) == 0 {
			continue
		}
		subset := corev1.EndpointSubset{}
		for _, port := range slice.Ports {
			p := corev1.EndpointPort{AppProtocol: port.AppProtocol}
			if port.Name != nil {
				p.Name = *port.Name
			}
			if port.Port != nil {
				p.Port = *port.Port
			}
			if port.Protocol != nil {
				p.Protocol = *port.Protocol
			}
			subset.Ports = append(subset.Ports, p)
		}
		for _, ep := range slice.Endpoints {
			if len(ep.Addresses) == 0 {
				continue
			}
			address := corev1.EndpointAddress{IP: ep.Addresses[0], NodeName: ep.NodeName, TargetRef: ep.TargetRef}
			if ep.Hostname != nil {
				address.Hostname = *ep.Hostname
			}
			if topology.Ready(&ep) {
				subset.Addresses = append(subset.Addresses, address)
			} else {
				subset.NotReadyAddresses = append(subset.NotReadyAddresses, address)
			}
		}
		out.Subsets = append(out.Subsets, subset)
	}
	return out
}
