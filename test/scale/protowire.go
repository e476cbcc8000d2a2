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
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned/scheme"
)

// Encodings a watcher may read.
const (
	EncodingProtobuf = "protobuf" // as gridview-wrapper reads its upstream
	EncodingJSON     = "json"     // as kubectl does
)

// protobufInfo is the clientset's protobuf serializer: enveloped objects,
// length-delimited watch frames.
var protobufInfo, _ = runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)

// protoEvents reads a protobuf watch stream.
type protoEvents struct {
	frames streaming.Decoder
}

func newProtoEvents(body io.ReadCloser) *protoEvents {
	return &protoEvents{frames: protoFrames(protobufInfo, body)}
}

// protoFrames reads the events of a protobuf watch stream.
func protoFrames(info runtime.SerializerInfo, body io.ReadCloser) streaming.Decoder {
	s := info.StreamSerializer
	return streaming.NewDecoder(s.NewFrameReader(body), s.Serializer)
}

// nextEvent decodes the next event of a protobuf watch stream: its type and
// object.
func nextEvent(frames streaming.Decoder, info runtime.SerializerInfo) (string, runtime.Object, error) {
	var raw metav1.WatchEvent
	if _, _, err := frames.Decode(nil, &raw); err != nil {
		return "", nil, err
	}
	obj, err := runtime.Decode(info.Serializer, raw.Object.Raw)
	if err != nil {
		return "", nil, fmt.Errorf("decoding a %s event: %w", raw.Type, err)
	}
	return raw.Type, obj, nil
}

// next decodes one event into ev, in the shape the JSON path decodes.
func (p *protoEvents) next(ev *wireEvent) error {
	var obj runtime.Object
	var err error
	if ev.Type, obj, err = nextEvent(p.frames, protobufInfo); err != nil {
		return err
	}
	switch o := obj.(type) {
	case *v1alpha1.NodeEndpoints:
		fromProto(&ev.Object, o)
	case *metav1.Status:
		ev.Object.Kind, ev.Object.Code, ev.Object.Reason, ev.Object.Message = "Status", int(o.Code), string(o.Reason), o.Message
	default:
		return fmt.Errorf("a %s event holds a %T", ev.Type, obj)
	}
	return nil
}

// statusMessage is the message of a Status in protobuf or JSON, or the
// body itself.
func statusMessage(data []byte) string {
	if obj, err := runtime.Decode(protobufInfo.Serializer, data); err == nil {
		if st, ok := obj.(*metav1.Status); ok {
			return st.Message
		}
	}
	var st metav1.Status
	if err := json.Unmarshal(data, &st); err == nil && st.Message != "" {
		return st.Message
	}
	return string(data)
}

// decodeProtoList decodes a NodeEndpointsList.
func decodeProtoList(body io.Reader) (*wireList, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	var list v1alpha1.NodeEndpointsList
	if _, _, err := protobufInfo.Serializer.Decode(data, nil, &list); err != nil {
		return nil, fmt.Errorf("decoding a NodeEndpointsList: %w", err)
	}
	out := &wireList{Items: make([]wireObject, len(list.Items))}
	out.Metadata.ResourceVersion, out.Metadata.Continue = list.ResourceVersion, list.Continue
	for i := range list.Items {
		fromProto(&out.Items[i], &list.Items[i])
	}
	return out, nil
}

// fromProto keeps what the watcher compares of a decoded object.
func fromProto(dst *wireObject, src *v1alpha1.NodeEndpoints) {
	dst.Kind = "NodeEndpoints"
	dst.Metadata.Namespace, dst.Metadata.Name, dst.Metadata.ResourceVersion = src.Namespace, src.Name, src.ResourceVersion
	dst.Topology.Mode = string(src.Topology.Mode)
	if src.Slice.Name == "" {
		return // a bookmark
	}
	s := &wireSlice{Name: src.Slice.Name, Endpoints: make([]wireEndpoint, len(src.Slice.Endpoints))}
	for i, ep := range src.Slice.Endpoints {
		s.Endpoints[i].Addresses = ep.Addresses
		s.Endpoints[i].Conditions.Ready = ep.Conditions.Ready
	}
	dst.Slice = s
}
