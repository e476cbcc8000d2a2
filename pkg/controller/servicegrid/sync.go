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
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	topologyapi "github.com/gridview/gridview/apis/topology"
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
	ReasonServiceAdopted  = "ServiceAdopted"
	// ReasonAdoptionNotAuthorized: an orphan carries the ServiceGrid's label,
	// but no write of the ServiceGrid was admitted against it.
	ReasonAdoptionNotAuthorized = "AdoptionNotAuthorized"
)

func (c *Controller) sync(ctx context.Context, key cache.ObjectName) error {
	// A live read, not the informer's cache: the storage enqueues writes before
	// the informer sees them, and a stale copy would resurrect the Service of
	// a ServiceGrid just deleted, or apply a spec just replaced.
	sg, err := c.gridview.TopologyV1alpha1().ServiceGrids(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		sg = nil
	case err != nil:
		return err
	}
	if err := c.deleteServicesOfDeleted(ctx, key, sg); err != nil {
		return err
	}
	switch {
	case sg == nil:
		return nil
	case sg.DeletionTimestamp != nil && slices.Contains(sg.Finalizers, metav1.FinalizerOrphanDependents):
		// Deleted with propagationPolicy=Orphan: the garbage collector is
		// taking the controller reference off the Service, which the user
		// asked to keep; neither deleting nor applying may race it.
		return nil
	case sg.DeletionTimestamp != nil:
		// Being deleted (a foreground deletion waits for its Service): never
		// recreate the Service, remove it.
		live, err := c.liveServices(ctx, key.Namespace)
		if err != nil {
			return err
		}
		return c.deleteServices(ctx, key, sg.UID, live, func(*corev1.Service) bool { return true })
	}
	return c.reconcile(ctx, sg)
}

// deleteServicesOfDeleted deletes the Services of the ServiceGrids of this
// name whose deletion the informer has seen, and keeps, logging them, those
// of a ServiceGrid that is merely missing: a gridview-apiserver started on an
// emptied store misses every ServiceGrid, and their Services carry traffic.
func (c *Controller) deleteServicesOfDeleted(ctx context.Context, key cache.ObjectName, live *v1alpha1.ServiceGrid) error {
	gone := c.deleted.get(key)
	if len(gone) > 0 {
		// Live, not from the cache: the deletion may arrive before the
		// informer has seen the Service gridview applied just before it, and
		// the UID is forgotten once this succeeds.
		live, err := c.liveServices(ctx, key.Namespace)
		if err != nil {
			return err
		}
		for _, uid := range gone {
			if err := c.deleteServices(ctx, key, uid, live, func(*corev1.Service) bool { return true }); err != nil {
				return err
			}
		}
		c.deleted.forget(key, gone)
	}
	services, err := c.services.Services(key.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, svc := range services {
		ref := metav1.GetControllerOf(svc)
		if owner, ok := topologyapi.ControllingServiceGrid(svc); !ok || owner != key.Name || (live != nil && ref.UID == live.UID) || slices.Contains(gone, ref.UID) {
			continue
		}
		klog.FromContext(ctx).Info("Keeping a Service whose ServiceGrid is missing but was not seen deleted",
			"service", klog.KObj(svc), "serviceGrid", key.String(), "serviceGridUID", ref.UID)
	}
	return nil
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
	case !metav1.IsControlledBy(existing, sg) && !adoptionAdmitted(existing, sg):
		// The orphan may have appeared after admission asked only to create a
		// Service, or may have replaced the one admitted: nobody allowed to
		// change it has asked gridview to.
		msg := fmt.Sprintf("Service %s/%s is an orphan carrying this ServiceGrid's label, but no write of the ServiceGrid was admitted against it; "+
			"to have gridview adopt it, update the ServiceGrid (an annotation will do) as a user who may update and patch that Service", sg.Namespace, name)
		c.recorder.Event(sg, corev1.EventTypeWarning, ReasonAdoptionNotAuthorized, msg)
		return c.updateStatus(ctx, sg, "", nil, metav1.ConditionFalse, ReasonAdoptionNotAuthorized, msg)
	case !metav1.IsControlledBy(existing, sg):
		takeover, err := Takeover(existing, sg)
		if err != nil {
			return err
		}
		if _, err := c.kube.CoreV1().Services(sg.Namespace).Update(ctx, takeover, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
			return c.writeFailed(ctx, sg, "adopting", err)
		}
		c.recorder.Eventf(sg, corev1.EventTypeNormal, ReasonServiceAdopted,
			"Adopted Service %s: it now holds only this ServiceGrid's template and marks", name)
	}

	desired, err := DesiredService(sg)
	if err != nil {
		return err
	}
	applied, err := c.kube.CoreV1().Services(sg.Namespace).Apply(ctx, desired, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return c.writeFailed(ctx, sg, "applying", err)
	}
	switch {
	case existing == nil:
		c.recorder.Eventf(sg, corev1.EventTypeNormal, ReasonServiceCreated, "Created Service %s", name)
	case metav1.IsControlledBy(existing, sg) && existing.ResourceVersion != applied.ResourceVersion:
		c.recorder.Eventf(sg, corev1.EventTypeNormal, ReasonServiceUpdated, "Updated Service %s", name)
	}
	if err := c.settleTakeover(ctx, applied); err != nil {
		return err
	}

	// SuperEdge behaviour: Services this ServiceGrid controls under another
	// name go. The cache suffices: a Service it has not seen yet brings the
	// ServiceGrid back to the queue when it arrives.
	cached, err := c.services.Services(sg.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	if err := c.deleteServices(ctx, cache.ObjectName{Namespace: sg.Namespace, Name: sg.Name}, sg.UID, cached, func(svc *corev1.Service) bool {
		return svc.Name != name
	}); err != nil {
		return err
	}
	return c.updateStatus(ctx, sg, name, &applied.Status.LoadBalancer, metav1.ConditionTrue, ReasonServiceSynced,
		fmt.Sprintf("Service %s matches generation %d", name, sg.Generation))
}

// writeFailed reports a refused write of the Service in the status; only
// errors a retry can cure are returned.
func (c *Controller) writeFailed(ctx context.Context, sg *v1alpha1.ServiceGrid, doing string, err error) error {
	name := ServiceName(sg.Name)
	if apierrors.IsInvalid(err) {
		// Retrying cannot help: the next change of the ServiceGrid will.
		msg := fmt.Sprintf("kube-apiserver refused Service %s/%s: %v", sg.Namespace, name, err)
		c.recorder.Event(sg, corev1.EventTypeWarning, ReasonInvalidTemplate, msg)
		return c.updateStatus(ctx, sg, "", nil, metav1.ConditionFalse, ReasonInvalidTemplate, msg)
	}
	msg := fmt.Sprintf("%s Service %s/%s: %v", doing, sg.Namespace, name, err)
	c.recorder.Event(sg, corev1.EventTypeWarning, ReasonApplyFailed, msg)
	return errors.Join(err, c.updateStatus(ctx, sg, "", nil, metav1.ConditionFalse, ReasonApplyFailed, msg))
}

// beforeFirstApply is the manager kube-apiserver makes the owner of every
// field of an object without managedFields when it is first applied to.
const beforeFirstApply = "before-first-apply"

// settleTakeover ends an adoption. The takeover reset managedFields, so
// kube-apiserver made gridview's first apply share every field with
// before-first-apply, which would keep a field the template drops later.
// Such an entry, or an Update entry of gridview's (it writes Services only by
// apply), can only come from a takeover, also one a crash interrupted; it
// goes, and gridview's apply owns the fields alone.
func (c *Controller) settleTakeover(ctx context.Context, svc *corev1.Service) error {
	kept := slices.DeleteFunc(slices.Clone(svc.ManagedFields), func(entry metav1.ManagedFieldsEntry) bool {
		return entry.Manager == beforeFirstApply ||
			(entry.Manager == FieldManager && entry.Operation == metav1.ManagedFieldsOperationUpdate)
	})
	if len(kept) == len(svc.ManagedFields) {
		return nil
	}
	// The resourceVersion makes it conditional: the patch replaces the list.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": svc.ResourceVersion, "managedFields": kept}})
	if err != nil {
		return err
	}
	if _, err := c.kube.CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("settling the adoption of Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return nil
}

// MayManage says whether gridview may apply to svc for sg: it controls it, or
// it is an orphan that carries sg's grid-selector label (adoption).
func MayManage(svc *corev1.Service, sg *v1alpha1.ServiceGrid) bool {
	if metav1.IsControlledBy(svc, sg) {
		return true
	}
	return metav1.GetControllerOf(svc) == nil && svc.Labels[LabelGridSelector] == sg.Name
}

// liveServices lists the Services of the namespace from kube-apiserver. A
// deletion is rare, and a Service the cache has not seen yet would outlive it.
func (c *Controller) liveServices(ctx context.Context, namespace string) ([]*corev1.Service, error) {
	list, err := c.kube.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the Services of namespace %s: %w", namespace, err)
	}
	services := make([]*corev1.Service, 0, len(list.Items))
	for i := range list.Items {
		services = append(services, &list.Items[i])
	}
	return services, nil
}

// adoptionAdmitted says whether admission recorded orphan's UID on sg: a
// user allowed to update and patch that very Service wrote the ServiceGrid.
func adoptionAdmitted(orphan *corev1.Service, sg *v1alpha1.ServiceGrid) bool {
	uid := sg.Annotations[AnnotationAdoptServiceUID]
	return uid != "" && uid == string(orphan.UID)
}

// deleteServices deletes those of services that the ServiceGrid with that
// name and UID controls and that match, without waiting for the garbage
// collector. Each delete is conditional on the Service's UID and
// resourceVersion, so that it never hits a Service that another ServiceGrid
// of the same name created or adopted since it was listed.
func (c *Controller) deleteServices(ctx context.Context, grid cache.ObjectName, uid types.UID, services []*corev1.Service, match func(*corev1.Service) bool) error {
	for _, svc := range services {
		if owner, ok := topologyapi.ControllingServiceGrid(svc); !ok || owner != grid.Name || metav1.GetControllerOf(svc).UID != uid || !match(svc) {
			continue
		}
		err := c.kube.CoreV1().Services(svc.Namespace).Delete(ctx, svc.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &svc.UID, ResourceVersion: &svc.ResourceVersion},
		})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			// A conflict too: the Service changed, and the next listing decides.
			return fmt.Errorf("deleting Service %s/%s of ServiceGrid %s (uid %s): %w", svc.Namespace, svc.Name, grid.Name, uid, err)
		}
		klog.FromContext(ctx).Info("Deleted Service", "service", klog.KObj(svc), "serviceGrid", grid.String(), "serviceGridUID", uid)
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
