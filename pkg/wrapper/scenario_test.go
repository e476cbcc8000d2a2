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
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
)

// nodeScenario is what the cluster holds for one node of issue 12's
// edge-10k scenario, as the upstream lists it: every Service, this node's
// NodeEndpoints (its pruned view of every slice it routes to an endpoint
// of), its Node and the ServiceCIDRs.
type nodeScenario struct {
	node         string
	services     []runtime.Object
	views        []runtime.Object
	nodes        []runtime.Object
	serviceCIDRs []runtime.Object
	endpoints    int
}

// The edge-10k fleet: nodes in units of 10, units spread over 10 zones;
// Services alternately any-match on the unit, any-match, ordered (unit,
// zone, anything) and unannotated, each with 20 ready endpoints on random
// nodes in 1 to 3 slices; and one unannotated Service with an endpoint on
// every node in slices of 100 (a DaemonSet behind a Service).
const (
	fleetNodes     = 10_000
	fleetUnitSize  = 10
	fleetZones     = 10
	fleetServices  = 5_000
	fleetEndpoints = 20
	fleetBigSlice  = 100
	labelUnit      = "superedge.io/nodeunit"
	labelZone      = "topology.kubernetes.io/zone"
)

func unitOf(node int) int { return node / fleetUnitSize }
func zoneOf(node int) int { return unitOf(node) / (fleetNodes / fleetUnitSize / fleetZones) }

// newNodeScenario builds node viewer's share of the edge-10k scenario,
// pruned by DESIGN.md's rules: unannotated Services are seen whole,
// any-match ones on the unit only, ordered ones on the first of unit, zone
// and every endpoint that holds one (all are ready). Objects carry what
// kube-apiserver adds: a uid, a resourceVersion, a creation time and, on
// Services and Nodes, a field manager.
func newNodeScenario(viewer int) *nodeScenario {
	rng := rand.New(rand.NewPCG(12, 1))
	created := metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	rv := 1000
	stamp := func(meta *metav1.ObjectMeta, manager string) {
		rv++
		meta.UID = types.UID(fmt.Sprintf("6f1c7a2e-0000-4000-8000-%012d", rv))
		meta.ResourceVersion = strconv.Itoa(rv)
		meta.CreationTimestamp = created
		if manager == "" {
			return
		}
		meta.ManagedFields = []metav1.ManagedFieldsEntry{{
			Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{}},"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:internalTrafficPolicy":{},"f:ports":{".":{},"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},"f:sessionAffinity":{},"f:type":{}}}`),
		}}
	}
	nodeName := func(n int) string { return fmt.Sprintf("edge-%05d", n) }
	zoneName := func(n int) string { return "zone-" + strconv.Itoa(zoneOf(n)) }
	s := &nodeScenario{node: nodeName(viewer)}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.node, Labels: map[string]string{
		labelUnit: fmt.Sprintf("unit-%03d", unitOf(viewer)), labelZone: zoneName(viewer), corev1.LabelHostname: s.node,
	}}}
	stamp(&node.ObjectMeta, "kubelet")
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.0.10"}, {Type: corev1.NodeHostName, Address: s.node}}
	s.nodes = []runtime.Object{node}
	cidr := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/16"}}}
	stamp(&cidr.ObjectMeta, "kube-apiserver")
	s.serviceCIDRs = []runtime.Object{cidr}

	tiers := []func(n int) bool{
		func(n int) bool { return unitOf(n) == unitOf(viewer) },
		func(n int) bool { return zoneOf(n) == zoneOf(viewer) },
		func(int) bool { return true },
	}
	ordered := []string{labelUnit, labelZone, topology.KeyAny}
	address := 0
	addService := func(name string, mode topologyv1alpha1.TopologyMode, groups [][]int) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "scale", Name: name, Labels: map[string]string{"app": name, "scale.gridview.io/scenario": "edge-10k"}},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: fmt.Sprintf("10.96.%d.%d", 1+len(s.services)>>8, len(s.services)&0xff),
				Ports:           []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}},
				SessionAffinity: corev1.ServiceAffinityNone, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			},
		}
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		var keys []string
		keep, matched := tiers[2], ""
		switch mode {
		case topologyv1alpha1.TopologyModeAnyMatch:
			svc.Annotations = map[string]string{topology.AnnotationTopologyKeys: `["` + labelUnit + `"]`}
			keys, keep, matched = ordered[:1], tiers[0], labelUnit
		case topologyv1alpha1.TopologyModeOrdered:
			svc.Annotations = map[string]string{topology.AnnotationGridviewKeys: strings.Join(ordered, ",")}
			keys = ordered
			for k := range tiers {
				if containsFunc(slices.Concat(groups...), tiers[k]) {
					keep, matched = tiers[k], ordered[k]
					break
				}
			}
		}
		stamp(&svc.ObjectMeta, "kubectl-client-side-apply")
		s.services = append(s.services, svc)
		for i, members := range groups {
			slice := topologyv1alpha1.NodeEndpointSlice{
				Name:        fmt.Sprintf("%s-%d", name, i),
				Labels:      map[string]string{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"},
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
			}
			for _, n := range members {
				address++
				if !keep(n) {
					continue
				}
				slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
					Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", 100+address>>16, address>>8&0xff, address&0xff)},
					NodeName:   ptr.To(nodeName(n)),
					Zone:       ptr.To(zoneName(n)),
					Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
					TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "scale", Name: fmt.Sprintf("%s-%d", name, n), UID: types.UID(fmt.Sprintf("0d9c3b1a-1111-4000-8000-%012d", address))},
				})
			}
			if len(slice.Endpoints) == 0 {
				continue
			}
			s.endpoints += len(slice.Endpoints)
			view := &topologyv1alpha1.NodeEndpoints{
				ObjectMeta:  metav1.ObjectMeta{Namespace: svc.Namespace, Name: topology.Name(s.node, slice.Name), Labels: svc.Labels},
				NodeName:    s.node,
				ServiceName: name,
				Topology:    topologyv1alpha1.TopologyInfo{Mode: mode, Keys: keys, MatchedKey: matched},
				Slice:       slice,
			}
			stamp(&view.ObjectMeta, "")
			s.views = append(s.views, view)
		}
	}
	modes := []topologyv1alpha1.TopologyMode{topologyv1alpha1.TopologyModeAnyMatch, topologyv1alpha1.TopologyModeAnyMatch, topologyv1alpha1.TopologyModeOrdered, topologyv1alpha1.TopologyModeNone}
	for i := range fleetServices {
		members := rng.Perm(fleetNodes)[:fleetEndpoints]
		count := 1 + rng.IntN(3)
		groups := make([][]int, count)
		for e, n := range members {
			groups[e%count] = append(groups[e%count], n)
		}
		addService(fmt.Sprintf("svc-%05d", i), modes[i%4], groups)
	}
	var daemon [][]int
	for n := range fleetNodes {
		if n%fleetBigSlice == 0 {
			daemon = append(daemon, nil)
		}
		daemon[len(daemon)-1] = append(daemon[len(daemon)-1], n)
	}
	addService("daemon", topologyv1alpha1.TopologyModeNone, daemon)
	return s
}

func containsFunc(nodes []int, in func(int) bool) bool {
	for _, n := range nodes {
		if in(n) {
			return true
		}
	}
	return false
}

// objectsAt returns what the upstream serves at a collection path, and
// false for a path it has no objects at (an empty list is served).
func (s *nodeScenario) objectsAt(path string) []runtime.Object {
	switch {
	case strings.HasSuffix(path, "/nodeendpoints"):
		return s.views
	case path == "/api/v1/services":
		return s.services
	case path == "/api/v1/nodes":
		return s.nodes
	case strings.HasSuffix(path, "/servicecidrs"):
		return s.serviceCIDRs
	}
	return nil
}
