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
	"bufio"
	"encoding/binary"
	"fmt"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/klog/v2"
)

// protobufMagic starts every Kubernetes protobuf message.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// writeList answers a list in JSON or protobuf item by item: a node's whole
// view decoded at once, to encode it as one list object, would double the
// wrapper's memory for as long as the list takes. It returns false for
// another media type, which the caller serves as one object.
func (s *Server) writeList(w http.ResponseWriter, req *http.Request, f *filter, resourceVersion string) bool {
	_, info, err := negotiation.NegotiateOutputMediaType(req, s.codecs, negotiation.DefaultEndpointRestrictions)
	if err != nil || info.MediaType != runtime.ContentTypeJSON && info.MediaType != runtime.ContentTypeProtobuf {
		return false
	}
	items, rv, err := s.state.selectedAt(f, resourceVersion)
	if err != nil {
		s.fail(w, req, err)
		return true
	}
	gvks, _, err := wrapperScheme.ObjectKinds(f.kind.newList())
	if err != nil {
		s.fail(w, req, err)
		return true
	}
	w.Header().Set("Content-Type", info.MediaType)
	w.WriteHeader(http.StatusOK)
	out := bufio.NewWriterSize(w, 32<<10)
	if info.MediaType == runtime.ContentTypeJSON {
		err = writeJSONList(out, info.Serializer, gvks[0].GroupVersion().String(), gvks[0].Kind, rv, items)
	} else {
		err = writeProtobufList(out, gvks[0].GroupVersion().String(), gvks[0].Kind, rv, items)
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		klog.V(2).InfoS("Cannot write a list", "path", req.URL.Path, "err", err)
	}
	return true
}

func writeJSONList(w *bufio.Writer, serializer runtime.Serializer, apiVersion, kind string, rv uint64, items []*stored) error {
	if _, err := fmt.Fprintf(w, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":%q},"items":[`, kind, apiVersion, strconv.FormatUint(rv, 10)); err != nil {
		return err
	}
	for i, item := range items {
		if i > 0 {
			if err := w.WriteByte(','); err != nil {
				return err
			}
		}
		// The serializer itself, not a versioning encoder: items of a
		// list carry no kind.
		if err := serializer.Encode(item.object(), w); err != nil {
			return err
		}
	}
	_, err := w.WriteString("]}\n")
	return err
}

// writeProtobufList writes what the protobuf serializer writes for a list:
// the magic, then a runtime.Unknown whose raw bytes are the list message
// (metadata, field 1; items, field 2). Items are encoded one by one and
// kept encoded, a fifth of their decoded size, until the length of the
// whole is known.
func writeProtobufList(w *bufio.Writer, apiVersion, kind string, rv uint64, items []*stored) error {
	listMeta, err := (&metav1.ListMeta{ResourceVersion: strconv.FormatUint(rv, 10)}).Marshal()
	if err != nil {
		return err
	}
	encoded := make([][]byte, 0, len(items))
	size := fieldSize(len(listMeta))
	for _, item := range items {
		data, err := item.object().(protoMessage).Marshal()
		if err != nil {
			return err
		}
		encoded = append(encoded, data)
		size += fieldSize(len(data))
	}
	typeMeta, err := (&runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}).Marshal()
	if err != nil {
		return err
	}
	var buf []byte
	buf = append(buf, protobufMagic...)
	buf = appendField(buf, 1, typeMeta)
	buf = appendTag(buf, 2, size)
	buf = appendField(buf, 1, listMeta)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	for _, data := range encoded {
		if _, err := w.Write(appendTag(buf[:0], 2, len(data))); err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	// contentEncoding and contentType, empty.
	_, err = w.Write(appendField(appendField(buf[:0], 3, nil), 4, nil))
	return err
}

// appendTag appends the key of a length-delimited field and its length.
func appendTag(buf []byte, field, length int) []byte {
	buf = binary.AppendUvarint(buf, uint64(field<<3|2))
	return binary.AppendUvarint(buf, uint64(length))
}

func appendField(buf []byte, field int, data []byte) []byte {
	return append(appendTag(buf, field, len(data)), data...)
}

// fieldSize is the size of a length-delimited field of a one-byte key.
func fieldSize(length int) int {
	return 1 + len(binary.AppendUvarint(nil, uint64(length))) + length
}
