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
	"maps"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

// NodeObject is node i as written: as a kubelet registers it, with the
// status a kubelet reports, since a real Node's status, not its labels,
// makes up most of what an informer on Nodes holds.
func (m *Model) NodeObject(i int) *corev1.Node {
	name := m.Nodes[i].Name
	labels := m.NodeLabels(i)
	maps.Copy(labels, map[string]string{
		corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux",
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		corev1.LabelInstanceTypeStable: "edge.medium",
	})
	ip := fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)
	// A /24 of its own inside the cluster's pod range (localcluster.PodCIDR,
	// 100.64.0.0/10), which kube-controller-manager's node IPAM accepts
	// when it runs (SCALE_KUBELETS=kwok).
	podCIDR := fmt.Sprintf("100.%d.%d.0/24", 64+i>>8&0x3f, i&0xff)
	resources := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8005040Ki"),
		corev1.ResourceEphemeralStorage: resource.MustParse("61255492Ki"), corev1.ResourcePods: resource.MustParse("110"),
		"hugepages-1Gi": resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
	}
	since := metav1.NewTime(time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
	condition := func(kind corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: kind, Status: status, LastHeartbeatTime: since, LastTransitionTime: since, Reason: reason, Message: message}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{
			"node.alpha.kubernetes.io/ttl":                           "0",
			"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			"kubeadm.alpha.kubernetes.io/cri-socket":                 "unix:///run/containerd/containerd.sock",
		}},
		Spec: corev1.NodeSpec{PodCIDR: podCIDR, PodCIDRs: []string{podCIDR}},
		Status: corev1.NodeStatus{
			Capacity: resources, Allocatable: resources,
			Conditions: []corev1.NodeCondition{
				condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				// Letters in the ID: kwok's Node stage reads an all-digit
				// one back as a number and fails on the Node from then on.
				MachineID: fmt.Sprintf("ed9e%028x", i), SystemUUID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), BootID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i+1),
				KernelVersion: "6.12.0-1-amd64", OSImage: "Debian GNU/Linux 13 (trixie)", ContainerRuntimeVersion: "containerd://2.1.4",
				KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64",
			},
			Images: kubeletImages,
		},
	}
}

// kubeletImages is what a kubelet reports of an edge node's images: the
// system's and a few workloads', 20 of the 50 it reports at most.
var kubeletImages = func() []corev1.ContainerImage {
	images := make([]corev1.ContainerImage, 20)
	for i := range images {
		repo := fmt.Sprintf("registry.example.com/edge/workload-%02d", i)
		images[i] = corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("%s@sha256:%064x", repo, i*7919+1), repo + ":v1." + strconv.Itoa(i) + ".0"},
			SizeBytes: int64(20_000_000 + i*3_000_000),
		}
	}
	return images
}()

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

// ServiceObject is svc as written: a ClusterIP Service with one port; with
// Workloads it selects its workload's Pods, otherwise it has no selector,
// since the harness writes its EndpointSlices itself.
func (m *Model) ServiceObject(svc *Service) *corev1.Service {
	out := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name, Namespace: m.Namespace,
			Labels:      map[string]string{"app": svc.Name, "scale.gridview.io/scenario": m.Name},
			Annotations: ModeAnnotations(svc.Mode),
		},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	if m.Workloads {
		out.Spec.Selector = podLabels(svc)
	}
	return out
}

// podLabels are the labels of svc's Pods, which its selector selects.
func podLabels(svc *Service) map[string]string {
	return map[string]string{"app": svc.Name}
}

// podTemplate is the Pods of svc's workload with Workloads. kwok runs no
// container: the image is never pulled, and the port is the one the
// Service targets, written into its slices.
func podTemplate(svc *Service) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels(svc)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "registry.example.com/edge/workload:v1",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
		}}},
	}
}

// DeploymentObject runs a 20-endpoint Service's Pods with Workloads:
// Scale.Endpoints replicas, which the scheduler places.
func (m *Model) DeploymentObject(svc *Service) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: m.Namespace, Labels: podLabels(svc)},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(m.Scale.Endpoints)),
			Selector: &metav1.LabelSelector{MatchLabels: podLabels(svc)}, Template: podTemplate(svc)},
	}
}

// DaemonSetObject runs the big Service's Pods with Workloads: one on each
// Node.
func (m *Model) DaemonSetObject(svc *Service) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: m.Namespace, Labels: podLabels(svc)},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: podLabels(svc)}, Template: podTemplate(svc)},
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
