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

package scale

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/topology"
)

// Node labels of the scenario.
const (
	LabelUnit = "superedge.io/nodeunit"
	LabelZone = "topology.kubernetes.io/zone"
)

// orderedKeys is the ordered Services' preference: unit, zone, anything.
const orderedKeys = LabelUnit + "," + LabelZone + "," + topology.KeyAny

// UnitName and ZoneName are the label values of a unit and a zone.
func UnitName(unit int) string { return fmt.Sprintf("unit-%03d", unit) }
func ZoneName(zone int) string { return "zone-" + strconv.Itoa(zone) }

// NodeLabels are node i's labels in the model's current state.
func (m *Model) NodeLabels(i int) map[string]string {
	unit := m.Nodes[i].Unit
	return map[string]string{
		LabelUnit:                    UnitName(unit),
		LabelZone:                    ZoneName(m.ZoneOf(unit)),
		corev1.LabelHostname:         m.Nodes[i].Name,
		"node-role.gridview.io/edge": "",
	}
}

// NodeObject is node i as written.
func (m *Model) NodeObject(i int) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: m.Nodes[i].Name, Labels: m.NodeLabels(i)}}
}

// ModeAnnotations are the annotations a Service of each mode carries.
func ModeAnnotations(mode Mode) map[string]string {
	switch mode {
	case ModeAnyMatch:
		return map[string]string{topology.AnnotationTopologyKeys: `["` + LabelUnit + `"]`}
	case ModeOrdered:
		return map[string]string{topology.AnnotationGridviewKeys: orderedKeys}
	}
	return nil
}

// ServiceObject is svc as written: a ClusterIP Service with one port and
// no selector, since the harness writes its EndpointSlices itself.
func (m *Model) ServiceObject(svc *Service) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name, Namespace: m.Namespace,
			Labels:      map[string]string{"app": svc.Name, "scale.gridview.io/scenario": m.Scale.Name},
			Annotations: ModeAnnotations(svc.Mode),
		},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

// SliceObject is sl of svc as written: minimal, like the EndpointSlice
// controller's but without targetRef.
func (m *Model) SliceObject(svc *Service, sl *Slice) *discoveryv1.EndpointSlice {
	out := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: sl.Name, Namespace: m.Namespace,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: svc.Name,
				discoveryv1.LabelManagedBy:   "scale.gridview.io",
			},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, ep := range sl.Endpoints {
		unit := m.Nodes[ep.Node].Unit
		out.Endpoints = append(out.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{ep.Addr},
			NodeName:   ptr.To(m.Nodes[ep.Node].Name),
			Zone:       ptr.To(ZoneName(m.ZoneOf(unit))),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ep.Ready)},
		})
	}
	return out
}
