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
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

func TestLocalEndpointAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        string // the address, or the error's text
		wantSet     bool
	}{
		{name: "none", annotations: map[string]string{"other": "x"}},
		{name: "IPv4", annotations: map[string]string{AnnotationLocalEndpoint: "169.254.0.2", AnnotationLocalPort: "51003"}, want: "169.254.0.2:51003", wantSet: true},
		{name: "IPv6", annotations: map[string]string{AnnotationLocalEndpoint: "fd00::2", AnnotationLocalPort: "443"}, want: "[fd00::2]:443", wantSet: true},
		{name: "IPv4 in IPv6", annotations: map[string]string{AnnotationLocalEndpoint: "::ffff:10.0.0.1", AnnotationLocalPort: "443"}, want: "10.0.0.1:443", wantSet: true},
		{name: "unparseable IP", annotations: map[string]string{AnnotationLocalEndpoint: "lite-apiserver", AnnotationLocalPort: "443"}, want: "not an IP address", wantSet: true},
		{name: "IP with a zone", annotations: map[string]string{AnnotationLocalEndpoint: "fe80::1%eth0", AnnotationLocalPort: "443"}, want: "not an IP address", wantSet: true},
		{name: "port 0", annotations: map[string]string{AnnotationLocalEndpoint: "10.0.0.1", AnnotationLocalPort: "0"}, want: "from 1 to 65535", wantSet: true},
		{name: "port 65536", annotations: map[string]string{AnnotationLocalEndpoint: "10.0.0.1", AnnotationLocalPort: "65536"}, want: "from 1 to 65535", wantSet: true},
		{name: "negative port", annotations: map[string]string{AnnotationLocalEndpoint: "10.0.0.1", AnnotationLocalPort: "-1"}, want: "from 1 to 65535", wantSet: true},
		{name: "port not a number", annotations: map[string]string{AnnotationLocalEndpoint: "10.0.0.1", AnnotationLocalPort: "https"}, want: "from 1 to 65535", wantSet: true},
		{name: "no port", annotations: map[string]string{AnnotationLocalEndpoint: "10.0.0.1"}, want: AnnotationLocalPort + " is missing", wantSet: true},
		{name: "no IP", annotations: map[string]string{AnnotationLocalPort: "443"}, want: AnnotationLocalEndpoint + " is missing", wantSet: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, set, err := localEndpointOf(tc.annotations)
			got := ""
			if err != nil {
				got = err.Error()
			} else if set {
				got = local.Addr.String()
			}
			if set != tc.wantSet || !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
				t.Errorf("localEndpointOf = %q, set %v; want %q, set %v", got, set, tc.want, tc.wantSet)
			}
		})
	}
}

func TestParseLocalEndpointFlag(t *testing.T) {
	for value, wantErr := range map[string]bool{
		"10.0.0.1:6443": false, "[fd00::1]:6443": false,
		"10.0.0.1": true, "fd00::1:6443": true, "host:6443": true, "10.0.0.1:0": true, ":6443": true,
	} {
		if _, err := ParseLocalEndpoint(value); (err != nil) != wantErr {
			t.Errorf("ParseLocalEndpoint(%q) = %v, want an error: %v", value, err, wantErr)
		}
	}
}

func TestLocalSliceKeepsTheSliceIdentity(t *testing.T) {
	real := renderSlice(&topologyv1alpha1.NodeEndpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "edge-1..kubernetes"}, ServiceName: "kubernetes",
		Slice: topologyv1alpha1.NodeEndpointSlice{Name: "kubernetes", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes", "extra": "x"},
			AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.250.0.1"}}}},
	})
	local, _ := ParseLocalEndpoint("[fd00::2]:51003")
	for _, tc := range []struct {
		name      string
		first     *discoveryv1.EndpointSlice
		wantLabel string
	}{
		{name: "in place of the real slice", first: real, wantLabel: "x"},
		{name: "with no view of the Service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slice := localSlice("default", tc.first, local)
			if slice.Name != "kubernetes" || slice.Namespace != "default" || slice.Labels[discoveryv1.LabelServiceName] != "kubernetes" ||
				slice.Labels["extra"] != tc.wantLabel || slice.AddressType != discoveryv1.AddressTypeIPv6 ||
				len(slice.Endpoints) != 1 || slice.Endpoints[0].Addresses[0] != "fd00::2" || *slice.Ports[0].Name != "https" || *slice.Ports[0].Port != 51003 {
				t.Errorf("slice with the local endpoint: %+v", slice)
			}
		})
	}
	if real.Endpoints[0].Addresses[0] != "10.250.0.1" {
		t.Error("the real slice was modified")
	}
}

func TestABadValueIsWarnedOnceAndCounted(t *testing.T) {
	RegisterMetrics()
	before, _ := testutil.GetCounterMetricValue(localEndpointsInvalid)
	l := localEndpoints{warned: map[string]bool{}}
	bad := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes",
		Annotations: map[string]string{AnnotationLocalEndpoint: "x", AnnotationLocalPort: "1"}}}
	for range 3 {
		l.warnOnce(bad, errors.New("bad"))
	}
	worse := bad.DeepCopy()
	worse.Annotations[AnnotationLocalPort] = "0"
	l.warnOnce(worse, errors.New("bad"))
	if after, _ := testutil.GetCounterMetricValue(localEndpointsInvalid); after-before != 2 {
		t.Errorf("counted %v bad values, want the 2 distinct ones", after-before)
	}
}

// The local endpoint replaces every slice of default/kubernetes with one,
// named as its first, and going away serves the real ones again.
func TestLocalEndpointReplacesTheServiceSlices(t *testing.T) {
	u := newIndex("edge-1")
	apiServer := testService("kubernetes", "10.96.0.1", nil)
	apiServer.Namespace = "default"
	putService(t, u, apiServer)
	for _, name := range []string{"kubernetes-b", "kubernetes-a"} {
		view := testView("edge-1", "kubernetes", name)
		view.Namespace = "default"
		putView(t, u, view)
	}
	local, _ := ParseLocalEndpoint("169.254.20.10:51003")
	for _, tc := range []struct {
		name   string
		local  *LocalEndpoint
		slices []string
		first  string
	}{
		{name: "with --kubernetes-endpoint", local: &local, slices: []string{"kubernetes-a"}, first: "169.254.20.10"},
		{name: "without", slices: []string{"kubernetes-a", "kubernetes-b"}, first: "10.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u.local.flag = tc.local
			u.refreshLocalEndpoint()
			if got := servedSlices(u.state); !slices.Equal(got, tc.slices) {
				t.Errorf("served slices %v, want %v", got, tc.slices)
			}
			obj, err := u.state.Get(endpoints, kubernetesService)
			if err != nil {
				t.Fatal(err)
			}
			if subsets := obj.(*corev1.Endpoints).Subsets; len(subsets) != len(tc.slices) || subsets[0].Addresses[0].IP != tc.first {
				t.Errorf("Endpoints subsets %+v, want %d from %s", subsets, len(tc.slices), tc.first)
			}
		})
	}
}

// Once default/kubernetes and its views are gone, the local endpoint's
// slice goes with them, whichever goes last: kept, nothing would track it,
// and kube-proxy would balance default/kubernetes to a local endpoint
// switched off since.
func TestLocalSliceGoesWithTheService(t *testing.T) {
	apiServer := testService("kubernetes", "10.96.0.1", nil)
	apiServer.Namespace = "default"
	view := func() *topologyv1alpha1.NodeEndpoints {
		v := testView("edge-1", "kubernetes", "kubernetes-a")
		v.Namespace = "default"
		return v
	}
	removeService := func(u *Upstream) { u.deleteService(&serviceRecord{key: kubernetesService}) }
	removeView := func(u *Upstream) {
		r, err := recordView(view())
		if err != nil {
			t.Fatal(err)
		}
		u.deleteView(r)
	}
	local, _ := ParseLocalEndpoint("169.254.20.10:51003")
	for _, tc := range []struct {
		name   string
		remove []func(*Upstream)
	}{
		{name: "the view, then the Service", remove: []func(*Upstream){removeView, removeService}},
		{name: "the Service, then the view", remove: []func(*Upstream){removeService, removeView}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newIndex("edge-1")
			u.local.flag = &local
			u.refreshLocalEndpoint()
			putService(t, u, apiServer)
			putView(t, u, view())
			for _, remove := range tc.remove {
				remove(u)
			}
			if got := servedSlices(u.state); len(got) != 0 {
				t.Errorf("with default/kubernetes and its views gone, slices %v are served", got)
			}
			// The local endpoint is switched off, and the Service comes back.
			u.local.flag = nil
			u.refreshLocalEndpoint()
			putService(t, u, apiServer)
			putView(t, u, view())
			if got := servedSlices(u.state); !slices.Equal(got, []string{"kubernetes-a"}) {
				t.Errorf("served slices %v, want [kubernetes-a]", got)
			}
			obj, err := u.state.Get(endpointSlices, types.NamespacedName{Namespace: "default", Name: "kubernetes-a"})
			if err != nil {
				t.Fatal(err)
			}
			if addresses := obj.(*discoveryv1.EndpointSlice).Endpoints[0].Addresses; addresses[0] != "10.0.0.1" {
				t.Errorf("kubernetes-a serves %v, want the view's 10.0.0.1", addresses)
			}
		})
	}
}

// Only default/kubernetes's Endpoints and EndpointSlice set or clear the
// local endpoint: another object a server sends, whatever it carries, does
// neither, as the nodeName check does not trust the server's selectors
// either.
func TestAnnotatedSourcesReadDefaultKubernetesOnly(t *testing.T) {
	annotations := func(ip string) map[string]string {
		return map[string]string{AnnotationLocalEndpoint: ip, AnnotationLocalPort: "443"}
	}
	meta := func(namespace, name, ip string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations(ip)}
	}
	for _, source := range []struct {
		name     string
		i        int
		expected runtime.Object
		object   func(metav1.ObjectMeta) runtime.Object
	}{
		{name: "Endpoints", i: 0, expected: &corev1.Endpoints{}, object: func(m metav1.ObjectMeta) runtime.Object { return &corev1.Endpoints{ObjectMeta: m} }},
		{name: "EndpointSlice", i: 1, expected: &discoveryv1.EndpointSlice{}, object: func(m metav1.ObjectMeta) runtime.Object {
			return &discoveryv1.EndpointSlice{ObjectMeta: m, AddressType: discoveryv1.AddressTypeIPv4}
		}},
	} {
		for _, tc := range []struct {
			name  string
			other metav1.ObjectMeta
		}{
			{name: "another name", other: meta("default", "not-kubernetes", "10.9.9.9")},
			{name: "another namespace", other: meta("kube-system", "kubernetes", "10.9.9.9")},
		} {
			t.Run(source.name+", "+tc.name, func(t *testing.T) {
				u := newIndex("edge-1")
				src := u.annotated(source.i, source.expected)
				if err := src.Add(source.object(tc.other)); err != nil {
					t.Fatal(err)
				}
				if u.local.active != nil {
					t.Errorf("%s/%s set the local endpoint to %v", tc.other.Namespace, tc.other.Name, u.local.active.Addr)
				}
				if err := src.Add(source.object(meta("default", "kubernetes", "169.254.20.10"))); err != nil {
					t.Fatal(err)
				}
				for _, change := range []func(any) error{src.Update, src.Delete} {
					if err := change(source.object(tc.other)); err != nil {
						t.Fatal(err)
					}
					if u.local.active == nil || u.local.active.Addr.String() != "169.254.20.10:443" {
						t.Errorf("after a change of %s/%s, the local endpoint is %v, want default/kubernetes's 169.254.20.10:443", tc.other.Namespace, tc.other.Name, u.local.active)
					}
				}
			})
		}
	}
}
