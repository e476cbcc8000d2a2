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

package servicegrid

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
)

func echoGrid() *v1alpha1.ServiceGrid {
	return &v1alpha1.ServiceGrid{
		ObjectMeta: metav1.ObjectMeta{
			Name: "echo", Namespace: "demo", UID: "uid-1",
			Labels:      map[string]string{"app": "echo"},
			Annotations: map[string]string{"team": "edge", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
		},
		Spec: v1alpha1.ServiceGridSpec{
			GridUniqKey: "superedge.io/nodeunit",
			Fallback:    v1alpha1.FallbackNone,
			Template: corev1.ServiceSpec{
				Selector: map[string]string{"app": "echo"},
				Ports: []corev1.ServicePort{
					{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
					{Name: "raw", Port: 9000},
				},
			},
		},
	}
}

func TestDesiredService(t *testing.T) {
	tests := []struct {
		name            string
		mutate          func(*v1alpha1.ServiceGrid)
		wantLabels      map[string]string
		wantAnnotations map[string]string
	}{
		{
			name:            "SuperEdge marks",
			mutate:          func(sg *v1alpha1.ServiceGrid) { sg.Spec.GridUniqKey = "nodeunit" },
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo", LabelGridUniqKey: "nodeunit"},
			wantAnnotations: map[string]string{"team": "edge", topology.AnnotationTopologyKeys: `["nodeunit"]`},
		},
		{
			name:            "a prefixed key is no label value",
			mutate:          func(*v1alpha1.ServiceGrid) {},
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo"},
			wantAnnotations: map[string]string{"team": "edge", topology.AnnotationTopologyKeys: `["superedge.io/nodeunit"]`},
		},
		{
			name:            "fallback Any adds the ordered keys",
			mutate:          func(sg *v1alpha1.ServiceGrid) { sg.Spec.Fallback = v1alpha1.FallbackAny },
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo"},
			wantAnnotations: map[string]string{"team": "edge", topology.AnnotationTopologyKeys: `["superedge.io/nodeunit"]`, topology.AnnotationGridviewKeys: "superedge.io/nodeunit,*"},
		},
		{
			name: "minReady with a default renders the one integer",
			mutate: func(sg *v1alpha1.ServiceGrid) {
				sg.Spec.Fallback = v1alpha1.FallbackAny
				sg.Spec.MinReady = &v1alpha1.MinReady{Default: ptr.To[int32](2)}
			},
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo"},
			wantAnnotations: withMinReady("2"),
		},
		{
			name: "minReady per key renders key=count",
			mutate: func(sg *v1alpha1.ServiceGrid) {
				sg.Spec.Fallback = v1alpha1.FallbackAny
				sg.Spec.MinReady = &v1alpha1.MinReady{PerKey: []v1alpha1.KeyMinReady{{Key: "superedge.io/nodeunit", Count: 3}}}
			},
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo"},
			wantAnnotations: withMinReady("superedge.io/nodeunit=3"),
		},
		{
			name: "minReady with both renders both",
			mutate: func(sg *v1alpha1.ServiceGrid) {
				sg.Spec.Fallback = v1alpha1.FallbackAny
				sg.Spec.MinReady = &v1alpha1.MinReady{Default: ptr.To[int32](2), PerKey: []v1alpha1.KeyMinReady{{Key: "superedge.io/nodeunit", Count: 3}}}
			},
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo"},
			wantAnnotations: withMinReady("2,superedge.io/nodeunit=3"),
		},
		{
			name: "minReady replaces a min-ready annotation of the ServiceGrid",
			mutate: func(sg *v1alpha1.ServiceGrid) {
				sg.Spec.Fallback = v1alpha1.FallbackAny
				sg.Annotations[topology.AnnotationMinReady] = "9"
				sg.Spec.MinReady = &v1alpha1.MinReady{Default: ptr.To[int32](2)}
			},
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo"},
			wantAnnotations: withMinReady("2"),
		},
		{
			name: "a min-ready annotation of the ServiceGrid passes through while minReady is unset",
			mutate: func(sg *v1alpha1.ServiceGrid) {
				sg.Spec.Fallback = v1alpha1.FallbackAny
				sg.Annotations[topology.AnnotationMinReady] = "9"
			},
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo"},
			wantAnnotations: withMinReady("9"),
		},
		{
			name:            "the adoption admission recorded stays on the ServiceGrid",
			mutate:          func(sg *v1alpha1.ServiceGrid) { sg.Annotations[AnnotationAdoptServiceUID] = "svc-uid" },
			wantLabels:      map[string]string{"app": "echo", LabelGridSelector: "echo"},
			wantAnnotations: map[string]string{"team": "edge", topology.AnnotationTopologyKeys: `["superedge.io/nodeunit"]`},
		},
		{
			name: "no labels or annotations of its own",
			mutate: func(sg *v1alpha1.ServiceGrid) {
				sg.Labels, sg.Annotations = nil, nil
				sg.Spec.GridUniqKey = "topology.kubernetes.io/zone"
			},
			wantLabels:      map[string]string{LabelGridSelector: "echo"},
			wantAnnotations: map[string]string{topology.AnnotationTopologyKeys: `["topology.kubernetes.io/zone"]`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sg := echoGrid()
			tc.mutate(sg)
			svc, err := DesiredService(sg)
			if err != nil {
				t.Fatal(err)
			}
			if *svc.Name != "echo-svc" || *svc.Namespace != "demo" {
				t.Errorf("service = %s/%s, want demo/echo-svc", *svc.Namespace, *svc.Name)
			}
			assertMap(t, "labels", svc.Labels, tc.wantLabels)
			assertMap(t, "annotations", svc.Annotations, tc.wantAnnotations)
			if len(svc.OwnerReferences) != 1 {
				t.Fatalf("owner references = %d, want 1", len(svc.OwnerReferences))
			}
			owner := svc.OwnerReferences[0]
			if *owner.Kind != "ServiceGrid" || *owner.APIVersion != "topology.gridview.io/v1alpha1" || *owner.Name != "echo" ||
				*owner.UID != "uid-1" || !*owner.Controller || !*owner.BlockOwnerDeletion {
				t.Errorf("owner reference = %+v", owner)
			}
		})
	}
}

func TestDesiredServiceNeverAliasesTheServiceGrid(t *testing.T) {
	sg := echoGrid()
	svc, err := DesiredService(sg)
	if err != nil {
		t.Fatal(err)
	}
	svc.Labels["injected"] = "x"
	svc.Annotations["injected"] = "x"
	svc.Spec.Selector["injected"] = "x"
	if _, ok := sg.Labels[LabelGridSelector]; ok {
		t.Error("rendering wrote the grid-selector label into the ServiceGrid's labels")
	}
	for what, m := range map[string]map[string]string{"labels": sg.Labels, "annotations": sg.Annotations, "selector": sg.Spec.Template.Selector} {
		if _, ok := m["injected"]; ok {
			t.Errorf("the Service's %s alias the ServiceGrid's", what)
		}
	}
}

func TestDesiredServiceSpec(t *testing.T) {
	svc, err := DesiredService(echoGrid())
	if err != nil {
		t.Fatal(err)
	}
	spec := svc.Spec
	if len(spec.Ports) != 2 || spec.Selector["app"] != "echo" {
		t.Fatalf("spec = %+v", spec)
	}
	if tp := spec.Ports[0].TargetPort; tp == nil || tp.IntValue() != 8080 {
		t.Errorf("targetPort of http = %v, want 8080", tp)
	}
	if tp := spec.Ports[1].TargetPort; tp != nil {
		t.Errorf("unset targetPort rendered as %v: gridview would own a value the API server defaults", tp)
	}
	for _, unset := range []struct {
		name string
		set  bool
	}{
		{"clusterIP", spec.ClusterIP != nil}, {"clusterIPs", spec.ClusterIPs != nil}, {"ipFamilies", spec.IPFamilies != nil},
		{"type", spec.Type != nil}, {"sessionAffinity", spec.SessionAffinity != nil}, {"healthCheckNodePort", spec.HealthCheckNodePort != nil},
		{"ports[0].nodePort", spec.Ports[0].NodePort != nil}, {"ports[0].protocol", spec.Ports[0].Protocol != nil},
	} {
		if unset.set {
			t.Errorf("%s is rendered although the template leaves it unset: gridview would take it from the API server", unset.name)
		}
	}
}

// withMinReady is the annotations of echoGrid's Service with fallback Any
// and the given min-ready.
func withMinReady(value string) map[string]string {
	return map[string]string{
		"team":                          "edge",
		topology.AnnotationTopologyKeys: `["superedge.io/nodeunit"]`,
		topology.AnnotationGridviewKeys: "superedge.io/nodeunit,*",
		topology.AnnotationMinReady:     value,
	}
}

func assertMap(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s[%s] = %q, want %q", what, k, got[k], v)
		}
	}
}
