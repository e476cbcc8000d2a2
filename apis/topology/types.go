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

package topology

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FallbackPolicy says where traffic goes when the sender's grid unit has no endpoint.
// +enum
type FallbackPolicy string

const (
	// FallbackNone keeps traffic inside the sender's grid unit, even when that
	// leaves the node without an endpoint (SuperEdge behaviour).
	FallbackNone FallbackPolicy = "None"
	// FallbackAny sends traffic to any endpoint of the Service when the sender's
	// grid unit has no ready endpoint.
	FallbackAny FallbackPolicy = "Any"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ServiceGrid is a Service whose traffic stays inside the grid unit of the node
// that sends it. gridview owns a Service named <name>-svc built from the template.
type ServiceGrid struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata. The name must leave room for the "-svc" suffix
	// of the owned Service: at most 59 characters.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired Service and its topology.
	Spec ServiceGridSpec `json:"spec"`
	// Status is the observed state of the owned Service.
	// +optional
	Status ServiceGridStatus `json:"status,omitempty"`
}

// ServiceGridSpec describes the Service and how its traffic is kept local.
type ServiceGridSpec struct {
	// GridUniqKey is the node label key whose value names a node's grid unit,
	// for example superedge.io/nodeunit. Nodes that share the label's value
	// route to each other's endpoints only. It must be a qualified name.
	// +required
	GridUniqKey string `json:"gridUniqKey"`
	// Fallback says what a node whose grid unit has no ready endpoint routes to:
	// "None" (default, SuperEdge behaviour) routes to nothing, "Any" routes to
	// every endpoint of the Service.
	// +optional
	Fallback FallbackPolicy `json:"fallback,omitempty"`
	// Template is the spec of the owned Service. Fields the API server allocates
	// (clusterIP, nodePorts) are kept on the Service when left empty here.
	Template corev1.ServiceSpec `json:"template"`
	// MinReady gates the grid unit by its ready capacity: with fallback Any,
	// a node routes inside its grid unit only while the unit holds at least
	// this many ready endpoints, and to every endpoint of the Service
	// otherwise. It is rendered into the Service's
	// topology.gridview.io/min-ready annotation. Unset, one ready endpoint
	// keeps traffic in the unit.
	// +optional
	MinReady *MinReady `json:"minReady,omitempty"`
}

// MinReady is how many ready endpoints a tier needs before it is chosen.
// Tiers are named by their node label key; "*" needs none.
type MinReady struct {
	// Default is the count of every tier PerKey does not name, from 1 to
	// 10000. Unset, such a tier needs one ready endpoint.
	// +optional
	Default *int32 `json:"default,omitempty"`
	// PerKey sets the count of single tiers, overriding Default. Each key must
	// be one the grid routes by: today its gridUniqKey.
	// +optional
	// +listType=map
	// +listMapKey=key
	PerKey []KeyMinReady `json:"perKey,omitempty"`
}

// KeyMinReady is the count of ready endpoints one tier needs.
type KeyMinReady struct {
	// Key is the node label key that names the tier.
	Key string `json:"key"`
	// Count is how many ready endpoints the tier needs, from 1 to 10000.
	Count int32 `json:"count"`
}

// ServiceGridConditionReady is true when the owned Service matches the spec.
const ServiceGridConditionReady = "Ready"

// ServiceGridStatus is the observed state of a ServiceGrid.
type ServiceGridStatus struct {
	// ServiceName is the name of the owned Service.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions holds the Ready condition of the ServiceGrid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LoadBalancer mirrors the owned Service's load balancer status.
	// +optional
	LoadBalancer corev1.LoadBalancerStatus `json:"loadBalancer,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ServiceGridList is a list of ServiceGrids.
type ServiceGridList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ServiceGrid `json:"items"`
}

// TopologyMode names how a Service's endpoints are pruned for a node.
// +enum
type TopologyMode string

const (
	// TopologyModeNone means the Service is not pruned: every endpoint is kept.
	TopologyModeNone TopologyMode = "None"
	// TopologyModeAnyMatch is SuperEdge's topologyKeys semantics: an endpoint
	// is kept when it shares the value of at least one key with the node.
	TopologyModeAnyMatch TopologyMode = "AnyMatch"
	// TopologyModeOrdered is gridview's ordered preference: the first key whose
	// tier holds a ready endpoint wins.
	TopologyModeOrdered TopologyMode = "Ordered"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodeEndpoints is what one node routes to of one source EndpointSlice: the
// slice pruned to the node's topology. It is computed, read-only, named
// <node>..<slice> (neither name may hold "..", so the name splits at its
// only one), and exists only while the node routes to at least one endpoint
// of the slice: a change of one endpoint reaches a node as one object of the
// size of one slice, as EndpointSlices do for kube-proxy.
type NodeEndpoints struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// NodeName is the node this view is for.
	NodeName string `json:"nodeName"`
	// ServiceName is the Service the slice belongs to, in the object's namespace.
	ServiceName string `json:"serviceName"`
	// Topology says how the endpoints were chosen.
	Topology TopologyInfo `json:"topology"`
	// Slice is the source EndpointSlice pruned to this node's view, keeping
	// the source's name and labels.
	Slice NodeEndpointSlice `json:"slice"`
}

// TopologyInfo says how a view was pruned.
type TopologyInfo struct {
	// Mode is None, AnyMatch or Ordered.
	Mode TopologyMode `json:"mode"`
	// Keys are the node label keys of the Service's topology annotation, in order.
	// +optional
	// +listType=atomic
	Keys []string `json:"keys,omitempty"`
	// MatchedKey is the key whose tier was chosen, "*" for every endpoint, or
	// empty when nothing matched.
	// +optional
	MatchedKey string `json:"matchedKey,omitempty"`
	// Rule names where the topology that pruned the view came from, as the
	// TOPOLOGY column shows it: Gridview (topology.gridview.io/keys on the
	// Service), SuperEdge (topologyKeys), OpenYurt (openyurt.io/topologyKeys),
	// Native(PreferSameNode), Native(PreferSameZone) or Native(PreferClose)
	// (spec.trafficDistribution), Namespace (topology.gridview.io/keys on the
	// Namespace), or Hints (service.kubernetes.io/topology-mode: Auto, whose
	// hints the view keeps). It is empty for a Service that is not pruned.
	// +optional
	Rule string `json:"rule,omitempty"`
}

// NodeEndpointSlice is one source EndpointSlice pruned to a node's view.
type NodeEndpointSlice struct {
	// Name is the source EndpointSlice's name.
	Name string `json:"name"`
	// Labels are the source EndpointSlice's labels, such as
	// kubernetes.io/service-name and endpointslice.kubernetes.io/managed-by.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// AddressType is the source slice's address type: IPv4, IPv6 or FQDN.
	AddressType discoveryv1.AddressType `json:"addressType"`
	// Ports are the source slice's ports.
	// +optional
	// +listType=atomic
	Ports []discoveryv1.EndpointPort `json:"ports,omitempty"`
	// Endpoints are the endpoints this node routes to. A pruned view (mode
	// AnyMatch or Ordered) carries no topology hints; a view of every
	// endpoint (mode None) keeps the source slice's hints.
	// +optional
	// +listType=atomic
	Endpoints []discoveryv1.Endpoint `json:"endpoints,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodeEndpointsList is a list of NodeEndpoints.
type NodeEndpointsList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []NodeEndpoints `json:"items"`
}

// Route names where a node's traffic to a Service goes: RouteLocal (its
// first tier), "fallback-N" (the tier of the N-th key after the first, "*"
// included), RouteAll (every endpoint: the Service is not pruned) or
// RouteNone (pruned to nothing).
const (
	RouteLocal = "local"
	RouteAll   = "all"
	RouteNone  = "none"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TopologyReview asks why a node routes a Service's traffic where it does, or
// where it would under a what-if. It is create-only and never stored.
type TopologyReview struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the question.
	Spec TopologyReviewSpec `json:"spec"`
	// Status is the answer, computed when the review is created.
	// +optional
	Status TopologyReviewStatus `json:"status,omitempty"`
}

// TopologyReviewSpec names the node and the Service, and what to assume.
type TopologyReviewSpec struct {
	// NodeName is the node whose routing is reviewed.
	NodeName string `json:"nodeName"`
	// ServiceName is the Service, in the review's namespace.
	ServiceName string `json:"serviceName"`
	// NodeLabels, when set, replace the node's own labels: what would the
	// node route to if it moved?
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// UnreadyNodes are nodes whose endpoints count as not ready: what would
	// the node route to if they went down?
	// +optional
	// +listType=set
	UnreadyNodes []string `json:"unreadyNodes,omitempty"`
}

// TopologyReviewStatus is how the node's view of the Service is chosen.
type TopologyReviewStatus struct {
	// Rule names the rule that decides, as NodeEndpoints' topology.rule
	// names it; empty when the Service is not pruned.
	// +optional
	Rule string `json:"rule,omitempty"`
	// Mode is None, AnyMatch or Ordered.
	// +optional
	Mode TopologyMode `json:"mode,omitempty"`
	// Tiers are the node's tiers of the rule's keys, in order.
	// +optional
	// +listType=atomic
	Tiers []TopologyTier `json:"tiers,omitempty"`
	// Route is local, fallback-N, all or none.
	// +optional
	Route string `json:"route,omitempty"`
	// Addresses are the ready addresses the node routes to, sorted.
	// +optional
	// +listType=atomic
	Addresses []string `json:"addresses,omitempty"`
	// Reason says in one sentence why.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// TopologyTier is the node's tier of one key and the endpoints in it.
type TopologyTier struct {
	// Key is the node label key, or "*" for every endpoint.
	Key string `json:"key"`
	// Value is the node's value of the key; empty for "*" and for a node
	// without the label, which is in no tier of it.
	// +optional
	Value string `json:"value,omitempty"`
	// Ready counts the ready endpoints in the tier.
	Ready int32 `json:"ready"`
	// Total counts every endpoint in the tier.
	Total int32 `json:"total"`
	// MinReady is how many ready endpoints the tier needs to be chosen.
	// +optional
	MinReady int32 `json:"minReady,omitempty"`
	// Chosen says that the node routes to endpoints of this tier.
	// +optional
	Chosen bool `json:"chosen,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ServiceRoutes is where every node routes one Service's traffic, the nodes
// grouped by their values of the rule's keys: computed, read-only, named
// as the Service.
type ServiceRoutes struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Rule names the rule that decides, as TopologyReview's status.rule.
	// +optional
	Rule string `json:"rule,omitempty"`
	// Mode is None, AnyMatch or Ordered.
	Mode TopologyMode `json:"mode"`
	// Keys are the rule's node label keys, in order.
	// +optional
	// +listType=atomic
	Keys []string `json:"keys,omitempty"`
	// Nodes counts every node.
	Nodes int32 `json:"nodes"`
	// ReadyEndpoints and TotalEndpoints count the Service's endpoints.
	ReadyEndpoints int32 `json:"readyEndpoints"`
	TotalEndpoints int32 `json:"totalEndpoints"`
	// Groups are the nodes that route alike.
	// +optional
	// +listType=atomic
	Groups []RouteGroup `json:"groups,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ServiceRoutesList is a list of ServiceRoutes.
type ServiceRoutesList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ServiceRoutes `json:"items"`
}

// RouteGroup is a set of nodes that route a Service alike.
type RouteGroup struct {
	// Labels are the nodes' values of the rule's label keys; a key the nodes
	// lack is absent.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Nodes counts the nodes of the group.
	Nodes int32 `json:"nodes"`
	// SampleNodes names a few of them.
	// +optional
	// +listType=atomic
	SampleNodes []string `json:"sampleNodes,omitempty"`
	// Route is local, fallback-N, all or none.
	Route string `json:"route"`
	// ChosenKey and ChosenValue name the widest tier the nodes route to.
	// +optional
	ChosenKey string `json:"chosenKey,omitempty"`
	// +optional
	ChosenValue string `json:"chosenValue,omitempty"`
	// ReadyEndpoints counts the ready endpoints a node of the group routes to.
	ReadyEndpoints int32 `json:"readyEndpoints"`
}
