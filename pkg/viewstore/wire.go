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

package viewstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The leader's inputs go to a follower as frames: a length, then a type
// byte and its fields. Objects are Kubernetes protobuf, reduced to what the
// views derive from.
const (
	frameHeartbeat byte = 'h'
	// frameState: seq, rv, the number of objects; a frameObject for each
	// follows.
	frameState  byte = 's'
	frameObject byte = 'o'
	// frameInput: seq, rv, then an object, or the key of one removed.
	frameInput byte = 'i'

	// maxFrame bounds what a follower reads as one frame: an EndpointSlice
	// holds at most 1,000 endpoints.
	maxFrame = 16 << 20
)

// frame is what a follower reads: the leader's state, numbered seq at
// resourceVersion rv, an input, or neither (a heartbeat).
type frame struct {
	seq, rv uint64
	state   *replicatedState
	input   *loggedInput
}

// replicatedState is the objects of the leader's state.
type replicatedState []metav1.Object

func (s replicatedState) inputs() Inputs {
	var inputs Inputs
	for _, obj := range s {
		switch obj := obj.(type) {
		case *corev1.Namespace:
			inputs.Namespaces = append(inputs.Namespaces, obj)
		case *corev1.Node:
			inputs.Nodes = append(inputs.Nodes, obj)
		case *corev1.Service:
			inputs.Services = append(inputs.Services, obj)
		case *discoveryv1.EndpointSlice:
			inputs.Slices = append(inputs.Slices, obj)
		}
	}
	return inputs
}

func writeFrame(w *bufio.Writer, payload []byte) error {
	if _, err := w.Write(binary.AppendUvarint(nil, uint64(len(payload)))); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

func writeHeartbeat(w *bufio.Writer) error { return writeFrame(w, []byte{frameHeartbeat}) }

func writeState(w *bufio.Writer, seq, rv uint64, state []loggedInput) error {
	header := binary.AppendUvarint(binary.AppendUvarint([]byte{frameState}, seq), rv)
	if err := writeFrame(w, binary.AppendUvarint(header, uint64(len(state)))); err != nil {
		return err
	}
	for _, in := range state {
		payload, err := appendObject([]byte{frameObject}, in.key.kind, in.object)
		if err != nil {
			return err
		}
		if err := writeFrame(w, payload); err != nil {
			return err
		}
	}
	return nil
}

func writeInput(w *bufio.Writer, in loggedInput) error {
	payload := binary.AppendUvarint(binary.AppendUvarint([]byte{frameInput}, in.seq), in.rv)
	if in.object == nil {
		payload = append(payload, byte(in.key.kind), 0)
		payload = appendString(appendString(payload, in.key.Namespace), in.key.Name)
		return writeFrame(w, payload)
	}
	payload, err := appendObject(payload, in.key.kind, in.object)
	if err != nil {
		return err
	}
	return writeFrame(w, payload)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendObject appends the kind, a byte that says the object is there, and
// the object reduced to what the store reads of it.
func appendObject(b []byte, kind kind, obj metav1.Object) ([]byte, error) {
	var data []byte
	var err error
	switch obj := obj.(type) {
	case *corev1.Node:
		data, err = (&corev1.Node{ObjectMeta: reduced(obj.ObjectMeta, false)}).Marshal()
	case *corev1.Namespace:
		data, err = (&corev1.Namespace{ObjectMeta: reduced(obj.ObjectMeta, true)}).Marshal()
	case *corev1.Service:
		data, err = (&corev1.Service{ObjectMeta: reduced(obj.ObjectMeta, true), Spec: obj.Spec}).Marshal()
	case *discoveryv1.EndpointSlice:
		reducedSlice := *obj
		reducedSlice.ObjectMeta = reduced(obj.ObjectMeta, true)
		data, err = reducedSlice.Marshal()
	default:
		return nil, fmt.Errorf("an input of type %T", obj)
	}
	if err != nil {
		return nil, err
	}
	return append(append(b, byte(kind), 1), data...), nil
}

// reduced is the metadata the store reads: no managed fields, nor the
// annotations of a Node.
func reduced(meta metav1.ObjectMeta, annotations bool) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID, ResourceVersion: meta.ResourceVersion,
		CreationTimestamp: meta.CreationTimestamp, Labels: meta.Labels, OwnerReferences: meta.OwnerReferences,
	}
	if annotations {
		out.Annotations = meta.Annotations
	}
	return out
}

var errFrame = errors.New("a malformed frame of the leader's inputs")

func readFrame(r *bufio.Reader) (frame, error) {
	payload, err := readPayload(r)
	if err != nil {
		return frame{}, err
	}
	d := decoder{b: payload[1:]}
	switch payload[0] {
	case frameHeartbeat:
		return frame{}, nil
	case frameState:
		fr := frame{seq: d.uvarint(), rv: d.uvarint()}
		count := d.uvarint()
		if d.err != nil || count > 1<<24 {
			return frame{}, errFrame
		}
		state := make(replicatedState, 0, min(count, 1024)) // what the frames hold, not what one says
		for range count {
			payload, err := readPayload(r)
			if err != nil {
				return frame{}, err
			}
			if payload[0] != frameObject {
				return frame{}, errFrame
			}
			od := decoder{b: payload[1:]}
			in := od.input()
			if od.err != nil || in.object == nil {
				return frame{}, errFrame
			}
			state = append(state, in.object)
		}
		fr.state = &state
		return fr, nil
	case frameInput:
		in := loggedInput{seq: d.uvarint(), rv: d.uvarint()}
		decoded := d.input()
		if d.err != nil {
			return frame{}, errFrame
		}
		in.key, in.object = decoded.key, decoded.object
		return frame{input: &in}, nil
	}
	return frame{}, errFrame
}

func readPayload(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > maxFrame {
		return nil, errFrame
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, err
	}
	return payload, nil
}

// decoder reads fields until the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errFrame
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errFrame
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// input reads a kind, then an object or the key of one removed.
func (d *decoder) input() loggedInput {
	if d.err != nil || len(d.b) < 2 {
		d.err = errFrame
		return loggedInput{}
	}
	k, present := kind(d.b[0]), d.b[1]
	d.b = d.b[2:]
	if k > namespaceKind {
		d.err = errFrame
		return loggedInput{}
	}
	if present == 0 {
		namespace := d.string()
		return loggedInput{key: inputKey{kind: k, NamespacedName: types.NamespacedName{Namespace: namespace, Name: d.string()}}}
	}
	var obj interface {
		metav1.Object
		Unmarshal([]byte) error
	}
	switch k {
	case nodeKind:
		obj = &corev1.Node{}
	case namespaceKind:
		obj = &corev1.Namespace{}
	case serviceKind:
		obj = &corev1.Service{}
	case sliceKind:
		obj = &discoveryv1.EndpointSlice{}
	default:
		d.err = errFrame
		return loggedInput{}
	}
	if err := obj.Unmarshal(d.b); err != nil {
		d.err = fmt.Errorf("%w: %w", errFrame, err)
		return loggedInput{}
	}
	d.b = nil
	return loggedInput{key: keyOf(k, obj), object: obj}
}
