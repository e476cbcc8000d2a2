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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// Reasons of the Ready condition and of the Events on a ServiceGrid.
const (
	ReasonServiceSynced   = "ServiceSynced"
	ReasonServiceConflict = "ServiceConflict"
	ReasonInvalidTemplate = "InvalidTemplate"
	ReasonApplyFailed     = "ApplyFailed"
	ReasonServiceCreated  = "ServiceCreated"
	ReasonServiceUpdated  = "ServiceUpdated"
)

func (c *Controller) sync(ctx context.Context, key cache.ObjectName) error {
	// A live read, not the informer's cache: the storage enqueues writes before
	// the informer sees them, and a stale copy would resurrect the Service of
	// a ServiceGrid just deleted, or apply a spec just replaced.
	sg, err := c.gridview.TopologyV1alpha1().ServiceGrids(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return c.deleteServices(ctx, key, func(*corev1.Service) bool { return true })
	}
	if err != nil {
		return err
	}
	if sg.DeletionTimestamp != nil {
		// Being deleted (a foreground deletion waits for its Service): never
		// recreate the Service, remove it.
		return c.deleteServices(ctx, key, func(svc *corev1.Service) bool { return metav1.IsControlledBy(svc, sg) })
	}
	return c.reconcile(ctx, sg)
}

// reconcile applies the desired Service and records the outcome in the
// status.
func (c *Controller) reconcile(ctx context.Context, sg *v1alpha1.ServiceGrid) error {
	name := ServiceName(sg.Name)
	// Live as well: a cache that has not seen a foreign Service yet must not
	// let gridview apply over it.
	existing, err := c.kube.CoreV1().Services(sg.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return err
	case !MayManage(existing, sg):
		msg := fmt.Sprintf("Service %s/%s exists and does not belong to this ServiceGrid; gridview leaves it untouched", sg.Namespace, name)
		c.recorder.Event(sg, corev1.EventTypeWarning, ReasonServiceConflict, msg)
		return c.updateStatus(ctx, sg, "", nil, metav1.ConditionFalse, ReasonServiceConflict, msg)
	}

	desired, err := DesiredService(sg)
	if err != nil {
		return err
	}
	applied, err := c.kube.CoreV1().Services(sg.Namespace).Apply(ctx, desired, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if apierrors.IsInvalid(err) {
		// Retrying cannot help: the next change of the ServiceGrid will.
		msg := fmt.Sprintf("kube-apiserver refused Service %s/%s: %v", sg.Namespace, name, err)
		c.recorder.Event(sg, corev1.EventTypeWarning, ReasonInvalidTemplate, msg)
		return c.updateStatus(ctx, sg, "", nil, metav1.ConditionFalse, ReasonInvalidTemplate, msg)
	}
	if err != nil {
		msg := fmt.Sprintf("applying Service %s/%s: %v", sg.Namespace, name, err)
		c.recorder.Event(sg, corev1.EventTypeWarning, ReasonApplyFailed, msg)
		return errors.Join(err, c.updateStatus(ctx, sg, "", nil, metav1.ConditionFalse, ReasonApplyFailed, msg))
	}
	switch {
	case existing == nil:
		c.recorder.Eventf(sg, corev1.EventTypeNormal, ReasonServiceCreated, "Created Service %s", name)
	case existing.ResourceVersion != applied.ResourceVersion:
		c.recorder.Eventf(sg, corev1.EventTypeNormal, ReasonServiceUpdated, "Updated Service %s", name)
	}

	// SuperEdge behaviour: Services this ServiceGrid controls under another name go.
	if err := c.deleteServices(ctx, cache.ObjectName{Namespace: sg.Namespace, Name: sg.Name}, func(svc *corev1.Service) bool {
		return svc.Name != name && metav1.IsControlledBy(svc, sg)
	}); err != nil {
		return err
	}
	return c.updateStatus(ctx, sg, name, &applied.Status.LoadBalancer, metav1.ConditionTrue, ReasonServiceSynced,
		fmt.Sprintf("Service %s matches generation %d", name, sg.Generation))
}

// MayManage says whether gridview may apply to svc for sg: it controls it, or
// it is an orphan that carries sg's grid-selector label (adoption).
func MayManage(svc *corev1.Service, sg *v1alpha1.ServiceGrid) bool {
	if metav1.IsControlledBy(svc, sg) {
		return true
	}
	return metav1.GetControllerOf(svc) == nil && svc.Labels[LabelGridSelector] == sg.Name
}

// deleteServices deletes the Services of the namespace that a ServiceGrid of
// that name controls and that match, without waiting for the garbage collector.
func (c *Controller) deleteServices(ctx context.Context, grid cache.ObjectName, match func(*corev1.Service) bool) error {
	services, err := c.services.Services(grid.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, svc := range services {
		if owner, ok := controllingServiceGrid(svc); !ok || owner != grid.Name || !match(svc) {
			continue
		}
		err := c.kube.CoreV1().Services(svc.Namespace).Delete(ctx, svc.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &svc.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting Service %s/%s of ServiceGrid %s: %w", svc.Namespace, svc.Name, grid.Name, err)
		}
		klog.FromContext(ctx).Info("Deleted Service", "service", klog.KObj(svc), "serviceGrid", grid.String())
	}
	return nil
}

// updateStatus writes the status when it changed.
func (c *Controller) updateStatus(ctx context.Context, sg *v1alpha1.ServiceGrid, serviceName string, lb *corev1.LoadBalancerStatus,
	ready metav1.ConditionStatus, reason, message string) error {
	status := sg.Status.DeepCopy()
	status.ServiceName = serviceName
	status.ObservedGeneration = sg.Generation
	status.LoadBalancer = corev1.LoadBalancerStatus{}
	if lb != nil {
		status.LoadBalancer = *lb
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: v1alpha1.ServiceGridConditionReady, Status: ready, Reason: reason, Message: message, ObservedGeneration: sg.Generation,
	})
	if apiequality.Semantic.DeepEqual(*status, sg.Status) {
		return nil
	}
	updated := sg.DeepCopy()
	updated.Status = *status
	_, err := c.gridview.TopologyV1alpha1().ServiceGrids(sg.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: FieldManager})
	return err
}
