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

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// OpenYurt's node pool label, set on nodes by OpenYurt's pool controller.
const nodePoolLabel = "apps.openyurt.io/nodepool"

// The rules users already write reach a node as its views, in kubectl and
// in what a real kube-proxy reading through gridview-wrapper programs. a1
// views; pools cross units so that a pool filter cannot pass for another.
func TestRulesReachKubeProxyThroughTheWrapper(t *testing.T) {
	s := newRuleSite(t, map[string]map[string]string{
		"a1": {framework.UnitKey: "a", zoneKey: "z1", nodePoolLabel: "p1"},
		"a2": {framework.UnitKey: "a", zoneKey: "z1", nodePoolLabel: "p2"},
		"b1": {framework.UnitKey: "b", zoneKey: "z1", nodePoolLabel: "p1"},
		"c1": {framework.UnitKey: "c", zoneKey: "z2", nodePoolLabel: "p2"},
	})
	s.createService(t, "yurt", func(svc *corev1.Service) {
		svc.Annotations[topology.AnnotationOpenYurtTopologyKeys] = "openyurt.io/nodepool"
	})
	s.createService(t, "plain", func(*corev1.Service) {})
	s.createService(t, "capacity", func(svc *corev1.Service) {
		svc.Annotations[topology.AnnotationGridviewKeys] = framework.UnitKey + "," + zoneKey + ",*"
		svc.Annotations[topology.AnnotationMinReady] = "2"
	})
	for _, service := range []string{"yurt", "plain", "capacity"} {
		s.runPods(t, service, podOn{"a2", true}, podOn{"b1", true}, podOn{"c1", true})
	}

	n := nodeNetns(t, s.Node("a1"))
	if err := cluster.SetNodeInternalIP(context.Background(), n.NodeName, n.IP); err != nil {
		t.Fatal(err)
	}
	proxy := startWrappedKubeProxy(t, n)
	expect := func(t *testing.T, service, rule string, want ...string) {
		t.Helper()
		s.expectNep(t, "a1", service, rule, want...)
		proxy.expect(t, s.NS, service, want...)
	}

	// OpenYurt: one key, a hard filter. a1's pool p1 holds b1 alone.
	t.Run("openyurt nodepool", func(t *testing.T) {
		expect(t, "yurt", "OpenYurt", s.podIPs(t, "yurt", "b1")...)
		// Without an endpoint in the pool nothing is left: no fallback.
		s.deletePod(t, "yurt", "b1")
		expect(t, "yurt", "OpenYurt")
	})

	// The Namespace's keys apply to plain, which has no rule of its own, and
	// follow every change of the Namespace live.
	t.Run("namespace default changed live", func(t *testing.T) {
		expect(t, "plain", "None", s.podIPs(t, "plain", "a2", "b1", "c1")...)
		s.annotateNamespace(t, framework.UnitKey)
		expect(t, "plain", "Namespace", s.podIPs(t, "plain", "a2")...)
		s.annotateNamespace(t, zoneKey)
		expect(t, "plain", "Namespace", s.podIPs(t, "plain", "a2", "b1")...)
		s.annotateNamespace(t, "")
		expect(t, "plain", "None", s.podIPs(t, "plain", "a2", "b1", "c1")...)
	})

	// min-ready "2": unit a holds one ready endpoint, so a1 routes to its
	// zone, which holds two; a second ready endpoint in unit a brings the
	// unit back.
	t.Run("min-ready gates the unit", func(t *testing.T) {
		expect(t, "capacity", "Ordered("+zoneKey+")", s.podIPs(t, "capacity", "a2", "b1")...)
		s.runPods(t, "capacity", podOn{"a1", true})
		expect(t, "capacity", "Ordered("+framework.UnitKey+")", s.podIPs(t, "capacity", "a1", "a2")...)
	})
}

// annotateNamespace sets the site's Namespace default keys, or removes them
// when keys is empty.
func (s ruleSite) annotateNamespace(t *testing.T, keys string) {
	t.Helper()
	value := "null"
	if keys != "" {
		value = fmt.Sprintf("%q", keys)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, topology.AnnotationGridviewKeys, value)
	if _, err := kubeClient.CoreV1().Namespaces().Patch(context.Background(), s.NS, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// spec.minReady reaches the Service as the min-ready annotation, and a
// count out of bounds is refused with its field path.
func TestServiceGridMinReadyRendersTheAnnotation(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	grids := gridview.TopologyV1alpha1().ServiceGrids(ns)

	invalid := framework.NewServiceGrid("zero")
	invalid.Spec.Fallback = topologyv1alpha1.FallbackAny
	invalid.Spec.MinReady = &topologyv1alpha1.MinReady{Default: ptr.To[int32](0)}
	_, err := grids.Create(ctx, invalid, metav1.CreateOptions{})
	expectInvalid(t, err, "spec.minReady.default")

	sg := framework.NewServiceGrid("echo")
	sg.Spec.Fallback = topologyv1alpha1.FallbackAny
	sg.Spec.MinReady = &topologyv1alpha1.MinReady{Default: ptr.To[int32](2)}
	if _, err := grids.Create(ctx, sg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMinReady(t, ns, "echo-svc", "2")

	stored := framework.WaitServiceGridReady(t, gridview, ns, "echo", 5*time.Second)
	stored.Spec.MinReady = &topologyv1alpha1.MinReady{PerKey: []topologyv1alpha1.KeyMinReady{{Key: framework.UnitKey, Count: 3}}}
	if _, err := grids.Update(ctx, stored, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMinReady(t, ns, "echo-svc", framework.UnitKey+"=3")
}

func waitMinReady(t *testing.T, ns, service, want string) {
	t.Helper()
	localcluster.Eventually(t, 10*time.Second, fmt.Sprintf("Service %s with %s %q", service, topology.AnnotationMinReady, want),
		serviceMatches(ns, service, func(svc *corev1.Service) error {
			if got := svc.Annotations[topology.AnnotationMinReady]; got != want {
				return fmt.Errorf("%s = %q", topology.AnnotationMinReady, got)
			}
			return nil
		}))
}
