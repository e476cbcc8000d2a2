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

package nodeendpoints

import (
	"context"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"

	"github.com/gridview/gridview/apis/topology"
)

func TestStorageWithoutViews(t *testing.T) {
	s := NewStorage().(*storage)
	ctx := context.Background()

	if _, err := s.Get(ctx, "edge-1.echo-svc", nil); !apierrors.IsNotFound(err) {
		t.Errorf("get: err = %v, want NotFound", err)
	}

	obj, err := s.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	list := obj.(*topology.NodeEndpointsList)
	if len(list.Items) != 0 || list.ResourceVersion == "" {
		t.Errorf("list = %d items, resourceVersion %q; want none, with a resourceVersion", len(list.Items), list.ResourceVersion)
	}

	_, err = s.Watch(ctx, &metainternalversion.ListOptions{})
	if code := apierrors.ReasonForError(err); code != "MethodNotAllowed" || apierrors.IsResourceExpired(err) {
		t.Errorf("watch: err = %v (%s), want MethodNotAllowed and never 410", err, code)
	}
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != http.StatusMethodNotAllowed {
		t.Errorf("watch: err = %#v, want a 405 status", err)
	}
}
