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
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	apistorage "k8s.io/apiserver/pkg/storage"
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

// A replica that has not read the log as far as a client's resourceVersion
// answers its watch with 429, which client-go watches again after from the
// same resourceVersion, and a list with "Too large resource version", as
// kube-apiserver does. A resourceVersion of a revision etcd never reached
// (an etcd restored or replaced), or of another engine, gets 410: waiting
// for it would wait for ever.
func TestAReplicaBehindAsksToWatchAgain(t *testing.T) {
	generation := uint64(viewstore.EngineGeneration) << 57
	ahead := strconv.FormatUint(generation|uint64(1)<<56, 10)
	tests := []struct {
		name            string
		resourceVersion string
		// etcdAt is the revision etcd says it is at; 0: the store has no log.
		etcdAt     int64
		wantWatch  func(error) bool
		wantWatchS string
		// wantList is "Too large resource version" or "410".
		wantList string
	}{
		{name: "a revision etcd reached", resourceVersion: ahead, etcdAt: 1 << 40,
			wantWatch: apierrors.IsTooManyRequests, wantWatchS: "429", wantList: "Too large resource version"},
		{name: "no log to ask", resourceVersion: ahead,
			wantWatch: apierrors.IsTooManyRequests, wantWatchS: "429", wantList: "Too large resource version"},
		{name: "a revision etcd never reached", resourceVersion: ahead, etcdAt: 100,
			wantWatch: apierrors.IsResourceExpired, wantWatchS: "410", wantList: "410"},
		{name: "another engine's", resourceVersion: strconv.FormatUint(generation<<1, 10), etcdAt: 1 << 40,
			wantWatch: apierrors.IsResourceExpired, wantWatchS: "410", wantList: "410"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			views := viewstore.New(viewstore.DefaultOptions)
			views.Load([]*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}}}, nil, nil)
			if tc.etcdAt > 0 {
				views.SetLog(fakeLog(tc.etcdAt))
			}
			s := NewStorage(views).(*storage)
			ctx, cancel := context.WithTimeout(genericapirequest.WithNamespace(t.Context(), "demo"), 100*time.Millisecond)
			defer cancel()
			if _, err := s.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: tc.resourceVersion}); !tc.wantWatch(err) {
				t.Errorf("watch: %v, want %s", err, tc.wantWatchS)
			}
			_, err := s.List(ctx, &metainternalversion.ListOptions{ResourceVersion: tc.resourceVersion})
			if got := apistorage.IsTooLargeResourceVersion(err); got != (tc.wantList == "Too large resource version") || !got && !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
				t.Errorf("list: %v, want %s", err, tc.wantList)
			}
		})
	}
}

// fakeLog is etcd at a revision.
type fakeLog int64

func (l fakeLog) Revision(context.Context) (int64, error) { return int64(l), nil }
func (fakeLog) RequestProgress()                          {}
