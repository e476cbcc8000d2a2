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
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/controller/servicegrid"
)

// handOver makes gridview's ServiceGrid gv the controller of svc through
// gridview's own adoption: SuperEdge's controller reference goes, and a write
// of gv that gridview-apiserver admits against the orphan (checking that the
// user may update and patch it) has the controller adopt it. The Service is
// updated in place, never recreated, so its uid, clusterIP and endpoints stay.
// adoptionAdmissible has asked whether that write will be admitted; should it
// fail all the same, restore undoes the orphan step.
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
	var orphaned *corev1.Service
	if metav1.GetControllerOf(svc) != nil {
		var err error
		if orphaned, err = mg.orphan(ctx, grid, svc); err != nil {
			return err
		}
		p.line("orphaned Service %s for gridview to adopt it: SuperEdge's controller reference removed, label %s=%s set", name, labelGridSelector, grid.name)
	}
	if err := mg.rewrite(ctx, gv); err != nil {
		if orphaned == nil {
			return err
		}
		return mg.restore(ctx, grid, svc, orphaned, err, p)
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

// adoptionAdmissible asks, before anything changes, whether gridview-apiserver
// will admit the adoption of svc. handOver's rewrite asks for it only once the
// Service is an orphan, and refused there it would leave the Service without
// a controller. gridview-apiserver admits it when the user may update the
// ServiceGrid and update and patch the Service (patch is the orphan step's
// too), and when kube-apiserver accepts the Service as gridview takes it over:
// self subject access reviews and a server-side dry run of that update ask
// the same, and change nothing.
func (mg *migrator) adoptionAdmissible(ctx context.Context, grid *superedgeGrid, svc *corev1.Service, gv *v1alpha1.ServiceGrid) error {
	name := svc.Namespace + "/" + svc.Name
	for _, attributes := range []authorizationv1.ResourceAttributes{
		{Namespace: grid.namespace, Verb: "update", Group: v1alpha1.GroupName, Resource: "servicegrids", Name: grid.name},
		{Namespace: grid.namespace, Verb: "update", Resource: "services", Name: svc.Name},
		{Namespace: grid.namespace, Verb: "patch", Resource: "services", Name: svc.Name},
	} {
		resource := schema.GroupResource{Group: attributes.Group, Resource: attributes.Resource}
		review, err := mg.authorization.SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attributes},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("asking whether you may %s %s %s/%s: %w", attributes.Verb, resource, attributes.Namespace, attributes.Name, err)
		}
		if !review.Status.Allowed {
			reason := ""
			if review.Status.Reason != "" {
				reason = ": " + review.Status.Reason
			}
			return refuse("you may not %s %s %s/%s: gridview-apiserver admits the adoption of Service %s only from a user who may update the ServiceGrid and update and patch the Service%s",
				attributes.Verb, resource, attributes.Namespace, attributes.Name, name, reason)
		}
	}
	// The Service as gridview's takeover writes it, for the ServiceGrid that
	// adopts it: gv, or the one ensureServiceGrid creates.
	adopter := gv
	if adopter == nil {
		adopter = desiredServiceGrid(grid, svc)
	}
	takeover, err := servicegrid.Takeover(svc, adopter)
	if err != nil {
		return fmt.Errorf("rendering Service %s as gridview takes it over: %w", name, err)
	}
	if lost := lostInTakeover(svc, takeover); len(lost) > 0 {
		return refuse("the adoption would take %s off Service %s: gridview writes a Service's labels and annotations from its ServiceGrid; "+
			"put them on the %s %s/%s, or take them off the Service, and run again", strings.Join(lost, ", "), name, gridviewKind, grid.namespace, grid.name)
	}
	// The controller reference is gridview's to write, not the user's: asked
	// as the user, a reference that blocks the owner's deletion would need
	// rights on the ServiceGrid's finalizers where admission enforces them.
	takeover.OwnerReferences = withoutSuperEdge(svc.OwnerReferences, grid)
	_, err = mg.core.Services(svc.Namespace).Update(ctx, takeover, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		return refuse("gridview-apiserver would refuse the adoption: kube-apiserver refuses Service %s as gridview would take it over (a server-side dry run): %v", name, err)
	case apierrors.IsConflict(err):
		return fmt.Errorf("Service %s changed since it was read; run again: %w", name, err)
	case err != nil:
		return fmt.Errorf("asking kube-apiserver, by a server-side dry run, whether it accepts Service %s as gridview would take it over: %w", name, err)
	}
	return nil
}

// lostInTakeover names the labels and annotations of svc that takeover drops
// or changes, but those gridview renders itself.
func lostInTakeover(svc, takeover *corev1.Service) []string {
	var lost []string
	for _, kind := range []struct {
		name      string
		have, get map[string]string
	}{{"label", svc.Labels, takeover.Labels}, {"annotation", svc.Annotations, takeover.Annotations}} {
		for key, value := range kind.have {
			switch written, ok := kind.get[key]; {
			case renderedByGridview(key):
			case !ok:
				lost = append(lost, fmt.Sprintf("%s %s", kind.name, key))
			case written != value:
				lost = append(lost, fmt.Sprintf("%s %s (%q would become %q)", kind.name, key, value, written))
			}
		}
	}
	slices.Sort(lost)
	return lost
}

// withoutSuperEdge is refs without grid's.
func withoutSuperEdge(refs []metav1.OwnerReference, grid *superedgeGrid) []metav1.OwnerReference {
	return slices.DeleteFunc(slices.Clone(refs), func(ref metav1.OwnerReference) bool {
		return ownedBySuperEdge(ref, grid)
	})
}

// orphan removes SuperEdge's owner reference from svc, makes sure it carries
// the label gridview adopts by, and returns the orphan. The resourceVersion
// makes the patch conditional: a Service changed since it was checked is not
// touched.
func (mg *migrator) orphan(ctx context.Context, grid *superedgeGrid, svc *corev1.Service) (*corev1.Service, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": svc.ResourceVersion,
		"ownerReferences": withoutSuperEdge(svc.OwnerReferences, grid),
		"labels":          map[string]string{labelGridSelector: grid.name},
	}})
	if err != nil {
		return nil, err
	}
	orphaned, err := mg.core.Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsConflict(err) {
		return nil, fmt.Errorf("Service %s/%s changed since it was read; run again: %w", svc.Namespace, svc.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("removing SuperEdge's owner reference from Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return orphaned, nil
}

// restore follows a rewrite that failed with cause after orphan: the Service
// gets back the owner references and grid-selector label it had before, so
// that it is SuperEdge's again rather than left without a controller. The
// orphan's resourceVersion makes the patch conditional: a Service someone
// changed since, gridview adopting it perhaps, is not touched. Should that
// fail, the Service's state is printed as it is now, and a run from it
// resumes. The error returned is cause, or cause and the restore's. An
// interrupt that ended the rewrite does not end the restore: that runs for
// restoreTimeout.
func (mg *migrator) restore(ctx context.Context, grid *superedgeGrid, svc, orphaned *corev1.Service, cause error, p *printer) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	name := svc.Namespace + "/" + svc.Name
	label := any(nil) // null: a merge patch removes the label the orphan step added
	if value, ok := svc.Labels[labelGridSelector]; ok {
		label = value
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": orphaned.ResourceVersion,
		"ownerReferences": svc.OwnerReferences,
		"labels":          map[string]any{labelGridSelector: label},
	}})
	if err == nil {
		_, err = mg.core.Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err == nil {
		p.line("put SuperEdge's controller reference back on Service %s: it stays SuperEdge's, and the %s waits for a later run", name, gridviewKind)
		return cause
	}
	p.line("could not put SuperEdge's controller reference back on Service %s: %v", name, err)
	now, getErr := mg.core.Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if getErr != nil {
		p.line("Service %s could not be read again (%v); run this migration again, which goes on from where it is", name, getErr)
	} else if ref := metav1.GetControllerOf(now); ref == nil {
		p.line("Service %s is left without a controller, with the label %s=%q: it keeps serving, and gridview adopts it once a write of the %s is admitted; fix the cause, then run this migration again to resume",
			name, labelGridSelector, now.Labels[labelGridSelector], gridviewKind)
	} else {
		p.line("Service %s is now controlled by %s %s %s (uid %s); run this migration again, which goes on from there",
			name, ref.APIVersion, ref.Kind, ref.Name, ref.UID)
	}
	// Only the restore's error is wrapped: it, not the adoption's refusal,
	// decides how the migration reports this Service.
	return fmt.Errorf("%v; and putting SuperEdge's controller reference back on Service %s failed: %w", cause, name, err) //nolint:errorlint // see above
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

// restoreTimeout bounds putting SuperEdge's controller reference back.
const restoreTimeout = 10 * time.Second

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
