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

package inputlog

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/dump"
)

// withServerFields adds what the API server sets and the views never read.
func withServerFields(meta *metav1.ObjectMeta) {
	meta.ResourceVersion = "12345"
	meta.Generation = 7
	meta.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
}

func TestCodecRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind Kind
		in   metav1.Object
		// want is what the log holds of in.
		want metav1.Object
	}{{
		name: "node keeps labels, loses annotations, spec and status",
		kind: Nodes,
		in: func() metav1.Object {
			n := node("edge-1", "a")
			withServerFields(&n.ObjectMeta)
			return n
		}(),
		want: &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: "edge-1", UID: "uid-edge-1", CreationTimestamp: created, Labels: map[string]string{"topology.gridview.io/unit": "a"},
		}},
	}, {
		name: "namespace keeps annotations, loses status",
		kind: Namespaces,
		in: func() metav1.Object {
			ns := namespace("demo", map[string]string{"topology.gridview.io/keys": "unit"})
			withServerFields(&ns.ObjectMeta)
			return ns
		}(),
		want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: "demo", UID: "uid-demo", Annotations: map[string]string{"topology.gridview.io/keys": "unit"},
		}},
	}, {
		name: "service keeps spec and annotations, loses status",
		kind: Services,
		in: func() metav1.Object {
			s := service("demo", "echo", map[string]string{"topology.gridview.io/keys": "unit"})
			withServerFields(&s.ObjectMeta)
			return s
		}(),
		want: func() metav1.Object {
			s := service("demo", "echo", map[string]string{"topology.gridview.io/keys": "unit"})
			s.ResourceVersion, s.Status = "", corev1.ServiceStatus{}
			return s
		}(),
	}, {
		name: "endpointslice keeps endpoints, ports and owner",
		kind: EndpointSlices,
		in: func() metav1.Object {
			s := slice("demo", "echo", "edge-1", "edge-2")
			withServerFields(&s.ObjectMeta)
			return s
		}(),
		want: func() metav1.Object {
			s := slice("demo", "echo", "edge-1", "edge-2")
			s.ResourceVersion = ""
			return s
		}(),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := encode(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decode(KeyOf(tc.kind, tc.in), data)
			if err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("decoded\n%s\nwant\n%s", dump.Pretty(got), dump.Pretty(tc.want))
			}
			again, err := encode(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Error("encoding the decoded input again gives other bytes")
			}
		})
	}
}

// TestCodecWritesOnlyWhatViewsRead: an update that changes nothing the views
// read encodes as before, so the writer never writes it.
func TestCodecWritesOnlyWhatViewsRead(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       metav1.Object
		update   func(metav1.Object)
		wantSame bool
	}{{
		name: "node status update by kubelet",
		in:   node("edge-1", "a"),
		update: func(obj metav1.Object) {
			n := obj.(*corev1.Node)
			n.ResourceVersion = "999"
			n.Status.Conditions[0].LastHeartbeatTime = metav1.Date(2026, 2, 1, 0, 0, 0, 0, metav1.Now().Location())
			n.Status.Capacity = corev1.ResourceList{}
			n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
		},
		wantSame: true,
	}, {
		name: "node annotations",
		in:   node("edge-1", "a"),
		update: func(obj metav1.Object) {
			obj.SetAnnotations(map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"})
			obj.SetResourceVersion("2")
		},
		wantSame: true,
	}, {
		name: "node spec",
		in:   node("edge-1", "a"),
		update: func(obj metav1.Object) {
			obj.(*corev1.Node).Spec.Unschedulable = true
		},
		wantSame: true,
	}, {
		name:   "node labels",
		in:     node("edge-1", "a"),
		update: func(obj metav1.Object) { obj.SetLabels(map[string]string{"topology.gridview.io/unit": "b"}) },
	}, {
		name: "service status",
		in:   service("demo", "echo", nil),
		update: func(obj metav1.Object) {
			obj.(*corev1.Service).Status = corev1.ServiceStatus{}
			obj.SetResourceVersion("2")
		},
		wantSame: true,
	}, {
		name:   "service spec",
		in:     service("demo", "echo", nil),
		update: func(obj metav1.Object) { obj.(*corev1.Service).Spec.Ports[0].Port = 81 },
	}, {
		name:   "service annotations",
		in:     service("demo", "echo", nil),
		update: func(obj metav1.Object) { obj.SetAnnotations(map[string]string{"topology.gridview.io/keys": "unit"}) },
	}, {
		name:     "namespace status",
		in:       namespace("demo", nil),
		update:   func(obj metav1.Object) { obj.(*corev1.Namespace).Status.Phase = corev1.NamespaceTerminating },
		wantSame: true,
	}, {
		name:   "namespace annotations",
		in:     namespace("demo", nil),
		update: func(obj metav1.Object) { obj.SetAnnotations(map[string]string{"topology.gridview.io/keys": "unit"}) },
	}, {
		name:     "endpointslice resourceVersion",
		in:       slice("demo", "echo", "edge-1"),
		update:   func(obj metav1.Object) { obj.SetResourceVersion("2"); obj.SetGeneration(2) },
		wantSame: true,
	}, {
		name: "endpointslice readiness",
		in:   slice("demo", "echo", "edge-1"),
		update: func(obj metav1.Object) {
			obj.(*discoveryv1.EndpointSlice).Endpoints[0].Conditions.Ready = new(bool)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := encode(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			tc.update(tc.in)
			after, err := encode(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if same := bytes.Equal(before, after); same != tc.wantSame {
				t.Errorf("the encoding stayed the same: %v, want %v", same, tc.wantSame)
			}
		})
	}
}

func TestCodecRejects(t *testing.T) {
	echo, err := encode(service("demo", "echo", nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := encode(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}); err == nil {
		t.Error("encoded a Pod")
	}
	for _, tc := range []struct {
		name string
		key  Key
		data []byte
	}{
		{"another name", serviceKey("demo", "other"), echo},
		{"another namespace", serviceKey("other", "echo"), echo},
		{"garbage", serviceKey("demo", "echo"), []byte{0xff, 0xff, 0xff}},
		{"unknown kind", Key{Kind: Kind(7), NamespacedName: types.NamespacedName{Namespace: "demo", Name: "echo"}}, echo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if obj, err := decode(tc.key, tc.data); err == nil {
				t.Errorf("decoded %v as %s/%s", tc.key, obj.GetNamespace(), obj.GetName())
			}
		})
	}
}

func TestPaths(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Key
	}{
		{testPrefix + "nodes//edge-1", nodeKey("edge-1")},
		{testPrefix + "namespaces//demo", namespaceKey("demo")},
		{testPrefix + "services/demo/echo", serviceKey("demo", "echo")},
		{testPrefix + "endpointslices/demo/echo-x", sliceKey("demo", "echo-x")},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := parsePath(testPrefix, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("parsed %v, want %v", got, tc.want)
			}
			if path := got.path(testPrefix); path != tc.path {
				t.Errorf("the path of %v is %q", got, path)
			}
		})
	}
	for _, tc := range []struct{ name, path string }{
		{"another prefix", "/other/nodes//edge-1"},
		{"the prefix alone", testPrefix},
		{"no namespace part", testPrefix + "nodes/edge-1"},
		{"no name", testPrefix + "services/demo/"},
		{"a part too many", testPrefix + "services/demo/echo/x"},
		{"unknown kind", testPrefix + "pods/demo/echo"},
		{"kind without its plural", testPrefix + "node//edge-1"},
		{"prefix without its slash", "/test/inputsnodes//edge-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if key, err := parsePath(testPrefix, tc.path); err == nil {
				t.Errorf("parsed %q as %v", tc.path, key)
			}
		})
	}
	if got := Kind(9).String(); got != "Kind(9)" {
		t.Errorf("Kind(9) prints as %q", got)
	}
	if got := EndpointSlices.String(); got != "endpointslices" {
		t.Errorf("EndpointSlices prints as %q", got)
	}
}
