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
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

const eventsPath = "/apis/events.k8s.io/v1/namespaces/default/events"

// kubeProxyEvent is an Event as kube-proxy's recorder makes it on node.
func kubeProxyEvent(node string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: "default", Name: node + ".1870b9c1d2e3f4a5"},
		Regarding:           corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node},
		Reason:              "Starting",
		Action:              "StartKubeProxy",
		Type:                corev1.EventTypeNormal,
		ReportingController: "kube-proxy",
		ReportingInstance:   "kube-proxy-" + node,
	}
}

// upstreamRecorder stands in for kube-apiserver: it records what reaches it
// and echoes the body back as created.
type upstreamRecorder struct {
	mu       sync.Mutex
	requests []*http.Request
}

func (u *upstreamRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	u.mu.Lock()
	u.requests = append(u.requests, req)
	u.mu.Unlock()
	w.Header().Set("Content-Type", req.Header.Get("Content-Type"))
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

func (u *upstreamRecorder) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.requests)
}

func encode(t *testing.T, mediaType string, obj runtime.Object, gv runtime.GroupVersioner) []byte {
	t.Helper()
	codecs := serializer.NewCodecFactory(scheme.Scheme)
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no serializer for %s", mediaType)
	}
	data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, gv), obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestEventWrites(t *testing.T) {
	const node = "edge-1"
	event := func(change func(*eventsv1.Event)) *eventsv1.Event {
		e := kubeProxyEvent(node)
		change(e)
		return e
	}
	jsonEvent := func(e *eventsv1.Event) []byte {
		return encode(t, runtime.ContentTypeJSON, e, eventsv1.SchemeGroupVersion)
	}
	own := jsonEvent(kubeProxyEvent(node))
	coreEvent := encode(t, runtime.ContentTypeJSON, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: node + ".1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node},
	}, corev1.SchemeGroupVersion)
	huge := jsonEvent(event(func(e *eventsv1.Event) { e.Note = strings.Repeat("x", maxEventBytes) }))
	for _, tc := range []struct {
		name        string
		method      string
		path        string
		contentType string
		body        []byte
		want        int
		wantText    string
	}{
		{name: "kube-proxy's Event in protobuf", body: encode(t, runtime.ContentTypeProtobuf, kubeProxyEvent(node), eventsv1.SchemeGroupVersion),
			contentType: runtime.ContentTypeProtobuf, want: http.StatusCreated},
		{name: "kube-proxy's Event in JSON", body: own, want: http.StatusCreated},
		{name: "about another node", body: jsonEvent(event(func(e *eventsv1.Event) { e.Regarding.Name = "edge-2" })),
			want: http.StatusForbidden, wantText: "v1 Node /edge-2"},
		{name: "about a Pod", body: jsonEvent(event(func(e *eventsv1.Event) {
			e.Regarding = corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: node}
		})), want: http.StatusForbidden, wantText: "v1 Pod default/edge-1"},
		{name: "about a Node of another API", body: jsonEvent(event(func(e *eventsv1.Event) { e.Regarding.APIVersion = "example.com/v1" })),
			want: http.StatusForbidden, wantText: "example.com/v1 Node"},
		{name: "reported by the kubelet", body: jsonEvent(event(func(e *eventsv1.Event) {
			e.ReportingController, e.ReportingInstance, e.Reason, e.Type = "kubelet", node, "NodeNotReady", corev1.EventTypeWarning
		})), want: http.StatusForbidden, wantText: `reported by \"kubelet\"`},
		{name: "reported by no one", body: jsonEvent(event(func(e *eventsv1.Event) { e.ReportingController = "" })),
			want: http.StatusForbidden, wantText: `reported by \"\"`},
		{name: "from the kubelet by its deprecated source", body: jsonEvent(event(func(e *eventsv1.Event) {
			e.DeprecatedSource = corev1.EventSource{Component: "kubelet", Host: node}
		})), want: http.StatusForbidden, wantText: `component \"kubelet\"`},
		{name: "kube-proxy's Event with its deprecated source", body: jsonEvent(event(func(e *eventsv1.Event) {
			e.DeprecatedSource = corev1.EventSource{Component: "kube-proxy", Host: node}
		})), want: http.StatusCreated},
		{name: "related to another object", body: jsonEvent(event(func(e *eventsv1.Event) {
			e.Related = &corev1.ObjectReference{Kind: "Secret", Namespace: "kube-system", Name: "x"}
		})), want: http.StatusForbidden, wantText: "relates to Secret kube-system/x"},
		{name: "in another namespace", path: "/apis/events.k8s.io/v1/namespaces/kube-system/events",
			body: jsonEvent(event(func(e *eventsv1.Event) { e.Namespace = "kube-system" })), want: http.StatusForbidden, wantText: "namespace default"},
		{name: "a body in another namespace than the path's", body: jsonEvent(event(func(e *eventsv1.Event) { e.Namespace = "kube-system" })),
			want: http.StatusForbidden, wantText: "is in namespace"},
		{name: "a core Event", path: "/api/v1/namespaces/default/events", body: coreEvent, want: http.StatusForbidden, wantText: "events.k8s.io/v1"},
		{name: "a core Event to the events.k8s.io path", body: coreEvent, want: http.StatusBadRequest, wantText: "not an events.k8s.io/v1 Event"},
		{name: "an update", method: http.MethodPut, path: eventsPath + "/edge-1.1870b9c1d2e3f4a5", body: own, want: http.StatusForbidden, wantText: "PUT"},
		{name: "a patch", method: http.MethodPatch, path: eventsPath + "/edge-1.1870b9c1d2e3f4a5", contentType: "application/merge-patch+json",
			body: []byte(`{"series":{"count":2}}`), want: http.StatusForbidden, wantText: "PATCH"},
		{name: "a delete", method: http.MethodDelete, path: eventsPath + "/edge-1.1870b9c1d2e3f4a5", want: http.StatusForbidden, wantText: "DELETE"},
		{name: "a delete of the collection", method: http.MethodDelete, want: http.StatusForbidden, wantText: "DELETE"},
		{name: "a dry run", path: eventsPath + "?dryRun=All", body: own, want: http.StatusForbidden, wantText: "dry run"},
		{name: "a dry run without a value", path: eventsPath + "?dryRun", body: own, want: http.StatusForbidden, wantText: "dry run"},
		{name: "a create with a name in the path", path: eventsPath + "/edge-1.1870b9c1d2e3f4a5", body: own, want: http.StatusForbidden},
		{name: "larger than 64 KiB", body: huge, want: http.StatusRequestEntityTooLarge, wantText: "at most 65536 bytes"},
		{name: "not an object", body: []byte("{{{"), want: http.StatusBadRequest, wantText: "not an Event"},
		{name: "an unknown media type", body: own, contentType: "text/plain", want: http.StatusUnsupportedMediaType},
		{name: "no media type", body: own, contentType: "-", want: http.StatusUnsupportedMediaType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := &upstreamRecorder{}
			server := NewServer(node, NewState(1, nil), upstream)
			method, path, contentType := tc.method, tc.path, tc.contentType
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = eventsPath
			}
			req := httptest.NewRequest(method, "http://wrapper"+path, bytes.NewReader(tc.body))
			switch contentType {
			case "":
				req.Header.Set("Content-Type", runtime.ContentTypeJSON)
			case "-":
			default:
				req.Header.Set("Content-Type", contentType)
			}
			rec := httptest.NewRecorder()
			server.ServeHTTP(rec, req)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantText) {
				t.Fatalf("%s %s: %d %s, want %d saying %q", method, path, rec.Code, rec.Body, tc.want, tc.wantText)
			}
			forwarded := tc.want == http.StatusCreated
			if got := upstream.count(); got != map[bool]int{true: 1, false: 0}[forwarded] {
				t.Errorf("%d requests reached upstream, want forwarded=%v", got, forwarded)
			}
			if forwarded && !bytes.Equal(rec.Body.Bytes(), tc.body) {
				t.Errorf("upstream received another body than the one checked")
			}
		})
	}
}

// kube-proxy's own recorder, writing through the wrapper, reaches upstream,
// with the Node reference kube-proxy makes.
func TestKubeProxyRecorderWritesThroughTheWrapper(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nodeRef *corev1.ObjectReference
	}{
		// cmd/kube-proxy/app/server.go in v1.37.2 (newProxyServer).
		{name: "kube-proxy v1.37", nodeRef: &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: "edge-1", Namespace: ""}},
		// Releases before sent no APIVersion and the node's name as UID.
		{name: "an older kube-proxy", nodeRef: &corev1.ObjectReference{Kind: "Node", Name: "edge-1", UID: types.UID("edge-1"), Namespace: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := &upstreamRecorder{}
			server := httptest.NewServer(NewServer("edge-1", NewState(1, nil), upstream))
			t.Cleanup(server.Close)
			client, err := kubernetes.NewForConfig(&rest.Config{Host: server.URL, ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf}})
			if err != nil {
				t.Fatal(err)
			}
			// As kube-proxy builds its recorder.
			broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
			broadcaster.StartRecordingToSink(t.Context().Done())
			defer broadcaster.Shutdown()
			recorder := broadcaster.NewRecorder(scheme.Scheme, "kube-proxy")
			recorder.Eventf(tc.nodeRef, nil, corev1.EventTypeNormal, "Starting", "StartKubeProxy", "")
			err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				return upstream.count() == 1, nil
			})
			if err != nil {
				t.Fatalf("kube-proxy's Event did not reach upstream: %v", err)
			}
		})
	}
}

// A rate limit bounds what passes upstream; refused writes do not use it up.
func TestEventWritesAreRateLimited(t *testing.T) {
	upstream := &upstreamRecorder{}
	server := NewServer("edge-1", NewState(1, nil), upstream)
	post := func(e *eventsv1.Event) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://wrapper"+eventsPath, bytes.NewReader(encode(t, runtime.ContentTypeJSON, e, eventsv1.SchemeGroupVersion)))
		req.Header.Set("Content-Type", runtime.ContentTypeJSON)
		rec := httptest.NewRecorder()
		server.ServeHTTP(rec, req)
		return rec
	}
	for range 2 * eventBurst {
		if rec := post(kubeProxyEvent("edge-2")); rec.Code != http.StatusForbidden {
			t.Fatalf("another node's Event: %d", rec.Code)
		}
	}
	for i := range eventBurst {
		if rec := post(kubeProxyEvent("edge-1")); rec.Code != http.StatusCreated {
			t.Fatalf("Event %d of a burst of %d: %d %s", i+1, eventBurst, rec.Code, rec.Body)
		}
	}
	rec := post(kubeProxyEvent("edge-1"))
	retryAfter, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if rec.Code != http.StatusTooManyRequests || err != nil || retryAfter < 1 {
		t.Errorf("an Event past the burst: %d, Retry-After %q, want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if got := upstream.count(); got != eventBurst {
		t.Errorf("%d Events reached upstream, want %d", got, eventBurst)
	}
}

// Writes that create nothing upstream give their token back: a WAN outage
// or refusals upstream do not leave kube-proxy without a budget.
func TestEventWritesCreatingNothingKeepTheBudget(t *testing.T) {
	unreachable := httptest.NewServer(http.NotFoundHandler())
	unreachable.Close()
	down, err := NewForwarder(&rest.Config{Host: unreachable.URL})
	if err != nil {
		t.Fatal(err)
	}
	answering := func(code int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) })
	}
	for _, tc := range []struct {
		name     string
		upstream http.Handler
	}{
		{name: "the WAN down", upstream: down},
		{name: "upstream failing", upstream: answering(http.StatusInternalServerError)},
		{name: "upstream refusing", upstream: answering(http.StatusConflict)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := tc.upstream
			created := &upstreamRecorder{}
			server := NewServer("edge-1", NewState(1, nil), http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { up.ServeHTTP(w, req) }))
			post := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodPost, "http://wrapper"+eventsPath, bytes.NewReader(encode(t, runtime.ContentTypeJSON, kubeProxyEvent("edge-1"), eventsv1.SchemeGroupVersion)))
				req.Header.Set("Content-Type", runtime.ContentTypeJSON)
				rec := httptest.NewRecorder()
				server.ServeHTTP(rec, req)
				return rec
			}
			for i := range 2 * eventBurst {
				if rec := post(); rec.Code < 300 || rec.Code == http.StatusTooManyRequests {
					t.Fatalf("Event %d while upstream creates nothing: %d %s", i+1, rec.Code, rec.Body)
				}
			}
			up = created
			for i := range eventBurst {
				if rec := post(); rec.Code != http.StatusCreated {
					t.Fatalf("Event %d of a burst of %d once upstream creates: %d %s", i+1, eventBurst, rec.Code, rec.Body)
				}
			}
			if rec := post(); rec.Code != http.StatusTooManyRequests {
				t.Errorf("an Event past the burst: %d, want 429", rec.Code)
			}
			if got := created.count(); got != eventBurst {
				t.Errorf("%d Events created upstream, want %d", got, eventBurst)
			}
		})
	}
}

// What reaches upstream carries the wrapper's credentials only: a local
// caller's credentials, impersonation and front-proxy identity are dropped.
func TestForwarderDropsCallerCredentials(t *testing.T) {
	var mu sync.Mutex
	var received []http.Header
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		received = append(received, req.Header.Clone())
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(upstream.Close)
	forwarder, err := NewForwarder(&rest.Config{Host: upstream.URL})
	if err != nil {
		t.Fatal(err)
	}
	server := NewServer("edge-1", NewState(1, nil), forwarder)
	own := encode(t, runtime.ContentTypeJSON, kubeProxyEvent("edge-1"), eventsv1.SchemeGroupVersion)
	for _, tc := range []struct {
		name, method, path string
		body               []byte
	}{
		{name: "discovery", method: http.MethodGet, path: "/version"},
		{name: "kube-proxy's Event", method: http.MethodPost, path: eventsPath, body: own},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://wrapper"+tc.path, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", runtime.ContentTypeJSON)
			for _, key := range []string{"Authorization", "Impersonate-User", "Impersonate-Group", "Impersonate-Uid", "Impersonate-Extra-Scopes",
				"X-Remote-User", "X-Remote-Group", "X-Remote-Uid", "X-Remote-Extra-Scopes"} {
				req.Header.Add(key, "system:admin")
			}
			req.Header["impersonate-group"] = []string{"system:masters"} // not in canonical form
			req.Header["x-remote-group"] = []string{"system:masters"}
			rec := httptest.NewRecorder()
			server.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			mu.Lock()
			got := received[len(received)-1]
			mu.Unlock()
			for key := range got {
				lower := strings.ToLower(key)
				if lower == "authorization" || strings.HasPrefix(lower, "impersonate-") || strings.HasPrefix(lower, "x-remote-") {
					t.Errorf("upstream received %s: %q", key, got[key])
				}
			}
		})
	}
}

// The budget gives one Event every eventInterval past the burst, and a
// refund never raises it above the burst.
func TestEventBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		refunds   int
		after     time.Duration
		wantDelay time.Duration
	}{
		{name: "right after the burst", wantDelay: eventInterval},
		{name: "part of an interval later", after: eventInterval / 5, wantDelay: eventInterval * 4 / 5},
		{name: "an interval later", after: eventInterval},
		{name: "a refund", refunds: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			budget := newEventBudget(func() time.Time { return now })
			budget.refund() // a full budget stays at the burst
			for i := range eventBurst {
				if delay := budget.take(); delay != 0 {
					t.Fatalf("token %d of %d: wait %s", i+1, eventBurst, delay)
				}
			}
			for range tc.refunds {
				budget.refund()
			}
			now = now.Add(tc.after)
			if delay := budget.take(); delay != tc.wantDelay {
				t.Errorf("the next token: wait %s, want %s", delay, tc.wantDelay)
			}
		})
	}
}
