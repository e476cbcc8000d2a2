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

package server

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// guardStorage makes ServiceGrid storage answer 503 Service Unavailable,
// naming etcd, as soon as etcd's ready check fails (it probes at most every
// half of --etcd-readycheck-timeout, 2 s by default, and each probe waits at
// most that long). Without it, a write with etcd gone waits in the etcd
// client's retries until the request timeout and ends in an opaque 504
// "request did not complete within requested timeout". The check's client
// lives until ctx ends.
func guardStorage(ctx context.Context, getter generic.RESTOptionsGetter, config storagebackend.Config) (generic.RESTOptionsGetter, error) {
	ready, err := factory.CreateReadyCheck(config, ctx.Done())
	if err != nil {
		return nil, fmt.Errorf("creating the etcd ready check: %w", err)
	}
	check := func() error {
		if err := ready(); err != nil {
			return apierrors.NewServiceUnavailable(fmt.Sprintf(
				"storage unavailable: etcd at %v does not answer (%v); ServiceGrids cannot be read or written until it does, nor NodeEndpoints read as current",
				config.Transport.ServerList, err))
		}
		return nil
	}
	return guardedGetter{RESTOptionsGetter: getter, check: check}, nil
}

type guardedGetter struct {
	generic.RESTOptionsGetter
	check func() error
}

func (g guardedGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	decorate := opts.Decorator
	opts.Decorator = func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrs storage.AttrFunc, trigger storage.IndexerFuncs, indexers *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := decorate(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrs, trigger, indexers)
		if err != nil {
			return nil, nil, err
		}
		return guardedStorage{Interface: s, check: g.check}, destroy, nil
	}
	return opts, nil
}

// guardedStorage checks etcd before every call that needs it: writes, and
// reads without a resourceVersion, which must be consistent with etcd.
// Reads at a resourceVersion and watches are served from the watch cache
// while etcd is away.
type guardedStorage struct {
	storage.Interface
	check func() error
}

func (s guardedStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Interface.Create(ctx, key, obj, out, ttl)
}

func (s guardedStorage) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Interface.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject, opts)
}

func (s guardedStorage) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject)
}

func (s guardedStorage) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	if opts.ResourceVersion == "" {
		if err := s.check(); err != nil {
			return err
		}
	}
	return s.Interface.Get(ctx, key, opts, objPtr)
}

func (s guardedStorage) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if opts.ResourceVersion == "" {
		if err := s.check(); err != nil {
			return err
		}
	}
	return s.Interface.GetList(ctx, key, opts, listObj)
}
