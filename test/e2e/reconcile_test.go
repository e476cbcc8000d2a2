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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

func serviceMatches(ns, name string, check func(*corev1.Service) error) func(context.Context) error {
	return func(ctx context.Context) error {
		svc, err := kubeClient.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return check(svc)
	}
}

func TestServiceGridOwnsItsService(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	grids := gridview.TopologyV1alpha1().ServiceGrids(ns)
	services := kubeClient.CoreV1().Services(ns)

	sg := framework.NewServiceGrid("echo")
	sg.Annotations = map[string]string{"team": "edge"}
	sg.Spec.GridUniqKey = "nodeunit"
	created, err := grids.Create(ctx, sg, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, time.Second, "Service created with SuperEdge's marks", serviceMatches(ns, "echo-svc", func(svc *corev1.Service) error {
		ref := metav1.GetControllerOf(svc)
		switch {
		case ref == nil || ref.UID != created.UID || ref.Kind != "ServiceGrid" || ref.APIVersion != "topology.gridview.io/v1alpha1":
			return fmt.Errorf("controller reference %+v", ref)
		case svc.Labels["app"] != "echo" || svc.Labels["superedge.io/grid-selector"] != "echo" || svc.Labels["superedge.io/grid-uniq-key"] != "nodeunit":
			return fmt.Errorf("labels %v", svc.Labels)
		case svc.Annotations["topologyKeys"] != `["nodeunit"]` || svc.Annotations["team"] != "edge":
			return fmt.Errorf("annotations %v", svc.Annotations)
		case len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.ClusterIP == "":
			return fmt.Errorf("spec %+v", svc.Spec)
		}
		return nil
	}))
	framework.WaitServiceGridReady(t, gridview, ns, "echo", 5*time.Second)
	clusterIP := mustService(t, ns, "echo-svc").Spec.ClusterIP

	steps := []struct {
		name  string
		patch string
		check func(*corev1.Service) error
	}{
		// A prefixed key is no valid label value: the label goes, the annotation carries it.
		{name: "gridUniqKey follows", patch: `{"spec":{"gridUniqKey":"topology.kubernetes.io/zone"}}`, check: func(svc *corev1.Service) error {
			if _, labelled := svc.Labels["superedge.io/grid-uniq-key"]; svc.Annotations["topologyKeys"] != `["topology.kubernetes.io/zone"]` || labelled {
				return fmt.Errorf("labels %v annotations %v", svc.Labels, svc.Annotations)
			}
			return nil
		}},
		{name: "fallback Any adds the ordered keys", patch: `{"spec":{"fallback":"Any"}}`, check: func(svc *corev1.Service) error {
			if svc.Annotations["topology.gridview.io/keys"] != "topology.kubernetes.io/zone,*" {
				return fmt.Errorf("annotations %v", svc.Annotations)
			}
			return nil
		}},
		{name: "ports added", patch: `{"spec":{"template":{"ports":[{"name":"http","port":80},{"name":"https","port":443}]}}}`, check: func(svc *corev1.Service) error {
			if len(svc.Spec.Ports) != 2 {
				return fmt.Errorf("ports %+v", svc.Spec.Ports)
			}
			return nil
		}},
		{name: "port removed", patch: `{"spec":{"template":{"ports":[{"name":"https","port":443}]}}}`, check: func(svc *corev1.Service) error {
			if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 {
				return fmt.Errorf("ports %+v", svc.Spec.Ports)
			}
			return nil
		}},
		{name: "label change follows", patch: `{"metadata":{"labels":{"app":"echo2"}}}`, check: func(svc *corev1.Service) error {
			if svc.Labels["app"] != "echo2" {
				return fmt.Errorf("labels %v", svc.Labels)
			}
			return nil
		}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if _, err := grids.Patch(ctx, "echo", types.MergePatchType, []byte(step.patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			localcluster.Eventually(t, time.Second, step.name, serviceMatches(ns, "echo-svc", func(svc *corev1.Service) error {
				if svc.Spec.ClusterIP != clusterIP {
					return fmt.Errorf("clusterIP changed from %s to %s", clusterIP, svc.Spec.ClusterIP)
				}
				return step.check(svc)
			}))
		})
	}

	t.Run("hand edit is undone", func(t *testing.T) {
		if _, err := services.Patch(ctx, "echo-svc", types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"topologyKeys":"[]","other-tool":"kept"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		localcluster.Eventually(t, 5*time.Second, "annotation repaired", serviceMatches(ns, "echo-svc", func(svc *corev1.Service) error {
			if svc.Annotations["topologyKeys"] != `["topology.kubernetes.io/zone"]` || svc.Annotations["other-tool"] != "kept" {
				return fmt.Errorf("annotations %v", svc.Annotations)
			}
			return nil
		}))
	})
	t.Run("hand delete is undone", func(t *testing.T) {
		old := mustService(t, ns, "echo-svc")
		if err := services.Delete(ctx, "echo-svc", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		localcluster.Eventually(t, 5*time.Second, "Service recreated", serviceMatches(ns, "echo-svc", func(svc *corev1.Service) error {
			if svc.UID == old.UID {
				return fmt.Errorf("still the old Service")
			}
			return nil
		}))
	})
	t.Run("delete removes the Service", func(t *testing.T) {
		if err := grids.Delete(ctx, "echo", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		localcluster.Eventually(t, time.Second, "Service deleted", func(ctx context.Context) error {
			_, err := services.Get(ctx, "echo-svc", metav1.GetOptions{})
			return framework.Gone(err)
		})
	})
}

func TestServiceGridNeverTakesAForeignService(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web-svc", Labels: map[string]string{"owner": "someone-else"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 9999}}},
	}
	foreign, err := kubeClient.CoreV1().Services(ns).Create(ctx, foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 5*time.Second, "ServiceConflict", func(ctx context.Context) error {
		sg, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(sg.Status.Conditions, "Ready")
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "ServiceConflict" {
			return fmt.Errorf("conditions %+v", sg.Status.Conditions)
		}
		return nil
	})
	after := mustService(t, ns, "web-svc")
	if after.ResourceVersion != foreign.ResourceVersion || len(after.OwnerReferences) != 0 {
		t.Errorf("foreign Service was changed: rv %s -> %s, owners %v", foreign.ResourceVersion, after.ResourceVersion, after.OwnerReferences)
	}
}

func TestServiceGridAdoptsItsOrphanedService(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	orphan := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "adopt-svc", Labels: map[string]string{"superedge.io/grid-selector": "adopt"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := kubeClient.CoreV1().Services(ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("adopt"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 5*time.Second, "Service adopted", serviceMatches(ns, "adopt-svc", func(svc *corev1.Service) error {
		if !metav1.IsControlledBy(svc, created) {
			return fmt.Errorf("owners %+v", svc.OwnerReferences)
		}
		return nil
	}))
}

func TestDryRunCreatesNoService(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("dry"),
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if _, err := kubeClient.CoreV1().Services(ns).Get(ctx, "dry-svc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run create produced a Service: %v", err)
	}
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run create stored the ServiceGrid: %v", err)
	}
}

func mustService(t *testing.T, ns, name string) *corev1.Service {
	t.Helper()
	svc, err := kubeClient.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
