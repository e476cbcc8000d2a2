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
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
)

// Event writes reach the cluster with the node's credentials, so only what
// kube-proxy writes passes: the creation of an events.k8s.io/v1 Event about
// this Node, in the namespace client-go's events library puts an Event about
// a cluster-scoped object.
const (
	eventNamespace = metav1.NamespaceDefault
	maxEventBytes  = 64 << 10
	// The budget client-go's spam filter gives one source for one object:
	// 25 Events, then one every five minutes. Every Event that passes is
	// about the same object, this Node.
	eventBurst    = 25
	eventInterval = 5 * time.Minute
	// kube-proxy names itself so to its recorder (NewRecorder(scheme,
	// "kube-proxy") in cmd/kube-proxy); an Event that names another reporter,
	// the kubelet's NodeNotReady say, would be written with the node's
	// credentials in a component's name that did not report it.
	kubeProxyController = "kube-proxy"
)

var eventsResource = eventsv1.SchemeGroupVersion.WithResource("events")

// eventGate decides which Event writes go upstream.
type eventGate struct {
	node   string
	codecs serializer.CodecFactory
	budget *eventBudget
}

func newEventGate(node string, codecs serializer.CodecFactory) *eventGate {
	return &eventGate{node: node, codecs: codecs, budget: newEventBudget(time.Now)}
}

// forward sends an admitted Event write upstream. Only a write upstream
// answers 2xx created an Event, so only that one keeps its token: writes
// refused upstream, or lost while the WAN is down, must not leave kube-proxy
// without a budget for the Events it reports once the WAN is back.
func (g *eventGate) forward(w http.ResponseWriter, req *http.Request, upstream http.Handler) {
	status := &statusWriter{ResponseWriter: w}
	upstream.ServeHTTP(status, req)
	if status.code < 200 || status.code > 299 {
		g.budget.refund()
	}
}

// admit checks an Event write, takes a token for it and leaves its body for
// forwarding. Only an Event that would pass takes a token, so that refused
// writes cannot use up kube-proxy's.
func (g *eventGate) admit(w http.ResponseWriter, req *http.Request) error {
	group, namespace, name, _ := eventPath(req.URL.Path)
	if req.Method != http.MethodPost || name != "" || group != eventsResource.Group || namespace != eventNamespace {
		return g.forbidden(name, fmt.Errorf("%s %s is not allowed: it forwards only the creation (POST) of %s Events in namespace %s",
			req.Method, req.URL.Path, eventsv1.SchemeGroupVersion, eventNamespace))
	}
	// A dry run creates nothing, yet would pass and take a token;
	// kube-proxy never sends one.
	if _, dryRun := req.URL.Query()["dryRun"]; dryRun {
		return g.forbidden(name, fmt.Errorf("a dry run is not allowed: kube-proxy creates its Events"))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxEventBytes))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("an Event forwarded by gridview-wrapper is at most %d bytes", maxEventBytes))
	}
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("reading the body: %v", err))
	}
	event, err := g.decode(req.Header.Get("Content-Type"), body)
	if err != nil {
		return err
	}
	if err := g.aboutThisNode(event); err != nil {
		return g.forbidden(event.Name, err)
	}
	if delay := g.budget.take(); delay > 0 {
		return apierrors.NewTooManyRequests(fmt.Sprintf("gridview-wrapper forwards at most %d Events, then one every %s", eventBurst, eventInterval),
			int(math.Ceil(delay.Seconds())))
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return nil
}

// eventBudget is a token bucket of eventBurst tokens, one more every
// eventInterval. rate.Limiter cannot take back a token once its reservation
// is due, and a forwarded write is only known to have created nothing after
// upstream answers.
type eventBudget struct {
	now    func() time.Time
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newEventBudget(now func() time.Time) *eventBudget {
	return &eventBudget{now: now, tokens: eventBurst, last: now()}
}

// take takes a token, or says how long until one is there.
func (b *eventBudget) take() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.tokens = math.Min(eventBurst, b.tokens+float64(now.Sub(b.last))/float64(eventInterval))
	b.last = now
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) * float64(eventInterval))
	}
	b.tokens--
	return 0
}

func (b *eventBudget) refund() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = math.Min(eventBurst, b.tokens+1)
}

// statusWriter keeps the status of the answer it writes.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap lets httputil.ReverseProxy flush through to the caller.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// decode reads the body as kube-apiserver will, by its Content-Type, so that
// what is checked is what is created.
func (g *eventGate) decode(contentType string, body []byte) (*eventsv1.Event, error) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, negotiation.NewUnsupportedMediaTypeError(supportedMediaTypes(g.codecs))
	}
	info, ok := runtime.SerializerInfoForMediaType(g.codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, negotiation.NewUnsupportedMediaTypeError(supportedMediaTypes(g.codecs))
	}
	gvk := eventsv1.SchemeGroupVersion.WithKind("Event")
	obj, _, err := info.Serializer.Decode(body, &gvk, &eventsv1.Event{})
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is not an Event: %.200v", err))
	}
	event, ok := obj.(*eventsv1.Event)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %s, not an %s Event", obj.GetObjectKind().GroupVersionKind(), eventsv1.SchemeGroupVersion))
	}
	return event, nil
}

func supportedMediaTypes(codecs serializer.CodecFactory) []string {
	var out []string
	for _, info := range codecs.SupportedMediaTypes() {
		out = append(out, info.MediaType)
	}
	return out
}

// aboutThisNode says why an Event is not one kube-proxy writes: kube-proxy
// reports, as itself, about its Node only, and relates it to nothing.
func (g *eventGate) aboutThisNode(event *eventsv1.Event) error {
	regarding := event.Regarding
	switch {
	case event.ReportingController != kubeProxyController:
		return fmt.Errorf("the Event is reported by %q: only Events kube-proxy reports, as %q, are forwarded", event.ReportingController, kubeProxyController)
	case event.DeprecatedSource.Component != "" && event.DeprecatedSource.Component != kubeProxyController:
		return fmt.Errorf("the Event's deprecatedSource is component %q: only Events kube-proxy reports, as %q, are forwarded", event.DeprecatedSource.Component, kubeProxyController)
	case event.Namespace != "" && event.Namespace != eventNamespace:
		return fmt.Errorf("the Event is in namespace %q: only kube-proxy's Events, in namespace %s, are forwarded", event.Namespace, eventNamespace)
	case regarding.Kind != "Node" || regarding.APIVersion != "" && regarding.APIVersion != "v1" || regarding.Namespace != "" || regarding.Name != g.node:
		return fmt.Errorf("the Event regards %s %s %s/%s: only kube-proxy's Events about Node %s are forwarded",
			regarding.APIVersion, regarding.Kind, regarding.Namespace, regarding.Name, g.node)
	case event.Related != nil:
		return fmt.Errorf("the Event relates to %s %s/%s: kube-proxy's Events relate to nothing", event.Related.Kind, event.Related.Namespace, event.Related.Name)
	}
	return nil
}

func (g *eventGate) forbidden(name string, err error) error {
	return apierrors.NewForbidden(eventsResource.GroupResource(), name, fmt.Errorf("gridview-wrapper lends the node's credentials to kube-proxy's Events only: %w", err))
}

// eventPath reads the group, namespace and name of an Event path, core
// (/api/v1/namespaces/<ns>/events[/<name>]) or events.k8s.io
// (/apis/events.k8s.io/v1/...); false when the path names no Events.
func eventPath(path string) (group, namespace, name string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 5 && parts[0] == "api" && parts[1] == "v1":
		parts = parts[2:]
	case len(parts) >= 6 && parts[0] == "apis" && parts[1] == eventsResource.Group && parts[2] == eventsResource.Version:
		group, parts = eventsResource.Group, parts[3:]
	default:
		return "", "", "", false
	}
	if parts[0] != "namespaces" || parts[1] == "" || parts[2] != "events" || len(parts) > 4 || len(parts) == 4 && parts[3] == "" {
		return "", "", "", false
	}
	if len(parts) == 4 {
		name = parts[3]
	}
	return group, parts[1], name, true
}
