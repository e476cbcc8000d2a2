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
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/viewstore"
)

func TestStorageServesTheRequestNamespace(t *testing.T) {
	views := viewstore.New(viewstore.DefaultOptions)
	s := NewStorage(views).(*storage)
	demo := genericapirequest.WithNamespace(t.Context(), "demo")
	if _, err := s.Get(demo, "edge-1..echo-x", nil); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("get before the views are loaded: %v, want 503", err)
	}

	views.Load([]*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "edge-2"}}},
		[]*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "echo"}}, {ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "echo"}}},
		[]*discoveryv1.EndpointSlice{{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "echo-x", Labels: map[string]string{discoveryv1.LabelServiceName: "echo"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, NodeName: ptr.To("edge-2")}},
		}, {
			ObjectMeta:  metav1.ObjectMeta{Namespace: "other", Name: "echo-x", Labels: map[string]string{discoveryv1.LabelServiceName: "echo"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.2"}, NodeName: ptr.To("edge-1")}},
		}})
	obj, err := s.Get(demo, "edge-1..echo-x", nil)
	if err != nil || len(obj.(*topology.NodeEndpoints).Slice.Endpoints) != 1 {
		t.Errorf("get: %+v, %v; want the view of the demo slice", obj, err)
	}

	byNode := &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("nodeName", "edge-2")}
	for ctx, want := range map[string]int{"demo": 1, "": 2} {
		obj, err := s.List(genericapirequest.WithNamespace(t.Context(), ctx), byNode)
		if err != nil || len(obj.(*topology.NodeEndpointsList).Items) != want {
			t.Errorf("list in %q: %+v, %v; want %d items", ctx, obj, err, want)
		}
	}

	w, err := s.Watch(demo, &metainternalversion.ListOptions{FieldSelector: byNode.FieldSelector, SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, want := range []watch.EventType{watch.Added, watch.Bookmark} {
		if e := <-w.ResultChan(); e.Type != want {
			t.Errorf("watch: %s, want %s", e.Type, want)
		}
	}
}
