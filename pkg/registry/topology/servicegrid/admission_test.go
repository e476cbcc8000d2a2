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
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/apis/topology/install"
	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/controller/servicegrid"
)

func TestAuthorizeRequiresServiceRights(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"devs"}}
	tests := []struct {
		name     string
		decision authorizer.Decision
		err      error
		wantCode int32
		wantMsg  string
	}{
		{name: "allowed", decision: authorizer.DecisionAllow},
		{name: "denied", decision: authorizer.DecisionDeny, wantCode: http.StatusForbidden,
			wantMsg: `you must be allowed to create services in namespace "demo" yourself: no RBAC rule`},
		{name: "no opinion", decision: authorizer.DecisionNoOpinion, wantCode: http.StatusForbidden, wantMsg: "create Service echo-svc"},
		{name: "authorizer unreachable", decision: authorizer.DecisionNoOpinion, err: errors.New("connection refused"),
			wantCode: http.StatusServiceUnavailable, wantMsg: "connection refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked authorizer.Attributes
			checks := &ClusterChecks{Authorizer: authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
				asked = a
				reason := ""
				if tc.decision == authorizer.DecisionDeny {
					reason = "no RBAC rule"
				}
				return tc.decision, reason, tc.err
			})}
			ctx := genericapirequest.WithUser(context.Background(), alice)
			err := checks.authorize(ctx, &topology.ServiceGrid{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo"}}, "create")
			if asked.GetUser().GetName() != "alice" || asked.GetVerb() != "create" || asked.GetResource() != "services" ||
				asked.GetNamespace() != "demo" || asked.GetName() != "" || asked.GetAPIGroup() != "" {
				t.Errorf("asked the authorizer about %+v", asked)
			}
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			status, ok := err.(apierrors.APIStatus)
			if !ok || status.Status().Code != tc.wantCode || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("err = %v, want code %d containing %q", err, tc.wantCode, tc.wantMsg)
			}
		})
	}
}

// kube-apiserver authorizes a create with no name, so an RBAC rule limited
// by resourceNames grants none; the check asks the same, and a ServiceGrid
// lends no such create. Updates and patches name their object.
func TestAuthorizeNamesTheServiceAsKubeAPIServerWould(t *testing.T) {
	// rbacResourceNames is RBAC with one rule: services, every verb, resourceNames [echo-svc].
	rbacResourceNames := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetResource() == "services" && a.GetName() == "echo-svc" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	checks := &ClusterChecks{Authorizer: rbacResourceNames}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"})
	sg := &topology.ServiceGrid{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo"}}
	for _, tc := range []struct {
		verb    string
		allowed bool
	}{
		{verb: "create", allowed: false},
		{verb: "update", allowed: true},
		{verb: "patch", allowed: true},
	} {
		t.Run(tc.verb, func(t *testing.T) {
			err := checks.authorize(ctx, sg, tc.verb)
			if tc.allowed && err != nil || !tc.allowed && !apierrors.IsForbidden(err) {
				t.Errorf("%s of Service echo-svc under a rule with resourceNames [echo-svc]: %v, want allowed %v", tc.verb, err, tc.allowed)
			}
		})
	}
}

func TestServiceGridInvalidPointsIntoTheTemplate(t *testing.T) {
	serviceErr := apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("Service").GroupKind(), "echo-svc", nil).Status()
	serviceErr.Details.Causes = []metav1.StatusCause{
		{Type: metav1.CauseTypeFieldValueNotSupported, Field: "spec.sessionAffinity", Message: `Unsupported value: "Sticky"`},
		{Type: metav1.CauseTypeFieldValueInvalid, Field: "metadata.labels", Message: "Invalid value: \"x/y\""},
	}
	err := serviceGridInvalid("echo", serviceErr)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want 422 Invalid", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if status.Details.Kind != "ServiceGrid" || status.Details.Group != "topology.gridview.io" || status.Details.Name != "echo" {
		t.Errorf("details = %+v, want the ServiceGrid", status.Details)
	}
	var fields []string
	for _, cause := range status.Details.Causes {
		fields = append(fields, cause.Field)
	}
	if strings.Join(fields, ",") != "spec.template.sessionAffinity,metadata.labels" {
		t.Errorf("fields = %v", fields)
	}
	if !strings.Contains(status.Message, `spec.template.sessionAffinity: Unsupported value: "Sticky"`) {
		t.Errorf("message = %q", status.Message)
	}
}

func TestDryRunVerdicts(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	tests := []struct {
		name     string
		react    func(action clienttesting.Action) (bool, runtime.Object, error)
		wantCode int32
		wantText string
	}{
		{name: "accepted", react: func(clienttesting.Action) (bool, runtime.Object, error) { return false, nil, nil }},
		{
			name: "kube-apiserver unreachable",
			react: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")
			},
			wantCode: http.StatusServiceUnavailable, wantText: "connection refused",
		},
		{
			name: "Service refused",
			react: func(action clienttesting.Action) (bool, runtime.Object, error) {
				if action.GetVerb() != "create" {
					return false, nil, nil
				}
				return true, nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), "x",
					field.ErrorList{field.NotSupported(field.NewPath("spec", "sessionAffinity"), "Sticky", []string{"None", "ClientIP"})})
			},
			wantCode: http.StatusUnprocessableEntity, wantText: "spec.template.sessionAffinity",
		},
		{
			name: "quota exceeded",
			react: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(corev1.Resource("services"), "echo-svc",
					errors.New("exceeded quota: lb, requested: services.loadbalancers=1, used: services.loadbalancers=1, limited: services.loadbalancers=1"))
			},
			wantCode: http.StatusForbidden, wantText: "exceeded quota",
		},
		{
			name: "webhook denial",
			react: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewBadRequest(`admission webhook "policy.example.com" denied the request: type LoadBalancer needs approval`)
			},
			wantCode: http.StatusBadRequest, wantText: "needs approval",
		},
		{
			name: "Service changed meanwhile",
			react: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewConflict(corev1.Resource("services"), "echo-svc", errors.New("the object has been modified"))
			},
			wantCode: http.StatusConflict, wantText: "has been modified",
		},
		{
			name: "kube-apiserver too busy",
			react: func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewTooManyRequests("too many requests", 1)
			},
			wantCode: http.StatusServiceUnavailable, wantText: "too many requests",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewClientset()
			kube.PrependReactor("*", "services", tc.react)
			checks := &ClusterChecks{Scheme: scheme, Kube: kube}
			sg := &v1alpha1.ServiceGrid{
				ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo", UID: "uid-1"},
				Spec: v1alpha1.ServiceGridSpec{GridUniqKey: "nodeunit", Fallback: v1alpha1.FallbackNone,
					Template: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
			}
			err := checks.dryRun(context.Background(), sg, nil)
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			status, ok := err.(apierrors.APIStatus)
			if !ok || status.Status().Code != tc.wantCode || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("err = %v, want code %d containing %q", err, tc.wantCode, tc.wantText)
			}
		})
	}
}

// The rights asked and the dry run follow what the reconciler's write will
// be, which a live read of the Service tells: adopting an orphan changes a
// Service someone else made, so it needs the rights to change it, and the
// orphan so admitted is the one recorded for the controller to adopt, in
// place of any value the user sent.
func TestCheckAsksForTheWriteItWillBe(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	sg := &topology.ServiceGrid{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo", UID: "uid-1"},
		Spec: topology.ServiceGridSpec{GridUniqKey: "nodeunit", Fallback: topology.FallbackNone,
			Template: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
	}
	controllerRef := metav1.OwnerReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ServiceGrid", Name: "echo",
		UID: "uid-1", Controller: ptr.To(true)}
	existing := func(mutate func(*corev1.Service)) []runtime.Object {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo-svc", Namespace: "demo", UID: "svc-1", ResourceVersion: "5"}}
		mutate(svc)
		return []runtime.Object{svc}
	}
	tests := []struct {
		name       string
		services   []runtime.Object
		wantVerbs  string
		wantDryRun string // the verb of the dry run
		wantAdopt  string // the orphan's UID recorded; none if empty
	}{
		{name: "no Service: a create", wantVerbs: "create", wantDryRun: "create"},
		{name: "a Service of someone else: left alone, a create once it goes", wantVerbs: "create", wantDryRun: "create",
			services: existing(func(svc *corev1.Service) { svc.Labels = map[string]string{"owner": "other"} })},
		{name: "its own Service: an apply", wantVerbs: "update,patch", wantDryRun: "patch",
			services: existing(func(svc *corev1.Service) { svc.OwnerReferences = []metav1.OwnerReference{controllerRef} })},
		{name: "a Service of SuperEdge's ServiceGrid: a create, not adoptable when orphaned later", wantVerbs: "create", wantDryRun: "create",
			services: existing(func(svc *corev1.Service) {
				svc.Labels = map[string]string{"superedge.io/grid-selector": "echo"}
				svc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "superedge.io/v1", Kind: "ServiceGrid", Name: "echo",
					UID: "superedge-uid", Controller: ptr.To(true)}}
			})},
		{name: "an orphan it adopts: a takeover", wantVerbs: "update,patch", wantDryRun: "update", wantAdopt: "svc-1",
			services: existing(func(svc *corev1.Service) {
				svc.Labels = map[string]string{"superedge.io/grid-selector": "echo"}
				svc.Spec.ExternalIPs = []string{"203.0.113.7"}
			})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewClientset(tc.services...)
			var verbs []string
			checks := &ClusterChecks{Scheme: scheme, Kube: kube, Authorizer: authorizer.AuthorizerFunc(
				func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
					verbs = append(verbs, a.GetVerb())
					return authorizer.DecisionAllow, "", nil
				})}
			ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"})
			sent := sg.DeepCopy()
			sent.Annotations = map[string]string{"team": "edge", servicegrid.AnnotationAdoptServiceUID: "sent-by-alice"}
			if err := checks.markAdoption(ctx, sent, sg.UID); err != nil {
				t.Fatalf("markAdoption: %v", err)
			}
			if err := checks.check(ctx, sent); err != nil {
				t.Fatalf("check: %v", err)
			}
			if got, ok := sent.Annotations[servicegrid.AnnotationAdoptServiceUID]; got != tc.wantAdopt || ok != (tc.wantAdopt != "") || sent.Annotations["team"] != "edge" {
				t.Errorf("annotations admitted %v, want %s=%q and the user's others", sent.Annotations, servicegrid.AnnotationAdoptServiceUID, tc.wantAdopt)
			}
			if got := strings.Join(verbs, ","); got != tc.wantVerbs {
				t.Errorf("asked for %q, want %q", got, tc.wantVerbs)
			}
			var dryRuns []string
			for _, action := range kube.Actions() {
				if action.GetVerb() != "get" {
					dryRuns = append(dryRuns, action.GetVerb())
				}
			}
			if strings.Join(dryRuns, ",") != tc.wantDryRun {
				t.Errorf("dry runs %v, want %s", dryRuns, tc.wantDryRun)
			}
		})
	}
}

// Adoption is denied to a user who may create Services but not change one.
func TestAdoptionNeedsTheRightToChangeTheOrphan(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	orphan := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo-svc", Namespace: "demo",
		Labels: map[string]string{"superedge.io/grid-selector": "echo"}}}
	checks := &ClusterChecks{Scheme: scheme, Kube: kubefake.NewClientset(orphan), Authorizer: authorizer.AuthorizerFunc(
		func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			if a.GetVerb() == "create" {
				return authorizer.DecisionAllow, "", nil
			}
			return authorizer.DecisionDeny, "", nil
		})}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"})
	err := checks.check(ctx, &topology.ServiceGrid{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo", UID: "uid-1"}})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "you must be allowed to update services") {
		t.Errorf("err = %v, want 403 for update", err)
	}
}

// check authorizes the orphan it reads, which must be the one markAdoption
// recorded a moment before: one replaced, gone or planted in between is a
// conflict, so the record never names an orphan nobody was authorized for.
func TestCheckRefusesAnAdoptionOtherThanTheOneMarked(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	orphan := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo-svc", Namespace: "demo", UID: "svc-2",
		Labels: map[string]string{"superedge.io/grid-selector": "echo"}}}
	tests := []struct {
		name     string
		services []runtime.Object
		recorded string
	}{
		{name: "the orphan marked was replaced", services: []runtime.Object{orphan}, recorded: "svc-1"},
		{name: "an orphan turned up after the mark", services: []runtime.Object{orphan}},
		{name: "the orphan marked is gone", recorded: "svc-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checks := &ClusterChecks{Scheme: scheme, Kube: kubefake.NewClientset(tc.services...), Authorizer: authorizer.AuthorizerFunc(
				func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
					return authorizer.DecisionAllow, "", nil
				})}
			sg := &topology.ServiceGrid{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo", UID: "uid-1"},
				Spec: topology.ServiceGridSpec{GridUniqKey: "nodeunit", Fallback: topology.FallbackNone,
					Template: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}}
			if tc.recorded != "" {
				sg.Annotations = map[string]string{servicegrid.AnnotationAdoptServiceUID: tc.recorded}
			}
			err := checks.check(genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"}), sg)
			if !apierrors.IsConflict(err) {
				t.Errorf("err = %v, want 409 Conflict", err)
			}
		})
	}
}

// The garbage collector finishes a foreground or orphan deletion by removing
// the ServiceGrid's finalizers with an update, holding no right to create
// Services: whatever became of the Service by then, the update passes and
// adopts nothing.
func TestUpdatesOfAServiceGridBeingDeletedPass(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo-svc", Namespace: "demo", UID: "svc-1",
		Labels: map[string]string{"owner": "other"}}}
	orphan := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo-svc", Namespace: "demo", UID: "svc-2",
		Labels: map[string]string{"superedge.io/grid-selector": "echo"}}}
	tests := []struct {
		name      string
		services  []runtime.Object
		finalizer string
	}{
		{name: "foreground, the Service gone", finalizer: metav1.FinalizerDeleteDependents},
		{name: "orphan, the Service gone", finalizer: metav1.FinalizerOrphanDependents},
		{name: "foreground, a foreign Service", services: []runtime.Object{foreign}, finalizer: metav1.FinalizerDeleteDependents},
		{name: "orphan, a foreign Service", services: []runtime.Object{foreign}, finalizer: metav1.FinalizerOrphanDependents},
		{name: "orphan, the Service orphaned", services: []runtime.Object{orphan}, finalizer: metav1.FinalizerOrphanDependents},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checks := &ClusterChecks{Scheme: scheme, Kube: kubefake.NewClientset(tc.services...), Authorizer: authorizer.AuthorizerFunc(
				func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
					if a.GetVerb() == "create" {
						return authorizer.DecisionDeny, "", nil
					}
					return authorizer.DecisionAllow, "", nil
				})}
			old := &topology.ServiceGrid{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "demo", UID: "uid-1",
				DeletionTimestamp: ptr.To(metav1.Now()), Finalizers: []string{tc.finalizer},
				Annotations: map[string]string{servicegrid.AnnotationAdoptServiceUID: "svc-0"}},
				Spec: topology.ServiceGridSpec{GridUniqKey: "nodeunit", Fallback: topology.FallbackNone,
					Template: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}}
			withoutFinalizer := old.DeepCopy()
			withoutFinalizer.Finalizers = nil
			ctx := genericapirequest.WithUser(context.Background(),
				&user.DefaultInfo{Name: "system:serviceaccount:kube-system:generic-garbage-collector"})

			updated, err := markedUpdate{UpdatedObjectInfo: rest.DefaultUpdatedObjectInfo(withoutFinalizer), checks: checks}.UpdatedObject(ctx, old)
			if err != nil {
				t.Fatalf("UpdatedObject: %v", err)
			}
			if mark, ok := updated.(*topology.ServiceGrid).Annotations[servicegrid.AnnotationAdoptServiceUID]; ok {
				t.Errorf("a ServiceGrid being deleted kept the adoption mark %q", mark)
			}
			if err := checks.wrapUpdate(nil)(ctx, updated, old); err != nil {
				t.Errorf("removing the %s finalizer: %v, want it admitted", tc.finalizer, err)
			}
		})
	}
}
