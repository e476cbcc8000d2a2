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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// endpoint is an EndpointSlice endpoint as the EndpointSlice controller
// writes it: its Pod's address, node, readiness and reference.
func endpoint(addr, node string, ready *bool, pod string) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
	if node != "" {
		ep.NodeName = ptr.To(node)
	}
	if pod != "" {
		ep.TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: pod, Namespace: "scale"}
	}
	return ep
}

func sliceObject(name string, endpoints ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, AddressType: discoveryv1.AddressTypeIPv4, Endpoints: endpoints}
}

func TestSlicesFromObjects(t *testing.T) {
	m := Generate(Scales["tiny"], 1)
	m.UseWorkloads()
	for _, tc := range []struct {
		name    string
		objects []discoveryv1.EndpointSlice
		want    []*Slice // IDs numbered from 0 by first sight
		wantErr string
	}{
		{name: "no slice", want: []*Slice{}},
		{
			name: "ordered by name, readiness and Pods as written",
			objects: []discoveryv1.EndpointSlice{
				sliceObject("svc-00001-zzzzz", endpoint("100.64.3.7", "edge-00003", ptr.To(true), "svc-00001-abc-1")),
				sliceObject("svc-00001-aaaaa",
					endpoint("100.64.0.2", "edge-00000", ptr.To(false), "svc-00001-abc-2"),
					endpoint("100.64.59.2", "edge-00059", ptr.To(true), "svc-00001-abc-3")),
			},
			want: []*Slice{
				{Name: "svc-00001-aaaaa", ID: 0, Endpoints: []Endpoint{
					{Addr: "100.64.0.2", Node: 0, Ready: false, Pod: "svc-00001-abc-2", addrHash: fnv64a("100.64.0.2")},
					{Addr: "100.64.59.2", Node: 59, Ready: true, Pod: "svc-00001-abc-3", addrHash: fnv64a("100.64.59.2")},
				}},
				{Name: "svc-00001-zzzzz", ID: 1, Endpoints: []Endpoint{
					{Addr: "100.64.3.7", Node: 3, Ready: true, Pod: "svc-00001-abc-1", addrHash: fnv64a("100.64.3.7")},
				}},
			},
		},
		{
			name:    "readiness unset is ready, no Pod behind",
			objects: []discoveryv1.EndpointSlice{sliceObject("manual", endpoint("10.1.0.1", "edge-00010", nil, ""))},
			want: []*Slice{{Name: "manual", ID: 0, Endpoints: []Endpoint{
				{Addr: "10.1.0.1", Node: 10, Ready: true, addrHash: fnv64a("10.1.0.1")},
			}}},
		},
		{
			name:    "node not the scenario's",
			objects: []discoveryv1.EndpointSlice{sliceObject("s", endpoint("10.1.0.1", "edge-00060", nil, ""))},
			wantErr: `node "edge-00060"`,
		},
		{
			name:    "node name not the scenario's shape",
			objects: []discoveryv1.EndpointSlice{sliceObject("s", endpoint("10.1.0.1", "edge-7", nil, ""))},
			wantErr: `node "edge-7"`,
		},
		{
			name:    "no node",
			objects: []discoveryv1.EndpointSlice{sliceObject("s", endpoint("10.1.0.1", "", nil, ""))},
			wantErr: `node ""`,
		},
		{
			name:    "no address",
			objects: []discoveryv1.EndpointSlice{sliceObject("s", discoveryv1.Endpoint{NodeName: ptr.To("edge-00001")})},
			wantErr: "without an address",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := map[string]int32{}
			got, err := m.SlicesFromObjects(tc.objects, func(name string) int32 {
				if _, ok := ids[name]; !ok {
					ids[name] = int32(len(ids))
				}
				return ids[name]
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d slices, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i].Name != tc.want[i].Name || got[i].ID != tc.want[i].ID || !sameSlices(got[i:i+1], tc.want[i:i+1]) {
					t.Errorf("slice %d: %+v, want %+v", i, *got[i], *tc.want[i])
				}
			}
		})
	}
}

// TestSetSlices checks that a Service's slices read back again replace the
// old ones in the model's indexes, and that sameSlices tells them apart.
func TestSetSlices(t *testing.T) {
	m := Generate(Scales["tiny"], 1)
	m.UseWorkloads()
	svc := m.Services[0]
	first := []*Slice{{Name: "a", ID: 0, Endpoints: []Endpoint{newEndpoint("100.64.0.2", 0)}}, {Name: "b", ID: 1}}
	m.SetSlices(svc, first)
	flipped := newEndpoint("100.64.0.2", 0)
	flipped.Ready = false
	second := []*Slice{{Name: "a", ID: 0, Endpoints: []Endpoint{flipped}}, {Name: "c", ID: 3}}
	for _, tc := range []struct {
		name string
		a, b []*Slice
		same bool
	}{
		{name: "same", a: first, b: []*Slice{first[1], first[0]}, same: true},
		{name: "an endpoint flipped, a slice replaced", a: first, b: second},
		{name: "a slice fewer", a: first, b: first[:1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameSlices(tc.a, tc.b); got != tc.same {
				t.Errorf("sameSlices = %t, want %t", got, tc.same)
			}
		})
	}
	m.SetSlices(svc, second)
	if len(m.SliceByID) != 4 || m.SliceByID[0] != second[0] || m.SliceByID[1] != nil || m.SliceByID[2] != nil || m.SliceByID[3] != second[1] {
		t.Errorf("SliceByID %v, want a, nil, nil, c", m.SliceByID)
	}
	if _, ok := m.SliceByName["b"]; ok || m.SliceByName["c"] != 3 || m.SliceCount() != 2 || m.Endpoints() != 1 {
		t.Errorf("SliceByName %v, %d slices, %d endpoints; want a and c, 2 slices, 1 endpoint", m.SliceByName, m.SliceCount(), m.Endpoints())
	}
}
