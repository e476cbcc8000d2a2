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

package kubectlgridview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// handOver makes gridview's ServiceGrid gv the controller of svc through
// gridview's own adoption: SuperEdge's controller reference goes, and a write
// of gv that gridview-apiserver admits against the orphan (checking that the
// user may update and patch it) has the controller adopt it. The Service is
// updated in place, never recreated, so its uid, clusterIP and endpoints stay.
func (mg *migrator) handOver(ctx context.Context, grid *superedgeGrid, svc *corev1.Service, gv *v1alpha1.ServiceGrid, p *printer) error {
	name := grid.namespace + "/" + grid.name + serviceSuffix
	switch {
	case svc == nil && !mg.apply:
		p.line("Service %s does not exist: gridview would create it", name)
		return nil
	case svc == nil:
		if _, err := mg.waitAdopted(ctx, grid, gv); err != nil {
			return err
		}
		p.line("Service %s created by gridview", name)
		return nil
	case gv != nil && metav1.IsControlledBy(svc, gv):
		p.line("Service %s is gridview's already (uid %s, clusterIP %s)", name, svc.UID, svc.Spec.ClusterIP)
		return nil
	case !mg.apply:
		p.line("would hand Service %s (uid %s, clusterIP %s) over to gridview's ServiceGrid", name, svc.UID, svc.Spec.ClusterIP)
		return nil
	}
	if metav1.GetControllerOf(svc) != nil {
		if err := mg.orphan(ctx, grid, svc); err != nil {
			return err
		}
	}
	if err := mg.rewrite(ctx, gv); err != nil {
		return err
	}
	adopted, err := mg.waitAdopted(ctx, grid, gv)
	if err != nil {
		return err
	}
	if adopted.UID != svc.UID || adopted.Spec.ClusterIP != svc.Spec.ClusterIP {
		return fmt.Errorf("Service %s was replaced during the handover: uid %s, clusterIP %s, were %s and %s",
			name, adopted.UID, adopted.Spec.ClusterIP, svc.UID, svc.Spec.ClusterIP)
	}
	p.line("handed Service %s over to gridview's ServiceGrid (uid %s, clusterIP %s kept)", name, adopted.UID, adopted.Spec.ClusterIP)
	return nil
}

// orphan removes SuperEdge's owner reference from svc, and makes sure it
// carries the label gridview adopts by. The resourceVersion makes the patch
// conditional: a Service changed since it was checked is not touched.
func (mg *migrator) orphan(ctx context.Context, grid *superedgeGrid, svc *corev1.Service) error {
	kept := slices.DeleteFunc(slices.Clone(svc.OwnerReferences), func(ref metav1.OwnerReference) bool {
		return ownedBySuperEdge(ref, grid)
	})
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": svc.ResourceVersion,
		"ownerReferences": kept,
		"labels":          map[string]string{labelGridSelector: grid.name},
	}})
	if err != nil {
		return err
	}
	_, err = mg.core.Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("Service %s/%s changed since it was read; run again: %w", svc.Namespace, svc.Name, err)
	}
	if err != nil {
		return fmt.Errorf("removing SuperEdge's owner reference from Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return nil
}

// rewrite writes gridview's ServiceGrid unchanged, so that gridview-apiserver
// admits a write against the orphan and records it for the controller.
func (mg *migrator) rewrite(ctx context.Context, gv *v1alpha1.ServiceGrid) error {
	grids := mg.gridview.TopologyV1alpha1().ServiceGrids(gv.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := grids.Get(ctx, gv.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if current.UID != gv.UID {
			return fmt.Errorf("the %s was replaced meanwhile (uid %s, was %s)", gridviewKind, current.UID, gv.UID)
		}
		_, err = grids.Update(ctx, current, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		return refuse("gridview-apiserver refused the adoption: %v", err)
	}
	if err != nil {
		return fmt.Errorf("writing the %s for the adoption: %w", gridviewKind, err)
	}
	return nil
}

// errTakenBack: SuperEdge's controller still runs and took its Service back.
var errTakenBack = errors.New("SuperEdge's application-grid-controller took the Service back: stop it, then run again")

// waitAdopted waits until gv controls its Service and is Ready for its
// generation, and returns that Service.
func (mg *migrator) waitAdopted(ctx context.Context, grid *superedgeGrid, gv *v1alpha1.ServiceGrid) (*corev1.Service, error) {
	var svc *corev1.Service
	var last *v1alpha1.ServiceGrid
	err := wait.PollUntilContextTimeout(ctx, mg.poll, mg.timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if last, err = mg.gridview.TopologyV1alpha1().ServiceGrids(gv.Namespace).Get(ctx, gv.Name, metav1.GetOptions{}); err != nil {
			return false, err
		}
		svc, err = mg.core.Services(gv.Namespace).Get(ctx, gv.Name+serviceSuffix, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, err
		}
		if ref := metav1.GetControllerOf(svc); ref != nil && ownedBySuperEdge(*ref, grid) {
			return false, errTakenBack
		}
		ready := meta.FindStatusCondition(last.Status.Conditions, v1alpha1.ServiceGridConditionReady)
		return metav1.IsControlledBy(svc, last) && ready != nil && ready.Status == metav1.ConditionTrue &&
			ready.ObservedGeneration == last.Generation, nil
	})
	if wait.Interrupted(err) && last != nil {
		state := "no Ready condition"
		if ready := meta.FindStatusCondition(last.Status.Conditions, v1alpha1.ServiceGridConditionReady); ready != nil {
			state = fmt.Sprintf("Ready=%s, %s: %s", ready.Status, ready.Reason, ready.Message)
		}
		return nil, fmt.Errorf("gridview did not adopt Service %s/%s within %s (%s); run again to resume", gv.Namespace, gv.Name+serviceSuffix, mg.timeout, state)
	}
	if err != nil {
		return nil, fmt.Errorf("waiting for gridview to adopt Service %s/%s: %w", gv.Namespace, gv.Name+serviceSuffix, err)
	}
	return svc, nil
}
