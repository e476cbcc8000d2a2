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

package v1alpha1

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

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ServiceGrid is a Service whose traffic stays inside the grid unit of the node
// that sends it. gridview owns a Service named <name>-svc built from the template.
type ServiceGrid struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata. The name must leave room for the "-svc" suffix
	// of the owned Service: at most 59 characters.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired Service and its topology.
	Spec ServiceGridSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state of the owned Service.
	// +optional
	Status ServiceGridStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ServiceGridSpec describes the Service and how its traffic is kept local.
type ServiceGridSpec struct {
	// GridUniqKey is the node label key whose value names a node's grid unit,
	// for example superedge.io/nodeunit. Nodes that share the label's value
	// route to each other's endpoints only. It must be a qualified name.
	// +required
	GridUniqKey string `json:"gridUniqKey" protobuf:"bytes,1,opt,name=gridUniqKey"`
	// Fallback says what a node whose grid unit has no ready endpoint routes to:
	// "None" (default, SuperEdge behaviour) routes to nothing, "Any" routes to
	// every endpoint of the Service.
	// +optional
	// +default="None"
	Fallback FallbackPolicy `json:"fallback,omitempty" protobuf:"bytes,2,opt,name=fallback,casttype=FallbackPolicy"`
	// Template is the spec of the owned Service. Fields the API server allocates
	// (clusterIP, nodePorts) are kept on the Service when left empty here.
	Template corev1.ServiceSpec `json:"template" protobuf:"bytes,3,opt,name=template"`
	// MinReady gates the grid unit by its ready capacity: with fallback Any,
	// a node routes inside its grid unit only while the unit holds at least
	// this many ready endpoints, and to every endpoint of the Service
	// otherwise. It is rendered into the Service's
	// topology.gridview.io/min-ready annotation. Unset, one ready endpoint
	// keeps traffic in the unit.
	// +optional
	MinReady *MinReady `json:"minReady,omitempty" protobuf:"bytes,4,opt,name=minReady"`
}

// MinReady is how many ready endpoints a tier needs before it is chosen.
// Tiers are named by their node label key; "*" needs none.
type MinReady struct {
	// Default is the count of every tier PerKey does not name, from 1 to
	// 10000. Unset, such a tier needs one ready endpoint.
	// +optional
	Default *int32 `json:"default,omitempty" protobuf:"varint,1,opt,name=default"`
	// PerKey sets the count of single tiers, overriding Default. Each key must
	// be one the grid routes by: today its gridUniqKey.
	// +optional
	// +listType=map
	// +listMapKey=key
	PerKey []KeyMinReady `json:"perKey,omitempty" protobuf:"bytes,2,rep,name=perKey"`
}

// KeyMinReady is the count of ready endpoints one tier needs.
type KeyMinReady struct {
	// Key is the node label key that names the tier.
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
	// Count is how many ready endpoints the tier needs, from 1 to 10000.
	Count int32 `json:"count" protobuf:"varint,2,opt,name=count"`
}

// ServiceGridConditionReady is true when the owned Service matches the spec.
const ServiceGridConditionReady = "Ready"

// ServiceGridStatus is the observed state of a ServiceGrid.
type ServiceGridStatus struct {
	// ServiceName is the name of the owned Service.
	// +optional
	ServiceName string `json:"serviceName,omitempty" protobuf:"bytes,1,opt,name=serviceName"`
	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,2,opt,name=observedGeneration"`
	// Conditions holds the Ready condition of the ServiceGrid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// LoadBalancer mirrors the owned Service's load balancer status.
	// +optional
	LoadBalancer corev1.LoadBalancerStatus `json:"loadBalancer,omitempty" protobuf:"bytes,4,opt,name=loadBalancer"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ServiceGridList is a list of ServiceGrids.
type ServiceGridList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []ServiceGrid `json:"items" protobuf:"bytes,2,rep,name=items"`
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

// +genclient
// +genclient:onlyVerbs=get,list,watch
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
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// NodeName is the node this view is for.
	NodeName string `json:"nodeName" protobuf:"bytes,2,opt,name=nodeName"`
	// ServiceName is the Service the slice belongs to, in the object's namespace.
	ServiceName string `json:"serviceName" protobuf:"bytes,3,opt,name=serviceName"`
	// Topology says how the endpoints were chosen.
	Topology TopologyInfo `json:"topology" protobuf:"bytes,4,opt,name=topology"`
	// Slice is the source EndpointSlice pruned to this node's view, keeping
	// the source's name and labels.
	Slice NodeEndpointSlice `json:"slice" protobuf:"bytes,5,opt,name=slice"`
}

// TopologyInfo says how a view was pruned.
type TopologyInfo struct {
	// Mode is None, AnyMatch or Ordered.
	Mode TopologyMode `json:"mode" protobuf:"bytes,1,opt,name=mode,casttype=TopologyMode"`
	// Keys are the node label keys of the Service's topology annotation, in order.
	// +optional
	// +listType=atomic
	Keys []string `json:"keys,omitempty" protobuf:"bytes,2,rep,name=keys"`
	// MatchedKey is the key whose tier was chosen, "*" for every endpoint, or
	// empty when nothing matched.
	// +optional
	MatchedKey string `json:"matchedKey,omitempty" protobuf:"bytes,3,opt,name=matchedKey"`
	// Rule names where the topology that pruned the view came from, as the
	// TOPOLOGY column shows it: Gridview (topology.gridview.io/keys on the
	// Service), SuperEdge (topologyKeys), OpenYurt (openyurt.io/topologyKeys),
	// Native(PreferSameNode), Native(PreferSameZone) or Native(PreferClose)
	// (spec.trafficDistribution), Namespace (topology.gridview.io/keys on the
	// Namespace), or Hints (service.kubernetes.io/topology-mode: Auto, whose
	// hints the view keeps). It is empty for a Service that is not pruned.
	// +optional
	Rule string `json:"rule,omitempty" protobuf:"bytes,4,opt,name=rule"`
}

// NodeEndpointSlice is one source EndpointSlice pruned to a node's view.
type NodeEndpointSlice struct {
	// Name is the source EndpointSlice's name.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Labels are the source EndpointSlice's labels, such as
	// kubernetes.io/service-name and endpointslice.kubernetes.io/managed-by.
	// +optional
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,2,rep,name=labels"`
	// AddressType is the source slice's address type: IPv4, IPv6 or FQDN.
	AddressType discoveryv1.AddressType `json:"addressType" protobuf:"bytes,3,opt,name=addressType,casttype=k8s.io/api/discovery/v1.AddressType"`
	// Ports are the source slice's ports.
	// +optional
	// +listType=atomic
	Ports []discoveryv1.EndpointPort `json:"ports,omitempty" protobuf:"bytes,4,rep,name=ports"`
	// Endpoints are the endpoints this node routes to. A pruned view (mode
	// AnyMatch or Ordered) carries no topology hints; a view of every
	// endpoint (mode None) keeps the source slice's hints.
	// +optional
	// +listType=atomic
	Endpoints []discoveryv1.Endpoint `json:"endpoints,omitempty" protobuf:"bytes,5,rep,name=endpoints"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodeEndpointsList is a list of NodeEndpoints.
type NodeEndpointsList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []NodeEndpoints `json:"items" protobuf:"bytes,2,rep,name=items"`
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

// +genclient
// +genclient:onlyVerbs=create
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TopologyReview asks why a node routes a Service's traffic where it does, or
// where it would under a what-if. It is create-only and never stored.
type TopologyReview struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the question.
	Spec TopologyReviewSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is the answer, computed when the review is created.
	// +optional
	Status TopologyReviewStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// TopologyReviewSpec names the node and the Service, and what to assume.
type TopologyReviewSpec struct {
	// NodeName is the node whose routing is reviewed.
	NodeName string `json:"nodeName" protobuf:"bytes,1,opt,name=nodeName"`
	// ServiceName is the Service, in the review's namespace.
	ServiceName string `json:"serviceName" protobuf:"bytes,2,opt,name=serviceName"`
	// NodeLabels, when set, replace the node's own labels: what would the
	// node route to if it moved?
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty" protobuf:"bytes,3,rep,name=nodeLabels"`
	// UnreadyNodes are nodes whose endpoints count as not ready: what would
	// the node route to if they went down?
	// +optional
	// +listType=set
	UnreadyNodes []string `json:"unreadyNodes,omitempty" protobuf:"bytes,4,rep,name=unreadyNodes"`
}

// TopologyReviewStatus is how the node's view of the Service is chosen.
type TopologyReviewStatus struct {
	// Rule names the rule that decides, as NodeEndpoints' topology.rule
	// names it; empty when the Service is not pruned.
	// +optional
	Rule string `json:"rule,omitempty" protobuf:"bytes,1,opt,name=rule"`
	// Mode is None, AnyMatch or Ordered.
	// +optional
	Mode TopologyMode `json:"mode,omitempty" protobuf:"bytes,2,opt,name=mode,casttype=TopologyMode"`
	// Tiers are the node's tiers of the rule's keys, in order.
	// +optional
	// +listType=atomic
	Tiers []TopologyTier `json:"tiers,omitempty" protobuf:"bytes,3,rep,name=tiers"`
	// Route is local, fallback-N, all or none.
	// +optional
	Route string `json:"route,omitempty" protobuf:"bytes,4,opt,name=route"`
	// Addresses are the ready addresses the node routes to, sorted.
	// +optional
	// +listType=atomic
	Addresses []string `json:"addresses,omitempty" protobuf:"bytes,5,rep,name=addresses"`
	// Reason says in one sentence why.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,6,opt,name=reason"`
}

// TopologyTier is the node's tier of one key and the endpoints in it.
type TopologyTier struct {
	// Key is the node label key, or "*" for every endpoint.
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
	// Value is the node's value of the key; empty for "*" and for a node
	// without the label, which is in no tier of it.
	// +optional
	Value string `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
	// Ready counts the ready endpoints in the tier.
	Ready int32 `json:"ready" protobuf:"varint,3,opt,name=ready"`
	// Total counts every endpoint in the tier.
	Total int32 `json:"total" protobuf:"varint,4,opt,name=total"`
	// MinReady is how many ready endpoints the tier needs to be chosen.
	// +optional
	MinReady int32 `json:"minReady,omitempty" protobuf:"varint,5,opt,name=minReady"`
	// Chosen says that the node routes to endpoints of this tier.
	// +optional
	Chosen bool `json:"chosen,omitempty" protobuf:"varint,6,opt,name=chosen"`
}

// +genclient
// +genclient:onlyVerbs=get,list
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ServiceRoutes is where every node routes one Service's traffic, the nodes
// grouped by their values of the rule's keys: computed, read-only, named
// as the Service.
type ServiceRoutes struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Rule names the rule that decides, as TopologyReview's status.rule.
	// +optional
	Rule string `json:"rule,omitempty" protobuf:"bytes,2,opt,name=rule"`
	// Mode is None, AnyMatch or Ordered.
	Mode TopologyMode `json:"mode" protobuf:"bytes,3,opt,name=mode,casttype=TopologyMode"`
	// Keys are the rule's node label keys, in order.
	// +optional
	// +listType=atomic
	Keys []string `json:"keys,omitempty" protobuf:"bytes,4,rep,name=keys"`
	// Nodes counts every node.
	Nodes int32 `json:"nodes" protobuf:"varint,5,opt,name=nodes"`
	// ReadyEndpoints and TotalEndpoints count the Service's endpoints.
	ReadyEndpoints int32 `json:"readyEndpoints" protobuf:"varint,6,opt,name=readyEndpoints"`
	TotalEndpoints int32 `json:"totalEndpoints" protobuf:"varint,7,opt,name=totalEndpoints"`
	// Groups are the nodes that route alike.
	// +optional
	// +listType=atomic
	Groups []RouteGroup `json:"groups,omitempty" protobuf:"bytes,8,rep,name=groups"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ServiceRoutesList is a list of ServiceRoutes.
type ServiceRoutesList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []ServiceRoutes `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// RouteGroup is a set of nodes that route a Service alike.
type RouteGroup struct {
	// Labels are the nodes' values of the rule's label keys; a key the nodes
	// lack is absent.
	// +optional
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,1,rep,name=labels"`
	// Nodes counts the nodes of the group.
	Nodes int32 `json:"nodes" protobuf:"varint,2,opt,name=nodes"`
	// SampleNodes names a few of them.
	// +optional
	// +listType=atomic
	SampleNodes []string `json:"sampleNodes,omitempty" protobuf:"bytes,3,rep,name=sampleNodes"`
	// Route is local, fallback-N, all or none.
	Route string `json:"route" protobuf:"bytes,4,opt,name=route"`
	// ChosenKey and ChosenValue name the widest tier the nodes route to.
	// +optional
	ChosenKey string `json:"chosenKey,omitempty" protobuf:"bytes,5,opt,name=chosenKey"`
	// +optional
	ChosenValue string `json:"chosenValue,omitempty" protobuf:"bytes,6,opt,name=chosenValue"`
	// ReadyEndpoints counts the ready endpoints a node of the group routes to.
	ReadyEndpoints int32 `json:"readyEndpoints" protobuf:"varint,7,opt,name=readyEndpoints"`
}
