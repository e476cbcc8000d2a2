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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/controller/servicegrid"
)

var (
	_ rest.StandardStorage    = &REST{}
	_ rest.ShortNamesProvider = &REST{}
	_ rest.CategoriesProvider = &REST{}
	_ rest.Patcher            = &StatusREST{}
	_ rest.Storage            = &StatusREST{}
)

// REST stores ServiceGrids in etcd, admitting only those whose Service the
// cluster would accept from the requesting user.
type REST struct {
	*genericregistry.Store
	checks *ClusterChecks
}

// StatusREST serves the status subresource of ServiceGrids.
type StatusREST struct {
	store *genericregistry.Store
}

// WriteObserver is told of every ServiceGrid write that was not a dry run.
type WriteObserver func(namespace, name string)

// NewREST returns the storage of servicegrids and of servicegrids/status.
// Every committed write is reported to written, so the reconciler acts on it
// without waiting for its informer.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, written WriteObserver, checks *ClusterChecks) (*REST, *StatusREST, error) {
	mainStrategy := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &topology.ServiceGrid{} },
		NewListFunc:               func() runtime.Object { return &topology.ServiceGridList{} },
		DefaultQualifiedResource:  topology.Resource("servicegrids"),
		SingularQualifiedResource: topology.Resource("servicegrid"),

		CreateStrategy:      mainStrategy,
		UpdateStrategy:      mainStrategy,
		DeleteStrategy:      mainStrategy,
		ResetFieldsStrategy: mainStrategy,

		TableConvertor: tableConvertor,

		AfterCreate: func(obj runtime.Object, opts *metav1.CreateOptions) {
			if len(opts.DryRun) == 0 {
				written.report(obj)
			}
		},
		AfterUpdate: func(obj runtime.Object, opts *metav1.UpdateOptions) {
			if len(opts.DryRun) == 0 {
				written.report(obj)
			}
		},
		AfterDelete: func(obj runtime.Object, opts *metav1.DeleteOptions) {
			if len(opts.DryRun) == 0 {
				written.report(obj)
			}
		},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, nil, err
	}

	statusStore := *store
	status := NewStatusStrategy(mainStrategy)
	statusStore.UpdateStrategy = status
	statusStore.ResetFieldsStrategy = status
	return &REST{Store: store, checks: checks}, &StatusREST{store: &statusStore}, nil
}

// Create stores a ServiceGrid that passes validation and the cluster checks,
// marked with the orphan it may adopt.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	// Validation sees copies: the mark must be made before.
	if err := r.checks.markAdoption(ctx, obj.(*topology.ServiceGrid), ""); err != nil {
		return nil, err
	}
	return r.Store.Create(ctx, obj, r.checks.wrapCreate(createValidation), options)
}

// Update stores a changed ServiceGrid that passes validation and the cluster
// checks; patches come here too, and server-side apply to a new name creates
// through createValidation, which must check as much as Create does.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.Store.Update(ctx, name, markedUpdate{UpdatedObjectInfo: objInfo, checks: r.checks},
		r.checks.wrapCreate(createValidation), r.checks.wrapUpdate(updateValidation), forceAllowCreate, options)
}

// markedUpdate marks the updated ServiceGrid with the orphan it may adopt,
// before validation copies it.
type markedUpdate struct {
	rest.UpdatedObjectInfo
	checks *ClusterChecks
}

func (m markedUpdate) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := m.UpdatedObjectInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	sg := obj.(*topology.ServiceGrid)
	if beingDeleted(old) {
		// Nothing is adopted once deletion has begun, and no check runs.
		delete(sg.Annotations, servicegrid.AnnotationAdoptServiceUID)
		return obj, nil
	}
	if err := m.checks.markAdoption(ctx, sg, old.(*topology.ServiceGrid).UID); err != nil {
		return nil, err
	}
	return obj, nil
}

func (w WriteObserver) report(obj runtime.Object) {
	if sg, ok := obj.(*topology.ServiceGrid); ok {
		w(sg.Namespace, sg.Name)
	}
}

// ShortNames implements rest.ShortNamesProvider.
func (*REST) ShortNames() []string { return []string{"sg"} }

// Categories implements rest.CategoriesProvider: "kubectl get gridview" lists ServiceGrids.
func (*REST) Categories() []string { return []string{"gridview"} }

// New returns an empty ServiceGrid.
func (r *StatusREST) New() runtime.Object { return &topology.ServiceGrid{} }

// Destroy does nothing: the main resource owns the store.
func (r *StatusREST) Destroy() {}

// Get returns the ServiceGrid whose status is read.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update writes the status of a ServiceGrid; every other change is discarded.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// The status subresource never creates: a ServiceGrid must exist first.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints the ServiceGrid as the main resource does.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
