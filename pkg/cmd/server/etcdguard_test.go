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
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// recordingStorage records which calls reached it.
type recordingStorage struct {
	storage.Interface
	calls []string
}

func (s *recordingStorage) Create(context.Context, string, runtime.Object, runtime.Object, uint64) error {
	s.calls = append(s.calls, "Create")
	return nil
}

func (s *recordingStorage) Delete(context.Context, string, runtime.Object, *storage.Preconditions, storage.ValidateObjectFunc, runtime.Object, storage.DeleteOptions) error {
	s.calls = append(s.calls, "Delete")
	return nil
}

func (s *recordingStorage) GuaranteedUpdate(context.Context, string, runtime.Object, bool, *storage.Preconditions, storage.UpdateFunc, runtime.Object) error {
	s.calls = append(s.calls, "GuaranteedUpdate")
	return nil
}

func (s *recordingStorage) Get(_ context.Context, _ string, opts storage.GetOptions, _ runtime.Object) error {
	s.calls = append(s.calls, "Get@"+opts.ResourceVersion)
	return nil
}

func (s *recordingStorage) GetList(_ context.Context, _ string, opts storage.ListOptions, _ runtime.Object) error {
	s.calls = append(s.calls, "GetList@"+opts.ResourceVersion)
	return nil
}

func TestGuardedStorage(t *testing.T) {
	ctx := context.Background()
	calls := map[string]func(storage.Interface) error{
		"Create": func(s storage.Interface) error { return s.Create(ctx, "k", nil, nil, 0) },
		"Delete": func(s storage.Interface) error {
			return s.Delete(ctx, "k", nil, nil, nil, nil, storage.DeleteOptions{})
		},
		"GuaranteedUpdate": func(s storage.Interface) error { return s.GuaranteedUpdate(ctx, "k", nil, false, nil, nil, nil) },
		"Get@":             func(s storage.Interface) error { return s.Get(ctx, "k", storage.GetOptions{}, nil) },
		"GetList@":         func(s storage.Interface) error { return s.GetList(ctx, "k", storage.ListOptions{}, nil) },
		// At a resourceVersion the watch cache answers without etcd.
		"Get@5": func(s storage.Interface) error { return s.Get(ctx, "k", storage.GetOptions{ResourceVersion: "5"}, nil) },
		"GetList@0": func(s storage.Interface) error {
			return s.GetList(ctx, "k", storage.ListOptions{ResourceVersion: "0"}, nil)
		},
	}
	guardedWhenDown := map[string]bool{"Create": true, "Delete": true, "GuaranteedUpdate": true, "Get@": true, "GetList@": true}
	down := apierrors.NewServiceUnavailable("storage unavailable: etcd at [x] does not answer")
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			for _, etcdDown := range []bool{false, true} {
				inner := &recordingStorage{}
				guarded := guardedStorage{Interface: inner, check: func() error {
					if etcdDown {
						return down
					}
					return nil
				}}
				err := call(guarded)
				refused := etcdDown && guardedWhenDown[name]
				switch {
				case refused && !errors.Is(err, down):
					t.Errorf("etcd down: %v, want the 503", err)
				case refused && len(inner.calls) != 0:
					t.Errorf("etcd down: reached the storage: %v", inner.calls)
				case !refused && (err != nil || len(inner.calls) != 1 || inner.calls[0] != name):
					t.Errorf("etcd down=%v: %v, calls %v, want %s passed through", etcdDown, err, inner.calls, name)
				}
			}
		})
	}
}
