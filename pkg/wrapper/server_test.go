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

package wrapper

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func testService(name, clusterIP string, labels map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Labels: labels, ResourceVersion: "7"},
		Spec:       corev1.ServiceSpec{ClusterIP: clusterIP},
	}
}

// newTestServer serves a state holding two Services and a slice through
// httptest, to clients as kube-proxy builds them: JSON or protobuf.
func newTestServer(t *testing.T, contentType string) (*State, kubernetes.Interface) {
	t.Helper()
	state := NewState(100, []runtime.Object{
		testService("echo", "10.96.0.10", nil),
		testService("headless", "None", nil),
		&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "echo-x", Labels: map[string]string{discoveryv1.LabelServiceName: "echo"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
		},
	})
	forwarded := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "forwarded", http.StatusTeapot) })
	server := httptest.NewServer(NewServer("edge-1", state, forwarded))
	t.Cleanup(server.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: server.URL, ContentConfig: rest.ContentConfig{ContentType: contentType}})
	if err != nil {
		t.Fatal(err)
	}
	return state, client
}

func TestClientsListAndWatchAsFromKubeAPIServer(t *testing.T) {
	for _, contentType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(contentType, func(t *testing.T) {
			state, client := newTestServer(t, contentType)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()

			// kube-proxy's own selector.
			list, err := client.CoreV1().Services("").List(ctx, metav1.ListOptions{FieldSelector: "spec.clusterIP!=None"})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 || list.Items[0].Name != "echo" || list.ResourceVersion != "100" {
				t.Fatalf("services = %+v", list)
			}
			// Lists are written item by item: they decode as the list
			// object the state holds would encode.
			for _, namespace := range []string{"", "none"} {
				got, err := client.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want, _ := state.List(&filter{kind: endpointSlices, namespace: namespace}, "")
				if got.TypeMeta = (metav1.TypeMeta{}); !apiequality.Semantic.DeepEqual(got, want) {
					t.Errorf("slices in %q = %+v\nwant %+v", namespace, got, want)
				}
			}

			w, err := client.DiscoveryV1().EndpointSlices("").Watch(ctx, metav1.ListOptions{
				SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
				LabelSelector: "!service.kubernetes.io/headless",
			})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			expect := func(want watch.EventType) watch.Event {
				t.Helper()
				select {
				case e := <-w.ResultChan():
					if e.Type != want {
						t.Fatalf("event %s %+v, want %s", e.Type, e.Object, want)
					}
					return e
				case <-ctx.Done():
					t.Fatalf("no %s event", want)
				}
				return watch.Event{}
			}
			expect(watch.Added)
			end := expect(watch.Bookmark).Object.(*discoveryv1.EndpointSlice)
			if end.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
				t.Errorf("the bookmark after the initial events is %+v", end.ObjectMeta)
			}
			state.Set(&discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "echo-x", Labels: map[string]string{discoveryv1.LabelServiceName: "echo"}},
				AddressType: discoveryv1.AddressTypeIPv4,
			})
			if got := expect(watch.Modified).Object.(*discoveryv1.EndpointSlice); len(got.Endpoints) != 0 || got.ResourceVersion != "101" {
				t.Errorf("modified slice %+v", got)
			}
		})
	}
}

func TestServerRefusesWhatItDoesNotServe(t *testing.T) {
	_, client := newTestServer(t, runtime.ContentTypeJSON)
	ctx := t.Context()
	if _, err := client.CoreV1().Services("demo").Create(ctx, testService("new", "", nil), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create a Service: %v, want 403", err)
	}
	if _, err := client.CoreV1().Secrets("demo").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("list Secrets: %v, want 404", err)
	}
	if _, err := client.CoreV1().Services("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("an unknown field selector: %v, want 400", err)
	}
	if _, err := client.CoreV1().Services("demo").Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get a missing Service: %v, want 404", err)
	}
	if _, err := client.CoreV1().Services("").Watch(ctx, metav1.ListOptions{ResourceVersion: "1"}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("watch from a resourceVersion before the state: %v, want 410", err)
	}
	for _, timeout := range []string{"abc", "-1"} {
		result := client.CoreV1().RESTClient().Get().Resource("services").Param("watch", "true").Param("timeoutSeconds", timeout).Do(ctx)
		if err := result.Error(); !apierrors.IsBadRequest(err) {
			t.Errorf("timeoutSeconds=%s: %v, want 400", timeout, err)
		}
	}
	if _, err := client.Discovery().ServerVersion(); err == nil {
		t.Error("discovery was not forwarded upstream")
	}
}

// Until the state is read upstream or loaded from the cache, kube-proxy gets
// a 503 it retries after Retry-After, not an empty state that would make it
// remove every rule of the node.
func TestServerAnswers503UntilSynced(t *testing.T) {
	state := NewState(1, nil)
	server := NewServer("edge-1", state, http.NotFoundHandler())
	get := func(path string) *httptest.ResponseRecorder {
		// A watch that is served streams until its client leaves.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		rec := httptest.NewRecorder()
		server.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "http://wrapper"+path, nil))
		return rec
	}
	paths := []string{
		"/api/v1/services", "/api/v1/services?watch=true", "/api/v1/namespaces/demo/services/echo",
		"/apis/discovery.k8s.io/v1/endpointslices?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan",
		"/api/v1/endpoints", "/api/v1/nodes?fieldSelector=metadata.name%3Dedge-1", "/apis/networking.k8s.io/v1/servicecidrs",
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			rec := get(path)
			var status metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil {
				t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
			}
			if rec.Code != http.StatusServiceUnavailable || status.Reason != metav1.StatusReasonServiceUnavailable ||
				rec.Header().Get("Retry-After") != strconv.Itoa(notSyncedRetryAfter) {
				t.Errorf("%d Retry-After %q %+v, want 503 ServiceUnavailable with Retry-After", rec.Code, rec.Header().Get("Retry-After"), status)
			}
		})
	}
	if rec := get("/readyz"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz %d before the state is synced", rec.Code)
	}

	state.Replace(services, []runtime.Object{testService("echo", "10.96.0.10", nil)})
	state.MarkSynced()
	if rec := get("/api/v1/namespaces/demo/services/echo"); rec.Code != http.StatusOK {
		t.Errorf("get a Service once synced: %d %s", rec.Code, rec.Body)
	}
	if rec := get("/readyz"); rec.Code != http.StatusOK {
		t.Errorf("readyz %d once synced", rec.Code)
	}
}

// flushCounter counts the flushes that reach the connection.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++ }

// A watch resumed behind a burst of changes flushes its headers, then once
// the burst is written, not after each of its events.
func TestWatchFlushesAtTheEndOfABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state := NewState(100, []runtime.Object{testService("echo", "10.96.0.10", nil)})
		const changes = 50
		for i := range changes {
			svc := testService("echo", "10.96.1."+strconv.Itoa(i+1), nil)
			svc.ResourceVersion = strconv.Itoa(8 + i)
			state.Set(svc)
		}
		req := httptest.NewRequest(http.MethodGet, "/api/v1/services?watch=true&resourceVersion=100&timeoutSeconds=10", nil)
		rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
		NewServer("edge-1", state, http.NotFoundHandler()).ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("watch answered %d: %s", rec.Code, rec.Body)
		}
		if events := strings.Count(rec.Body.String(), "\n"); events != changes {
			t.Fatalf("the watch sent %d events, want the %d changes", events, changes)
		}
		// The headers, the event before the last (the last one was on its
		// way, the queue empty) and the last.
		if rec.flushes > 3 {
			t.Errorf("%d events sent with %d flushes, want at most 3", changes, rec.flushes)
		}
	})
}
