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
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// SuperEdge's annotations on the default/kubernetes Endpoints (or its
// EndpointSlice) that name an edge-local API server, such as lite-apiserver
// or yurthub.
const (
	AnnotationLocalEndpoint = "superedge.io/local-endpoint"
	AnnotationLocalPort     = "superedge.io/local-port"
)

// kubernetesService is the Service pods reach "the API server" through.
var kubernetesService = types.NamespacedName{Namespace: "default", Name: "kubernetes"}

// LocalEndpoint is an edge-local API server that replaces the endpoints of
// default/kubernetes for this node's kube-proxy, so that pods keep reaching
// an API server through a WAN outage.
type LocalEndpoint struct {
	Addr netip.AddrPort
}

// ParseLocalEndpoint reads <ip>:<port>, [<ipv6>]:<port> included.
func ParseLocalEndpoint(value string) (LocalEndpoint, error) {
	host, port, err := net.SplitHostPort(value)
	if err != nil {
		return LocalEndpoint{}, fmt.Errorf("%q is not <ip>:<port>: %w", value, err)
	}
	return newLocalEndpoint(host, port)
}

func newLocalEndpoint(ip, port string) (LocalEndpoint, error) {
	addr, err := netip.ParseAddr(ip)
	if err != nil || addr.Zone() != "" {
		return LocalEndpoint{}, fmt.Errorf("%q is not an IP address", ip)
	}
	number, err := strconv.ParseUint(port, 10, 16)
	if err != nil || number == 0 {
		return LocalEndpoint{}, fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return LocalEndpoint{Addr: netip.AddrPortFrom(addr.Unmap(), uint16(number))}, nil
}

// localEndpointOf reads the annotations of an object: false when it has
// neither; an error when it has one only or a bad value.
func localEndpointOf(annotations map[string]string) (LocalEndpoint, bool, error) {
	ip, hasIP := annotations[AnnotationLocalEndpoint]
	port, hasPort := annotations[AnnotationLocalPort]
	switch {
	case !hasIP && !hasPort:
		return LocalEndpoint{}, false, nil
	case !hasIP:
		return LocalEndpoint{}, true, errors.New(AnnotationLocalEndpoint + " is missing")
	case !hasPort:
		return LocalEndpoint{}, true, errors.New(AnnotationLocalPort + " is missing")
	}
	local, err := newLocalEndpoint(ip, port)
	return local, true, err
}

// localSlice is the EndpointSlice of default/kubernetes whose only endpoint
// is the local one. It takes the name and labels of the first slice of the
// Service this node has a view of (so kube-proxy sees the same slice
// change), else the Service's name.
func localSlice(namespace string, first *discoveryv1.EndpointSlice, local LocalEndpoint) *discoveryv1.EndpointSlice {
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{
		Namespace: namespace, Name: kubernetesService.Name,
		Labels: map[string]string{discoveryv1.LabelServiceName: kubernetesService.Name},
	}}
	if first != nil {
		slice.Name, slice.Labels, slice.CreationTimestamp = first.Name, first.Labels, first.CreationTimestamp
	}
	slice.AddressType = discoveryv1.AddressTypeIPv4
	if local.Addr.Addr().Is6() {
		slice.AddressType = discoveryv1.AddressTypeIPv6
	}
	slice.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("https"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(int32(local.Addr.Port()))}}
	slice.Endpoints = []discoveryv1.Endpoint{{
		Addresses:  []string{local.Addr.Addr().String()},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
	}}
	return slice
}

// localEndpoints decides which local endpoint, if any, replaces the
// endpoints of default/kubernetes. Upstream.mu guards it.
type localEndpoints struct {
	// flag is --kubernetes-endpoint: it wins over the annotations.
	flag   *LocalEndpoint
	active *LocalEndpoint
	// served is the slice last served for the active endpoint: served again
	// as long as it would not change, so that it is not published again.
	served *stored
	// annotated are default/kubernetes's Endpoints and EndpointSlice, as
	// upstream has them (nil when it has not), whose annotations may name a
	// local endpoint.
	annotated [2]metav1.Object
	// warned holds the bad annotation values already logged.
	warned map[string]bool
}

// slice is the EndpointSlice serving the active local endpoint for a
// Service, in place of the first slice of its views.
func (l *localEndpoints) slice(key types.NamespacedName, sv *serviceViews) *stored {
	var first *discoveryv1.EndpointSlice
	if len(sv.views) > 0 {
		first = sv.views[0].slice.object().(*discoveryv1.EndpointSlice)
	}
	slice, err := store(localSlice(key.Namespace, first, *l.active))
	if err != nil {
		panic(err) // EndpointSlices encode
	}
	if l.served != nil && l.served.sameContent(slice) {
		return l.served
	}
	return slice
}

// refreshLocalEndpoint applies the flag or the annotations as they are now,
// serving default/kubernetes again when the local endpoint changed: no
// restart is needed to add, change or remove it.
func (u *Upstream) refreshLocalEndpoint() {
	u.mu.Lock()
	defer u.mu.Unlock()
	active := u.local.flag
	if active == nil {
		active = u.annotatedLocalEndpoint()
	}
	if ptr.Equal(active, u.local.active) {
		return
	}
	u.local.active = active
	if active != nil {
		klog.InfoS("Serving kube-proxy an edge-local endpoint for default/kubernetes", "endpoint", active.Addr)
	} else {
		klog.InfoS("Serving kube-proxy the real endpoints of default/kubernetes")
	}
	if _, ok := u.services[kubernetesService]; ok {
		u.serve(kubernetesService)
	}
}

// annotatedLocalEndpoint reads the annotations of default/kubernetes's
// Endpoints, else of its EndpointSlice. A bad value keeps the real
// endpoints and is logged once.
func (u *Upstream) annotatedLocalEndpoint() *LocalEndpoint {
	for _, source := range u.local.annotated {
		if source == nil {
			continue
		}
		local, set, err := localEndpointOf(source.GetAnnotations())
		if !set {
			continue
		}
		if err != nil {
			u.local.warnOnce(source, err)
			return nil
		}
		return &local
	}
	return nil
}

func (l *localEndpoints) warnOnce(source metav1.Object, err error) {
	annotations := source.GetAnnotations()
	key := fmt.Sprintf("%T %q %q", source, annotations[AnnotationLocalEndpoint], annotations[AnnotationLocalPort])
	if l.warned[key] {
		return
	}
	l.warned[key] = true
	localEndpointsInvalid.Inc()
	klog.InfoS("Warning: ignoring a bad edge-local endpoint of default/kubernetes; kube-proxy keeps its real endpoints",
		"object", klog.KObj(source), "err", err)
}
