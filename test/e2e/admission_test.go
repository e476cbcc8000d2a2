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
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/generated/clientset/versioned"
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
			sg := newServiceGrid("tmpl")
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

	_, err := as(t, "gridview-only").TopologyV1alpha1().ServiceGrids(ns).Create(ctx, newServiceGrid("lb"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || err.(apierrors.APIStatus).Status().Code != http.StatusForbidden ||
		!strings.Contains(err.Error(), "you must be allowed to create services in namespace") {
		t.Errorf("create without the right to create Services: %v, want 403 saying why", err)
	}
	if _, err := as(t, "gridview-and-services").TopologyV1alpha1().ServiceGrids(ns).Create(ctx, newServiceGrid("lb"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create with the right to create Services: %v", err)
	}
	waitReady(t, ns, "lb")
	_, err = as(t, "gridview-only").TopologyV1alpha1().ServiceGrids(ns).Patch(ctx, "lb", "application/merge-patch+json",
		[]byte(`{"spec":{"template":{"type":"LoadBalancer"}}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "you must be allowed to update services") {
		t.Errorf("update without the right to update Services: %v, want 403 saying why", err)
	}
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
	cfg := rest.CopyConfig(cluster.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
