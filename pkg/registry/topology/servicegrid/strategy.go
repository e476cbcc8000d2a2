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

// Package servicegrid stores ServiceGrids in etcd through the generic registry.
package servicegrid

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/apis/topology/validation"
)

var (
	_ rest.RESTCreateStrategy  = strategy{}
	_ rest.RESTUpdateStrategy  = strategy{}
	_ rest.RESTDeleteStrategy  = strategy{}
	_ rest.ResetFieldsStrategy = strategy{}
	_ rest.RESTUpdateStrategy  = statusStrategy{}
	_ rest.ResetFieldsStrategy = statusStrategy{}
	_ storage.AttrFunc         = GetAttrs
)

// strategy applies the rules of the main resource: clients own the spec, the
// status subresource owns the status.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy for writes to servicegrids.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

func (strategy) NamespaceScoped() bool { return true }

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(v1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	sg := obj.(*topology.ServiceGrid)
	sg.Status = topology.ServiceGridStatus{}
	sg.Generation = 1
}

func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	sg, oldSG := obj.(*topology.ServiceGrid), old.(*topology.ServiceGrid)
	sg.Status = oldSG.Status
	if !apiequality.Semantic.DeepEqual(sg.Spec, oldSG.Spec) {
		sg.Generation = oldSG.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateServiceGrid(obj.(*topology.ServiceGrid))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateServiceGridUpdate(obj.(*topology.ServiceGrid), old.(*topology.ServiceGrid))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)                   {}
func (strategy) AllowCreateOnUpdate(context.Context) bool      { return false }
func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// statusStrategy lets writes to the status subresource change nothing but the status.
type statusStrategy struct {
	strategy
}

// NewStatusStrategy returns the strategy for writes to servicegrids/status.
func NewStatusStrategy(base strategy) statusStrategy {
	return statusStrategy{base}
}

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(v1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
		),
	}
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	sg, oldSG := obj.(*topology.ServiceGrid), old.(*topology.ServiceGrid)
	sg.Spec = oldSG.Spec
	sg.Labels = oldSG.Labels
	sg.Annotations = oldSG.Annotations
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateServiceGridStatusUpdate(obj.(*topology.ServiceGrid), old.(*topology.ServiceGrid))
}

// GetAttrs returns the labels and the selectable fields of a ServiceGrid.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	sg, ok := obj.(*topology.ServiceGrid)
	if !ok {
		return nil, nil, fmt.Errorf("not a ServiceGrid: %T", obj)
	}
	return sg.Labels, SelectableFields(sg), nil
}

// SelectableFields are the fields a list or watch of ServiceGrids may select on.
func SelectableFields(sg *topology.ServiceGrid) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		v1alpha1.FieldGridUniqKey: sg.Spec.GridUniqKey,
	}, &sg.ObjectMeta, true)
}
