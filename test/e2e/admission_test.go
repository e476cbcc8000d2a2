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
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// Every rule kube-apiserver applies to Services applies to the template: the
// Service is validated by a dry run, and its errors point into spec.template.
func TestTemplateIsValidatedByKubeAPIServer(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	tests := []struct {
		name      string
		mutate    func(*corev1.ServiceSpec)
		wantField string
	}{
		{name: "unknown session affinity", mutate: func(s *corev1.ServiceSpec) { s.SessionAffinity = "Sticky" }, wantField: "spec.template.sessionAffinity"},
		{name: "ExternalName without a name", mutate: func(s *corev1.ServiceSpec) { s.Type = corev1.ServiceTypeExternalName }, wantField: "spec.template.externalName"},
		{name: "invalid selector value", mutate: func(s *corev1.ServiceSpec) { s.Selector = map[string]string{"app": "not a value"} }, wantField: "spec.template.selector"},
		{name: "external traffic policy on a ClusterIP Service", mutate: func(s *corev1.ServiceSpec) {
			s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}, wantField: "spec.template.externalTrafficPolicy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sg := framework.NewServiceGrid("tmpl")
			tc.mutate(&sg.Spec.Template)
			_, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Create(ctx, sg, metav1.CreateOptions{})
			expectInvalid(t, err, tc.wantField)
		})
	}
	if _, err := kubeClient.CoreV1().Services(ns).Get(ctx, "tmpl-svc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused ServiceGrid left a Service behind: %v", err)
	}
}

// A user who may write ServiceGrids but not Services gets no Service through
// gridview's rights.
func TestServiceGridNeedsTheRightToWriteServices(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	grant(t, ns, "gridview-only", []rbacv1.PolicyRule{
		{APIGroups: []string{"topology.gridview.io"}, Resources: []string{"servicegrids"}, Verbs: []string{"create", "get", "update", "patch"}},
	})
	grant(t, ns, "gridview-and-services", []rbacv1.PolicyRule{
		{APIGroups: []string{"topology.gridview.io"}, Resources: []string{"servicegrids"}, Verbs: []string{"create", "get", "update", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create", "update"}},
	})

	_, err := as(t, "gridview-only").TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("lb"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || err.(apierrors.APIStatus).Status().Code != http.StatusForbidden ||
		!strings.Contains(err.Error(), "you must be allowed to create services in namespace") {
		t.Errorf("create without the right to create Services: %v, want 403 saying why", err)
	}
	if _, err := as(t, "gridview-and-services").TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("lb"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create with the right to create Services: %v", err)
	}
	framework.WaitServiceGridReady(t, gridview, ns, "lb", 5*time.Second)
	// A rule limited by resourceNames grants no create, kube-apiserver
	// asking with no name: nor does it through a ServiceGrid.
	grant(t, ns, "names-services", []rbacv1.PolicyRule{
		{APIGroups: []string{"topology.gridview.io"}, Resources: []string{"servicegrids"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create"}, ResourceNames: []string{"named-svc"}},
	})
	direct, err := kubernetes.NewForConfig(impersonating("names-services"))
	if err != nil {
		t.Fatal(err)
	}
	named := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "named-svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := direct.CoreV1().Services(ns).Create(ctx, named, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("a direct create of Service named-svc under a rule with resourceNames [named-svc]: %v, want 403 (what RBAC does changed: the test proves nothing)", err)
	}
	_, err = as(t, "names-services").TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("named"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "you must be allowed to create services in namespace") {
		t.Errorf("ServiceGrid named (Service named-svc) under a rule with resourceNames [named-svc]: %v, want 403 saying why", err)
	}
	_, err = as(t, "gridview-only").TopologyV1alpha1().ServiceGrids(ns).Patch(ctx, "lb", "application/merge-patch+json",
		[]byte(`{"spec":{"template":{"type":"LoadBalancer"}}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "you must be allowed to update services") {
		t.Errorf("update without the right to update Services: %v, want 403 saying why", err)
	}
}

// Server-side apply to a new name creates the ServiceGrid through the update
// path; it is admitted exactly as a POST: the rights to create the Service
// and kube-apiserver's dry run of it.
func TestServerSideApplyCreateIsAdmittedAsCreate(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	servicegrids := rbacv1.PolicyRule{APIGroups: []string{"topology.gridview.io"}, Resources: []string{"servicegrids"},
		Verbs: []string{"create", "get", "update", "patch"}}
	grant(t, ns, "apply-only", []rbacv1.PolicyRule{servicegrids})
	grant(t, ns, "apply-and-services", []rbacv1.PolicyRule{servicegrids,
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create", "update", "patch"}}})
	apply := func(user, name, template string) error {
		body := fmt.Sprintf(`apiVersion: topology.gridview.io/v1alpha1
kind: ServiceGrid
metadata: {name: %s}
spec:
  gridUniqKey: superedge.io/nodeunit
  template: %s
`, name, template)
		_, err := as(t, user).TopologyV1alpha1().ServiceGrids(ns).Patch(ctx, name, types.ApplyYAMLPatchType, []byte(body),
			metav1.PatchOptions{FieldManager: user})
		return err
	}

	err := apply("apply-only", "lb", `{type: LoadBalancer, externalIPs: [203.0.113.7], ports: [{port: 80}]}`)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "you must be allowed to create services in namespace") {
		t.Errorf("apply-create without the right to create Services: %v, want 403 saying why", err)
	}
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, "lb", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused apply stored the ServiceGrid: %v", err)
	}

	expectInvalid(t, apply("apply-and-services", "sticky", `{sessionAffinity: Sticky, ports: [{port: 80}]}`), "spec.template.sessionAffinity")
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, "sticky", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an apply with an invalid template stored the ServiceGrid: %v", err)
	}

	if err := apply("apply-and-services", "lb", `{type: LoadBalancer, ports: [{port: 80}]}`); err != nil {
		t.Fatalf("apply-create with the rights to create Services: %v", err)
	}
	framework.WaitServiceGridReady(t, gridview, ns, "lb", 5*time.Second)
	for _, name := range []string{"lb-svc", "sticky-svc"} {
		if _, err := kubeClient.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{}); (name == "lb-svc") != (err == nil) {
			t.Errorf("Service %s: %v", name, err)
		}
	}
}

// Adopting an orphan changes a Service someone else made: it needs the
// rights to change it, which the rights to create one do not give, and the
// adopted Service keeps nothing planted on it outside the template. A port
// the template drops afterwards goes, so no one else still owns it.
func TestAdoptionNeedsTheRightToChangeTheOrphanAndKeepsNothingPlanted(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	grantCreatesAndChangesServices(t, ns)
	planted := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan-svc", Labels: map[string]string{
			"superedge.io/grid-selector": "orphan", "service.kubernetes.io/service-proxy-name": "elsewhere"}},
		Spec: corev1.ServiceSpec{
			ExternalIPs: []string{"203.0.113.7"},
			Ports:       []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(9999)}, {Name: "admin", Port: 9000}},
		},
	}
	planted, err := kubeClient.CoreV1().Services(ns).Create(ctx, planted, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	_, err = as(t, "creates-services").TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("orphan"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "you must be allowed to update services") {
		t.Errorf("adoption with the right to create Services only: %v, want 403 saying update", err)
	}
	if after := mustService(t, ns, "orphan-svc"); after.ResourceVersion != planted.ResourceVersion {
		t.Errorf("a refused adoption changed the orphan: resourceVersion %s -> %s", planted.ResourceVersion, after.ResourceVersion)
	}

	sg := framework.NewServiceGrid("orphan")
	sg.Spec.Template.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}
	created, err := as(t, "changes-services").TopologyV1alpha1().ServiceGrids(ns).Create(ctx, sg, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("adoption with the rights to change Services: %v", err)
	}
	framework.WaitServiceGridReady(t, gridview, ns, "orphan", 5*time.Second)
	adopted := mustService(t, ns, "orphan-svc")
	ports := map[int32]int32{}
	for _, port := range adopted.Spec.Ports {
		ports[port.Port] = port.TargetPort.IntVal
	}
	switch {
	case !metav1.IsControlledBy(adopted, created):
		t.Errorf("owners %+v", adopted.OwnerReferences)
	case adopted.Spec.ClusterIP != planted.Spec.ClusterIP || adopted.UID != planted.UID:
		t.Errorf("adoption replaced the Service: clusterIP %s -> %s, uid %s -> %s", planted.Spec.ClusterIP, adopted.Spec.ClusterIP, planted.UID, adopted.UID)
	case len(adopted.Spec.ExternalIPs) != 0 || adopted.Labels["service.kubernetes.io/service-proxy-name"] != "":
		t.Errorf("planted routing survived the adoption: externalIPs %v, labels %v", adopted.Spec.ExternalIPs, adopted.Labels)
	case len(ports) != 2 || ports[80] != 80 || ports[443] != 443:
		t.Errorf("ports %+v, want the template's 80 and 443 with their default target ports", adopted.Spec.Ports)
	}

	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Patch(ctx, "orphan", types.MergePatchType,
		[]byte(`{"spec":{"template":{"ports":[{"name":"https","port":443}]}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 5*time.Second, "port 80 removed from the adopted Service", serviceMatches(ns, "orphan-svc", func(svc *corev1.Service) error {
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 {
			return fmt.Errorf("ports %+v", svc.Spec.Ports)
		}
		return nil
	}))
}

// grantCreatesAndChangesServices makes two users who may write ServiceGrids:
// creates-services, who may create Services only, and changes-services, who
// may also update and patch them.
func grantCreatesAndChangesServices(t *testing.T, ns string) {
	t.Helper()
	servicegrids := rbacv1.PolicyRule{APIGroups: []string{"topology.gridview.io"}, Resources: []string{"servicegrids"},
		Verbs: []string{"create", "get", "update", "patch"}}
	grant(t, ns, "creates-services", []rbacv1.PolicyRule{servicegrids,
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create"}}})
	grant(t, ns, "changes-services", []rbacv1.PolicyRule{servicegrids,
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create", "update", "patch"}}})
}

// grant binds a Role with the rules to the user of the same name.
func grant(t *testing.T, ns, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	if _, err := kubeClient.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := kubeClient.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// as returns a client that kube-apiserver authenticates as the admin and
// then impersonates user, as the aggregator forwards it to gridview.
func as(t *testing.T, user string) versioned.Interface {
	t.Helper()
	client, err := versioned.NewForConfig(impersonating(user))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// impersonating is the admin's config impersonating user.
func impersonating(user string) *rest.Config {
	cfg := rest.CopyConfig(cluster.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	return cfg
}

// An orphan that turns up after the ServiceGrid was admitted as a create (its
// controller deleted with --cascade=orphan) is adopted by no one's rights:
// only a later write of the ServiceGrid by someone who may change that
// Service has gridview take it over. The record of that write is the server's:
// a value the user sends is dropped.
func TestAnOrphanAppearingLaterIsAdoptedOnlyForAWriteAdmittedAgainstIt(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	grantCreatesAndChangesServices(t, ns)
	owner, err := kubeClient.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "superedge"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	foreign, err := kubeClient.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "late-svc", Labels: map[string]string{"superedge.io/grid-selector": "late"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &yes}}},
		Spec: corev1.ServiceSpec{ExternalIPs: []string{"203.0.113.7"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	sg := framework.NewServiceGrid("late")
	sg.Annotations = map[string]string{"topology.gridview.io/adopt-service-uid": string(foreign.UID)}
	created, err := as(t, "creates-services").TopologyV1alpha1().ServiceGrids(ns).Create(ctx, sg, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a ServiceGrid whose Service name is taken, by a user who may create Services: %v", err)
	}
	if uid, ok := created.Annotations["topology.gridview.io/adopt-service-uid"]; ok {
		t.Errorf("the adoption the user sent was stored: %q", uid)
	}
	waitReason(t, ns, "late", "ServiceConflict")

	if _, err := kubeClient.CoreV1().Services(ns).Patch(ctx, "late-svc", types.MergePatchType,
		[]byte(`{"metadata":{"ownerReferences":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReason(t, ns, "late", "AdoptionNotAuthorized")
	if orphan := mustService(t, ns, "late-svc"); len(orphan.OwnerReferences) != 0 || len(orphan.Spec.ExternalIPs) != 1 {
		t.Errorf("an orphan no write was admitted against was changed: owners %+v, externalIPs %v", orphan.OwnerReferences, orphan.Spec.ExternalIPs)
	}

	if _, err := as(t, "creates-services").TopologyV1alpha1().ServiceGrids(ns).Patch(ctx, "late", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"adopt":"please"}}}`), metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a write asking adoption by a user who may only create Services: %v, want 403", err)
	}
	if _, err := as(t, "changes-services").TopologyV1alpha1().ServiceGrids(ns).Patch(ctx, "late", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"adopt":"please"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("a write asking adoption by a user who may change the orphan: %v", err)
	}
	framework.WaitServiceGridReady(t, gridview, ns, "late", 5*time.Second)
	if adopted := mustService(t, ns, "late-svc"); !metav1.IsControlledBy(adopted, created) || adopted.UID != foreign.UID || len(adopted.Spec.ExternalIPs) != 0 {
		t.Errorf("adopted Service: uid %s (was %s), owners %+v, externalIPs %v", adopted.UID, foreign.UID, adopted.OwnerReferences, adopted.Spec.ExternalIPs)
	}
}

// waitReason waits until the Ready condition of the ServiceGrid has that reason.
func waitReason(t *testing.T, ns, name, reason string) {
	t.Helper()
	localcluster.Eventually(t, 10*time.Second, "ServiceGrid "+name+" "+reason, func(ctx context.Context) error {
		sg, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(sg.Status.Conditions, "Ready"); cond == nil || cond.Reason != reason {
			return fmt.Errorf("status %+v", sg.Status)
		}
		return nil
	})
}
