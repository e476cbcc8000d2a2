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
	"fmt"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/controller/servicegrid"
	"github.com/gridview/gridview/pkg/topology"
)

// The name and label SuperEdge and gridview alike give a ServiceGrid's Service.
const (
	serviceSuffix     = "-svc"
	labelGridSelector = servicegrid.LabelGridSelector
	gridviewKind      = "topology.gridview.io/v1alpha1 ServiceGrid"
)

// migrate takes one SuperEdge ServiceGrid through the steps, each of which
// looks at the cluster first, so that a run resumes where another stopped.
func (mg *migrator) migrate(ctx context.Context, grid *superedgeGrid, p *printer) error {
	svc, err := mg.core.Services(grid.namespace).Get(ctx, grid.name+serviceSuffix, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		svc, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("reading Service %s/%s: %w", grid.namespace, grid.name+serviceSuffix, err)
	}
	gv, err := mg.gridview.TopologyV1alpha1().ServiceGrids(grid.namespace).Get(ctx, grid.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		gv, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("reading the %s: %w", gridviewKind, err)
	}
	if err := check(grid, svc, gv); err != nil {
		return err
	}
	// A Service to hand over: asked about in a dry run too, which then
	// predicts the refusal.
	if svc != nil && (gv == nil || !metav1.IsControlledBy(svc, gv)) {
		if err := mg.adoptionAdmissible(ctx, grid, svc, gv); err != nil {
			return err
		}
	}
	if gv, err = mg.ensureServiceGrid(ctx, grid, svc, gv, p); err != nil {
		return err
	}
	if err := mg.handOver(ctx, grid, svc, gv, p); err != nil {
		return err
	}
	return mg.deleteSuperEdgeGrid(ctx, grid, p)
}

// check refuses what cannot be handed over by what it reads alone; the
// rights and the Service gridview's adoption needs are asked of the API
// servers next, still before anything changes.
func check(grid *superedgeGrid, svc *corev1.Service, gv *v1alpha1.ServiceGrid) error {
	switch {
	case grid.gridUniqKey == "":
		return refuse("spec.gridUniqKey is empty: a gridview ServiceGrid needs the node label key of its grid units")
	case grid.templateErr != nil:
		return refuse("%v", grid.templateErr)
	}
	if svc != nil && gv != nil && metav1.IsControlledBy(svc, gv) {
		// Handed over: what is left is deleting SuperEdge's object, and gridview's
		// ServiceGrid is the user's to change from now on.
		return nil
	}
	if grid.deleting {
		return refuse("it is being deleted while its Service is not gridview's: the garbage collector may delete the Service with it")
	}
	// gridview's own routing annotations take precedence over topologyKeys,
	// which SuperEdge routes by; its ServiceGrid renders them from
	// spec.fallback and spec.minReady, and passes a user's through.
	routedByGridview := func(annotations map[string]string, what string) error {
		for _, key := range []string{topology.AnnotationGridviewKeys, topology.AnnotationMinReady} {
			if value, ok := annotations[key]; ok {
				return refuse("%s carries annotation %s=%q, which routes otherwise than SuperEdge: take it off and run again, "+
					"then set spec.fallback or spec.minReady on the %s", what, key, value, gridviewKind)
			}
		}
		return nil
	}
	if gv != nil {
		if err := sameSpec(gv, desiredServiceGrid(grid, svc)); err != nil {
			return err
		}
		if err := routedByGridview(gv.Annotations, "the "+gridviewKind); err != nil {
			return err
		}
	}
	if svc == nil {
		return nil
	}
	name := svc.Namespace + "/" + svc.Name
	if err := routedByGridview(svc.Annotations, "Service "+name); err != nil {
		return err
	}
	switch ref := metav1.GetControllerOf(svc); {
	case ref == nil && svc.Labels[labelGridSelector] != grid.name:
		return refuse("Service %s is an orphan without the label %s=%s: it is not this ServiceGrid's", name, labelGridSelector, grid.name)
	case ref != nil && !ownedBySuperEdge(*ref, grid):
		return refuse("Service %s is controlled by %s %s %s (uid %s), neither this SuperEdge ServiceGrid nor gridview's",
			name, ref.APIVersion, ref.Kind, ref.Name, ref.UID)
	case grid.template.ClusterIP != "" && grid.template.ClusterIP != svc.Spec.ClusterIP:
		return refuse("spec.template.clusterIP %s is not Service %s's clusterIP %s, which cannot change", grid.template.ClusterIP, name, svc.Spec.ClusterIP)
	}
	return nil
}

// sameSpec refuses an existing gridview ServiceGrid whose spec is not the one
// migrate would create: adopted, it would route otherwise than SuperEdge's
// did (another fallback or minReady) or shape the Service otherwise. Every
// field counts, those SuperEdge lacks too, and fields added to the spec later
// as well, so the specs are compared in their JSON form, both defaulted as
// gridview-apiserver stores them; the reason names the first field that
// differs.
func sameSpec(gv, desired *v1alpha1.ServiceGrid) error {
	have := gv.DeepCopy()
	v1alpha1.SetObjectDefaults_ServiceGrid(have)
	var specs [2]any
	for i, spec := range []v1alpha1.ServiceGridSpec{have.Spec, desired.Spec} {
		data, err := json.Marshal(spec)
		if err != nil {
			return fmt.Errorf("encoding a %s spec: %w", gridviewKind, err)
		}
		if err := json.Unmarshal(data, &specs[i]); err != nil {
			return fmt.Errorf("decoding a %s spec: %w", gridviewKind, err)
		}
	}
	path, got, want := firstDifference("spec", specs[0], specs[1])
	if path == "" {
		return nil
	}
	return refuse("the %s exists with %s %s, where migrating SuperEdge's ServiceGrid makes %s", gridviewKind, path, jsonValue(got), jsonValue(want))
}

// firstDifference returns the path of the first field, in key order, where
// the decoded JSON values a and b differ, and their values there; an empty
// path when they are equal.
func firstDifference(path string, a, b any) (string, any, any) {
	switch a := a.(type) {
	case map[string]any:
		if b, ok := b.(map[string]any); ok {
			keys := slices.Collect(maps.Keys(a))
			for key := range b {
				if _, ok := a[key]; !ok {
					keys = append(keys, key)
				}
			}
			slices.Sort(keys)
			for _, key := range keys {
				if p, x, y := firstDifference(path+"."+key, a[key], b[key]); p != "" {
					return p, x, y
				}
			}
			return "", nil, nil
		}
	case []any:
		if b, ok := b.([]any); ok && len(a) == len(b) {
			for i := range a {
				if p, x, y := firstDifference(fmt.Sprintf("%s[%d]", path, i), a[i], b[i]); p != "" {
					return p, x, y
				}
			}
			return "", nil, nil
		}
	}
	if reflect.DeepEqual(a, b) {
		return "", nil, nil
	}
	return path, a, b
}

// jsonValue prints a decoded JSON value as JSON, and an absent one as unset.
func jsonValue(v any) string {
	if v == nil {
		return "unset"
	}
	// A value json.Unmarshal made always encodes.
	data, _ := json.Marshal(v)
	return string(data)
}

// desiredServiceGrid is gridview's ServiceGrid for grid and its Service svc
// (nil when missing), defaulted as gridview-apiserver stores it, so that a
// stored one compares equal. It carries the Service's own labels and
// annotations: gridview renders the Service's metadata from its ServiceGrid,
// and what SuperEdge left to users to put on the Service (a cloud load
// balancer's annotations, say) would otherwise go at the adoption.
func desiredServiceGrid(grid *superedgeGrid, svc *corev1.Service) *v1alpha1.ServiceGrid {
	labels, annotations := maps.Clone(grid.labels), map[string]string{}
	if svc != nil {
		// The Service's value of a label the grid has too: the one its
		// readers select it by.
		for key, value := range svc.Labels {
			if !renderedByGridview(key) {
				if labels == nil {
					labels = map[string]string{}
				}
				labels[key] = value
			}
		}
		for key, value := range svc.Annotations {
			if !renderedByGridview(key) {
				annotations[key] = value
			}
		}
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	sg := &v1alpha1.ServiceGrid{
		ObjectMeta: metav1.ObjectMeta{Name: grid.name, Namespace: grid.namespace, Labels: labels, Annotations: annotations},
		Spec: v1alpha1.ServiceGridSpec{
			GridUniqKey: grid.gridUniqKey,
			Fallback:    v1alpha1.FallbackNone,
			Template:    *grid.template.DeepCopy(),
		},
	}
	v1alpha1.SetObjectDefaults_ServiceGrid(sg)
	return sg
}

// renderedByGridview says whether gridview writes a label or annotation of
// a ServiceGrid's Service itself, from the ServiceGrid's name and spec: such
// a key of the SuperEdge Service is not carried to the ServiceGrid, and the
// adoption may change its value. kubectl's record of its last apply
// describes the Service, and on the ServiceGrid it would describe another
// object.
func renderedByGridview(key string) bool {
	switch key {
	case servicegrid.LabelGridSelector, servicegrid.LabelGridUniqKey, topology.AnnotationTopologyKeys,
		topology.AnnotationGridviewKeys, topology.AnnotationMinReady,
		servicegrid.AnnotationAdoptServiceUID, corev1.LastAppliedConfigAnnotation:
		return true
	}
	return false
}

// ensureServiceGrid creates gridview's ServiceGrid unless it exists, and
// returns it (nil in a dry run that would create it).
func (mg *migrator) ensureServiceGrid(ctx context.Context, grid *superedgeGrid, svc *corev1.Service, gv *v1alpha1.ServiceGrid, p *printer) (*v1alpha1.ServiceGrid, error) {
	desired := desiredServiceGrid(grid, svc)
	switch {
	case gv != nil:
		p.line("%s exists (gridUniqKey %s, fallback %s)", gridviewKind, gv.Spec.GridUniqKey, gv.Spec.Fallback)
		return gv, nil
	case !mg.apply:
		p.line("would create %s (gridUniqKey %s, fallback %s)", gridviewKind, desired.Spec.GridUniqKey, desired.Spec.Fallback)
		return nil, nil
	}
	created, err := mg.gridview.TopologyV1alpha1().ServiceGrids(grid.namespace).Create(ctx, desired, metav1.CreateOptions{})
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		return nil, refuse("gridview-apiserver refused the %s: %v", gridviewKind, err)
	}
	if err != nil {
		return nil, fmt.Errorf("creating the %s: %w", gridviewKind, err)
	}
	p.line("created %s (gridUniqKey %s, fallback %s)", gridviewKind, created.Spec.GridUniqKey, created.Spec.Fallback)
	return created, nil
}

// deleteSuperEdgeGrid deletes SuperEdge's ServiceGrid, leaving whatever it
// still owns to the garbage collector's orphaning: the Service is gridview's.
func (mg *migrator) deleteSuperEdgeGrid(ctx context.Context, grid *superedgeGrid, p *printer) error {
	kind := superedgeVersion + " ServiceGrid"
	switch {
	case grid.deleting:
		p.line("%s (uid %s) is being deleted: the garbage collector finishes it", kind, grid.uid)
		return nil
	case !mg.apply:
		p.line("would delete %s (uid %s) with propagationPolicy=Orphan", kind, grid.uid)
		return nil
	}
	orphan := metav1.DeletePropagationOrphan
	err := mg.superedge.Resource(superedgeResource).Namespace(grid.namespace).Delete(ctx, grid.name, metav1.DeleteOptions{
		PropagationPolicy: &orphan,
		Preconditions:     &metav1.Preconditions{UID: &grid.uid},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s (uid %s): %w", kind, grid.uid, err)
	}
	p.line("deleted %s (uid %s) with propagationPolicy=Orphan", kind, grid.uid)
	return nil
}
