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

package v1alpha1_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/dump"
	"k8s.io/utils/ptr"

	topologyfuzzer "github.com/gridview/gridview/apis/topology/fuzzer"
	"github.com/gridview/gridview/apis/topology/install"
	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// The apiserver picks protobuf for a type only when it implements these, as
// the protobuf serializer of k8s.io/apimachinery asks.
type protoMessage interface {
	Marshal() ([]byte, error)
	MarshalToSizedBuffer([]byte) (int, error)
	Size() int
	Unmarshal([]byte) error
}

var (
	_ protoMessage = &v1alpha1.ServiceGrid{}
	_ protoMessage = &v1alpha1.ServiceGridList{}
	_ protoMessage = &v1alpha1.NodeEndpoints{}
	_ protoMessage = &v1alpha1.NodeEndpointsList{}
)

// TestProtobufRoundTrip is apimachinery's round-trip test with protobuf on:
// every kind of the group, fuzzed, through internal -> v1alpha1 -> protobuf
// -> v1alpha1 -> internal, and v1alpha1 -> protobuf -> v1alpha1.
func TestProtobufRoundTrip(t *testing.T) {
	roundtrip.RoundTripProtobufTestForAPIGroup(t, install.Install, topologyfuzzer.Funcs)
}

// TestProtobufRoundTripExternal fuzzes the served types themselves, the
// v1alpha1 objects gridview-apiserver encodes, and checks the generated
// Marshal and Unmarshal keep every field, so a field added to types.go
// without regenerating fails here.
func TestProtobufRoundTripExternal(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme)
	seed := rand.Int63()
	filler := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, topologyfuzzer.Funcs), rand.NewSource(seed), codecs)
	t.Logf("seed %d", seed)

	kinds := []struct {
		name string
		new  func() protoMessage
	}{
		{name: "ServiceGrid", new: func() protoMessage { return &v1alpha1.ServiceGrid{} }},
		{name: "ServiceGridList", new: func() protoMessage { return &v1alpha1.ServiceGridList{} }},
		{name: "NodeEndpoints", new: func() protoMessage { return &v1alpha1.NodeEndpoints{} }},
		{name: "NodeEndpointsList", new: func() protoMessage { return &v1alpha1.NodeEndpointsList{} }},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			for i := 0; i < 50; i++ {
				in := kind.new()
				filler.Fill(in)
				// TypeMeta is not part of the message: the envelope carries it.
				in.(runtime.Object).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
				data, err := in.Marshal()
				if err != nil {
					t.Fatalf("marshal: %v", err)
				}
				if len(data) != in.Size() {
					t.Fatalf("Size() = %d, Marshal wrote %d bytes", in.Size(), len(data))
				}
				out := kind.new()
				if err := out.Unmarshal(data); err != nil {
					t.Fatalf("unmarshal: %v", err)
				}
				if !apiequality.Semantic.DeepEqual(in, out) {
					t.Fatalf("round trip changed the object:\nin:  %s\nout: %s", dump.Pretty(in), dump.Pretty(out))
				}
			}
		})
	}
}

// TestProtobufWire encodes each served kind as gridview-apiserver does for
// Accept: application/vnd.kubernetes.protobuf, and reads it back through the
// same codec factory a client-go client uses.
func TestProtobufWire(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme)
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatalf("the codec factory offers no %s serializer", runtime.ContentTypeProtobuf)
	}
	encoder := codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion)
	decoder := codecs.DecoderToVersion(info.Serializer, v1alpha1.SchemeGroupVersion)

	tests := []struct {
		name string
		obj  runtime.Object
	}{
		{name: "NodeEndpoints", obj: sampleNodeEndpoints("edge-1", "web-abcde", 3)},
		{name: "NodeEndpointsList", obj: &v1alpha1.NodeEndpointsList{
			ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next"},
			Items:    []v1alpha1.NodeEndpoints{*sampleNodeEndpoints("edge-1", "web-abcde", 2), *sampleNodeEndpoints("edge-1", "web-fghij", 1)},
		}},
		{name: "ServiceGrid", obj: sampleServiceGrid()},
		{name: "ServiceGridList", obj: &v1alpha1.ServiceGridList{
			ListMeta: metav1.ListMeta{ResourceVersion: "7"},
			Items:    []v1alpha1.ServiceGrid{*sampleServiceGrid()},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The decoder sets the kind the envelope names on the top-level
			// object only, as for any Kubernetes list.
			tc.obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(tc.name))
			var buf bytes.Buffer
			if err := encoder.Encode(tc.obj, &buf); err != nil {
				t.Fatalf("encode: %v", err)
			}
			// Every Kubernetes protobuf body starts with "k8s\x00", then a
			// runtime.Unknown that names the kind.
			if !bytes.HasPrefix(buf.Bytes(), []byte("k8s\x00")) {
				t.Fatalf("body does not start with the Kubernetes protobuf magic: %q", buf.Bytes()[:min(8, buf.Len())])
			}
			got, gvk, err := decoder.Decode(buf.Bytes(), nil, nil)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if want := v1alpha1.SchemeGroupVersion.WithKind(tc.name); *gvk != want {
				t.Fatalf("decoded kind %v, want %v", gvk, want)
			}
			if !apiequality.Semantic.DeepEqual(tc.obj, got) {
				t.Fatalf("decoded object differs:\nsent: %s\ngot:  %s", dump.Pretty(tc.obj), dump.Pretty(got))
			}
		})
	}
}

// BenchmarkNodeEndpointsEncode measures one slice's view of 100 endpoints,
// the object a node receives for a change, in JSON and protobuf; the bytes
// metric is its size on the wire.
func BenchmarkNodeEndpointsEncode(b *testing.B) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme)
	obj := sampleNodeEndpoints("edge-00000", "web-abcde", 100)
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
		encoder := codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion)
		b.Run(mediaType, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := encoder.Encode(obj, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes/object")
		})
	}
}

func sampleNodeEndpoints(node, slice string, endpoints int) *v1alpha1.NodeEndpoints {
	obj := &v1alpha1.NodeEndpoints{
		ObjectMeta: metav1.ObjectMeta{
			Name: node + ".." + slice, Namespace: "default", ResourceVersion: "1234",
			Labels: map[string]string{"app": "web"},
		},
		NodeName:    node,
		ServiceName: "web",
		Topology: v1alpha1.TopologyInfo{
			Mode:       v1alpha1.TopologyModeOrdered,
			Keys:       []string{"superedge.io/nodeunit", "topology.kubernetes.io/zone", "*"},
			MatchedKey: "superedge.io/nodeunit",
		},
		Slice: v1alpha1.NodeEndpointSlice{
			Name:        slice,
			Labels:      map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{{
				Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080),
			}},
		},
	}
	for i := range endpoints {
		obj.Slice.Endpoints = append(obj.Slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", i/65536%256, i/256%256, i%256)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			NodeName:   ptr.To(fmt.Sprintf("edge-%05d", i)),
			Zone:       ptr.To("zone-0"),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: fmt.Sprintf("web-%d", i), UID: "0b7f8e0c-2f8d-4c1e-9a57-5f3c1d2e4a6b"},
		})
	}
	return obj
}

func sampleServiceGrid() *v1alpha1.ServiceGrid {
	return &v1alpha1.ServiceGrid{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 2, ResourceVersion: "99"},
		Spec: v1alpha1.ServiceGridSpec{
			GridUniqKey: "superedge.io/nodeunit",
			Fallback:    v1alpha1.FallbackAny,
			Template: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
			},
		},
		Status: v1alpha1.ServiceGridStatus{
			ServiceName:        "web-svc",
			ObservedGeneration: 2,
			Conditions: []metav1.Condition{{
				Type: v1alpha1.ServiceGridConditionReady, Status: metav1.ConditionTrue,
				Reason: "ServiceSynced", Message: "the Service matches the spec", ObservedGeneration: 2,
				LastTransitionTime: metav1.Unix(1700000000, 0),
			}},
		},
	}
}
