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

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
)

// renderSlice turns a node's view of one EndpointSlice into the
// EndpointSlice kube-proxy reads, keeping its source's name and labels (its
// Service name and manager among them) and the hints the view kept: only an
// unpruned view has any. The slice shares the view's content: it is encoded
// for the state at once, and the view dropped.
func renderSlice(view *topologyv1alpha1.NodeEndpoints) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: view.Namespace, Name: view.Slice.Name, Labels: view.Slice.Labels, CreationTimestamp: view.CreationTimestamp},
		AddressType: view.Slice.AddressType,
		Ports:       view.Slice.Ports,
		Endpoints:   view.Slice.Endpoints,
	}
}

// renderSubset turns one rendered slice into the subset of the legacy
// Endpoints object it stands for: ready endpoints as addresses, the others
// as not-ready addresses, as the endpoints controller writes them; false for
// a slice with no endpoint, which has no subset.
func renderSubset(slice *discoveryv1.EndpointSlice) (corev1.EndpointSubset, bool) {
	subset := corev1.EndpointSubset{}
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
	if len(slice.Endpoints) == 0 {
		return subset, false
	}
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
	return subset, true
}
