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
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/controller/servicegrid"
)

// clusterCheckTimeout bounds the round trips to kube-apiserver an admission makes.
const clusterCheckTimeout = 10 * time.Second

// ClusterChecks admits a ServiceGrid only when the Service it produces is one
// kube-apiserver accepts and one the requesting user may write: gridview
// writes it with its own rights, which must not lend the user any.
type ClusterChecks struct {
	Scheme     *runtime.Scheme
	Kube       kubernetes.Interface
	Authorizer authorizer.Authorizer
}

func (c *ClusterChecks) wrapCreate(next rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj); err != nil {
				return err
			}
		}
		return c.check(ctx, obj.(*topology.ServiceGrid))
	}
}

func (c *ClusterChecks) wrapUpdate(next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	return func(ctx context.Context, obj, old runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj, old); err != nil {
				return err
			}
		}
		if beingDeleted(old) {
			return nil
		}
		return c.check(ctx, obj.(*topology.ServiceGrid))
	}
}

// beingDeleted tells an update of a ServiceGrid whose deletion has begun. The
// reconciler never writes its Service again, so such an update lends no rights
// and needs no check; and it must pass, because the garbage collector removes
// the orphan and foreground finalizers with one, holding no right to create
// Services: checking would keep the ServiceGrid, and its namespace, forever.
func beingDeleted(old runtime.Object) bool {
	sg, ok := old.(*topology.ServiceGrid)
	return ok && sg.DeletionTimestamp != nil
}

// check asks, for the Service the reconciler would write, the rights of the
// write it would be and kube-apiserver's verdict on the result. A live read
// tells the write: none there yet, or one that belongs to someone else (the
// reconciler then reports the conflict, and creates it once it is gone), is a
// create; one gridview controls or adopts is an update by apply (a patch), so
// adopting someone's orphan needs the rights to change it, not to create one.
// The orphan so authorized must be the one markAdoption recorded, the only
// one the reconciler will adopt.
func (c *ClusterChecks) check(ctx context.Context, sg *topology.ServiceGrid) error {
	ctx, cancel := context.WithTimeout(ctx, clusterCheckTimeout)
	defer cancel()
	versioned := &v1alpha1.ServiceGrid{}
	if err := c.Scheme.Convert(sg, versioned, nil); err != nil {
		return apierrors.NewInternalError(err)
	}
	existing, err := c.manageableService(ctx, versioned)
	if err != nil {
		return err
	}
	verbs := []string{"create"}
	if existing != nil {
		verbs = []string{"update", "patch"}
	}
	for _, verb := range verbs {
		if err := c.authorize(ctx, sg, verb); err != nil {
			return err
		}
	}
	if recorded, authorized := sg.Annotations[servicegrid.AnnotationAdoptServiceUID], orphanUID(existing, versioned); recorded != authorized {
		return apierrors.NewConflict(topology.Resource("servicegrids"), sg.Name,
			fmt.Errorf("Service %s/%s changed while this write was admitted, please try again", sg.Namespace, servicegrid.ServiceName(sg.Name)))
	}
	return c.dryRun(ctx, versioned, existing)
}

// markAdoption records on sg, before validation copies it for check, the UID
// of the orphan its Service would adopt, and removes any value the user sent:
// a write admitted while there was no Service, or a foreign one, authorizes
// no adoption of an orphan that turns up later. uid is sg's own, which an
// update may leave unset.
func (c *ClusterChecks) markAdoption(ctx context.Context, sg *topology.ServiceGrid, uid types.UID) error {
	ctx, cancel := context.WithTimeout(ctx, clusterCheckTimeout)
	defer cancel()
	versioned := &v1alpha1.ServiceGrid{}
	if err := c.Scheme.Convert(sg, versioned, nil); err != nil {
		return apierrors.NewInternalError(err)
	}
	versioned.UID = uid
	existing, err := c.manageableService(ctx, versioned)
	if err != nil {
		return err
	}
	orphan := orphanUID(existing, versioned)
	if orphan == "" {
		delete(sg.Annotations, servicegrid.AnnotationAdoptServiceUID)
		return nil
	}
	if sg.Annotations == nil {
		sg.Annotations = map[string]string{}
	}
	sg.Annotations[servicegrid.AnnotationAdoptServiceUID] = orphan
	return nil
}

// manageableService reads the Service of sg live, and returns it if gridview
// may manage it: it controls it or may adopt it.
func (c *ClusterChecks) manageableService(ctx context.Context, sg *v1alpha1.ServiceGrid) (*corev1.Service, error) {
	name := servicegrid.ServiceName(sg.Name)
	existing, err := c.Kube.CoreV1().Services(sg.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cannot read Service %s/%s of this ServiceGrid: %v", sg.Namespace, name, err))
	case !servicegrid.MayManage(existing, sg):
		return nil, nil
	}
	return existing, nil
}

// orphanUID is the UID of existing if sg would adopt it, and empty otherwise.
func orphanUID(existing *corev1.Service, sg *v1alpha1.ServiceGrid) string {
	if existing == nil || metav1.IsControlledBy(existing, sg) {
		return ""
	}
	return string(existing.UID)
}

// authorize requires that the requesting user may itself write the Service.
func (c *ClusterChecks) authorize(ctx context.Context, sg *topology.ServiceGrid, verb string) error {
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("no user in the request of ServiceGrid %s/%s", sg.Namespace, sg.Name))
	}
	attributes := authorizer.AttributesRecord{
		User: user, Verb: verb, Namespace: sg.Namespace, APIVersion: "v1", Resource: "services", ResourceRequest: true,
	}
	// kube-apiserver names no object when it authorizes a create, so an RBAC
	// rule limited by resourceNames never grants one: asked with the name,
	// such a rule would lend through a ServiceGrid a create it does not grant.
	if verb != "create" {
		attributes.Name = servicegrid.ServiceName(sg.Name)
	}
	decision, reason, err := c.Authorizer.Authorize(ctx, attributes)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	if err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("cannot check whether %q may %s services: %v", user.GetName(), verb, err))
	}
	msg := fmt.Sprintf("a ServiceGrid makes gridview %s Service %s for you, so you must be allowed to %s services in namespace %q yourself",
		verb, servicegrid.ServiceName(sg.Name), verb, sg.Namespace)
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(topology.Resource("servicegrids"), sg.Name, fmt.Errorf("%s", msg))
}

// dryRun asks kube-apiserver to validate the Service as the reconciler
// would write it: applied over the Service gridview controls, taken over
// from the orphan it adopts, or created afresh, so every rule of Services
// applies here.
func (c *ClusterChecks) dryRun(ctx context.Context, sg *v1alpha1.ServiceGrid, existing *corev1.Service) error {
	services := c.Kube.CoreV1().Services(sg.Namespace)
	dryRun := []string{metav1.DryRunAll}
	var err error
	switch {
	case existing != nil && metav1.IsControlledBy(existing, sg):
		var desired *corev1apply.ServiceApplyConfiguration
		if desired, err = servicegrid.DesiredService(sg); err != nil {
			return apierrors.NewInternalError(err)
		}
		_, err = services.Apply(ctx, desired, metav1.ApplyOptions{FieldManager: servicegrid.FieldManager, Force: true, DryRun: dryRun})
	case existing != nil:
		var takeover *corev1.Service
		if takeover, err = servicegrid.Takeover(existing, sg); err != nil {
			return apierrors.NewInternalError(err)
		}
		_, err = services.Update(ctx, takeover, metav1.UpdateOptions{FieldManager: servicegrid.FieldManager, DryRun: dryRun})
	default:
		// Under a generated name, so that no existing object stands in the way.
		var svc *corev1.Service
		if svc, err = servicegrid.DesiredServiceObject(sg); err != nil {
			return apierrors.NewInternalError(err)
		}
		svc.Name, svc.GenerateName = "", "gridview-dry-run-"
		_, err = services.Create(ctx, svc, metav1.CreateOptions{DryRun: dryRun})
	}
	switch {
	case err == nil:
		return nil
	case apierrors.IsInvalid(err):
		return serviceGridInvalid(sg.Name, err.(apierrors.APIStatus).Status())
	case apierrors.IsForbidden(err), apierrors.IsBadRequest(err), apierrors.IsConflict(err):
		return serviceGridRefused(sg, err.(apierrors.APIStatus).Status())
	default:
		return apierrors.NewServiceUnavailable(fmt.Sprintf("cannot validate Service %s/%s of this ServiceGrid against kube-apiserver: %v",
			sg.Namespace, servicegrid.ServiceName(sg.Name), err))
	}
}

// serviceGridRefused restates kube-apiserver's refusal of the Service for a
// reason other than its shape (a quota, an admission policy or webhook, a
// Service changed meanwhile) as a refusal of the ServiceGrid, with the same
// code: a 503 would tell clients to retry what will be refused again.
func serviceGridRefused(sg *v1alpha1.ServiceGrid, serviceStatus metav1.Status) error {
	qualified := topology.Kind("ServiceGrid")
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    serviceStatus.Code,
		Reason:  serviceStatus.Reason,
		Details: &metav1.StatusDetails{Group: qualified.Group, Kind: qualified.Kind, Name: sg.Name},
		Message: fmt.Sprintf("%s %q: kube-apiserver refuses Service %s/%s as this ServiceGrid makes it: %s",
			qualified.String(), sg.Name, sg.Namespace, servicegrid.ServiceName(sg.Name), serviceStatus.Message),
	}}
}

// serviceGridInvalid restates kube-apiserver's verdict on the Service as a
// verdict on the ServiceGrid: the Service's spec is the template.
func serviceGridInvalid(name string, serviceStatus metav1.Status) error {
	var causes []metav1.StatusCause
	var messages []string
	if serviceStatus.Details != nil {
		for _, cause := range serviceStatus.Details.Causes {
			if rest, ok := strings.CutPrefix(cause.Field, "spec."); ok {
				cause.Field = "spec.template." + rest
			}
			causes = append(causes, cause)
			messages = append(messages, cause.Field+": "+cause.Message)
		}
	}
	if len(messages) == 0 {
		messages = append(messages, serviceStatus.Message)
	}
	qualified := topology.Kind("ServiceGrid")
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnprocessableEntity,
		Reason:  metav1.StatusReasonInvalid,
		Details: &metav1.StatusDetails{Group: qualified.Group, Kind: qualified.Kind, Name: name, Causes: causes},
		Message: fmt.Sprintf("%s %q is invalid: the Service it produces is refused by kube-apiserver: %s",
			qualified.String(), name, strings.Join(messages, ", ")),
	}}
}
