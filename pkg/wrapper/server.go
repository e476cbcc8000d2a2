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
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/gridview/gridview/pkg/watchstream"
)

// Server serves kube-proxy what the state holds, and forwards discovery and
// kube-proxy's Events upstream.
type Server struct {
	state    *State
	upstream http.Handler
	events   *eventGate
	codecs   serializer.CodecFactory
	metrics  http.Handler
}

// NewServer serves node's kube-proxy state; upstream handles forwarded
// requests.
func NewServer(node string, state *State, upstream http.Handler) *Server {
	codecs := serializer.NewCodecFactory(wrapperScheme)
	return &Server{state: state, upstream: upstream, events: newEventGate(node, codecs), codecs: codecs, metrics: legacyregistry.Handler()}
}

// notSyncedRetryAfter is when kube-proxy asks again while the wrapper has
// no state.
const notSyncedRetryAfter = 5

func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w = countingWriter{ResponseWriter: w}
	switch req.URL.Path {
	case "/healthz", "/livez":
		_, _ = w.Write([]byte("ok"))
		return
	case "/readyz":
		if !s.state.Synced() {
			http.Error(w, "no state yet: neither read upstream nor loaded from the cache", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
		return
	case "/metrics":
		s.metrics.ServeHTTP(w, req)
		return
	}
	if forwarded(req) {
		s.upstream.ServeHTTP(w, req)
		return
	}
	if writesEvents(req) {
		if err := s.events.admit(w, req); err != nil {
			s.fail(w, req, err)
			return
		}
		s.events.forward(w, req, s.upstream)
		return
	}
	r, ok := parseRoute(req.URL.Path)
	if !ok || req.Method != http.MethodGet {
		s.fail(w, req, refusal(req))
		return
	}
	// An empty answer would tell kube-proxy that the cluster has no
	// Services, and it would remove every rule of the node; an error keeps
	// its rules as they are while it retries.
	if !s.state.Synced() {
		err := apierrors.NewServiceUnavailable("gridview-wrapper has no state yet: it has neither read the cluster nor loaded its cache")
		err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: notSyncedRetryAfter}
		s.fail(w, req, err)
		return
	}
	gv := r.kind.gvr.GroupVersion()
	opts, err := listOptions(req, r.kind)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	f := &filter{kind: r.kind, namespace: r.namespace, fields: opts.FieldSelector, labels: opts.LabelSelector}
	var obj runtime.Object
	switch {
	case r.name != "":
		obj, err = s.state.Get(r.kind, r.key())
	case opts.Watch:
		s.watch(w, req, f, opts)
		return
	default:
		if s.writeList(w, req, f, opts.ResourceVersion) {
			return
		}
		obj, err = s.state.List(f, opts.ResourceVersion)
	}
	if err != nil {
		s.fail(w, req, err)
		return
	}
	writeObject(s.codecs, gv, w, req, http.StatusOK, obj)
}

func (s *Server) fail(w http.ResponseWriter, req *http.Request, err error) {
	writeError(s.codecs, w, req, err)
}

// listOptions reads the query as kube-apiserver does; a bad value is a 400
// naming the parameter.
func listOptions(req *http.Request, k *kind) (*metainternalversion.ListOptions, error) {
	opts, err := watchstream.DecodeListOptions(req.URL.Query())
	if err != nil {
		return nil, err
	}
	// Lists are served whole, so no token was ever issued: serving the whole
	// list again for one would hide from the client that its token is bad.
	if opts.Continue != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("continue: invalid value %.64q: gridview-wrapper serves whole lists and issues no continue tokens", opts.Continue))
	}
	if opts.FieldSelector != nil {
		for _, requirement := range opts.FieldSelector.Requirements() {
			if !k.supportsField(requirement.Field) {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("fieldSelector: field label not supported for %s: %s", k.gvr.Resource, requirement.Field))
			}
		}
	}
	return opts, nil
}

// watch streams a watch as kube-apiserver does: framed WatchEvents in the
// negotiated encoding, flushed once no more wait, until the client leaves,
// the timeout passes or the stream is cut off.
func (s *Server) watch(w http.ResponseWriter, req *http.Request, f *filter, opts *metainternalversion.ListOptions) {
	info, err := negotiation.NegotiateOutputMediaTypeStream(req, s.codecs, negotiation.DefaultEndpointRestrictions)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	ctx, backlog := watchstream.WithBacklog(req.Context())
	watcher, err := s.state.Watch(ctx, f, watchstream.WatchOptions{
		ResourceVersion: opts.ResourceVersion, SendInitialEvents: opts.SendInitialEvents, Bookmarks: opts.AllowWatchBookmarks,
	})
	if err != nil {
		s.fail(w, req, err)
		return
	}
	defer watcher.Stop()

	gv := f.kind.gvr.GroupVersion()
	embedded := s.codecs.EncoderForVersion(info.Serializer, gv)
	envelope := s.codecs.EncoderForVersion(info.StreamSerializer.Serializer, gv)
	mediaType := info.MediaType
	if mediaType != runtime.ContentTypeJSON {
		mediaType += ";stream=watch"
	}
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	frames := info.StreamSerializer.NewFrameWriter(w)

	var timeout <-chan time.Time
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		timer := time.NewTimer(time.Duration(*opts.TimeoutSeconds) * time.Second)
		defer timer.Stop()
		timeout = timer.C
	}
	for {
		select {
		case <-req.Context().Done():
			return
		case <-timeout:
			return
		case event, ok := <-watcher.ResultChan():
			if !ok {
				return
			}
			object, err := runtime.Encode(embedded, event.Object)
			if err == nil {
				err = envelope.Encode(&metav1.WatchEvent{Type: string(event.Type), Object: runtime.RawExtension{Raw: object}}, frames)
			}
			if err != nil {
				return
			}
			if flusher != nil && !backlog.Waiting() {
				flusher.Flush()
			}
		}
	}
}

// countingWriter counts the bytes sent to kube-proxy.
type countingWriter struct {
	http.ResponseWriter
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	bytesSent.Add(float64(n))
	return n, err
}

func (c countingWriter) Flush() {
	if flusher, ok := c.ResponseWriter.(http.Flusher); ok {
		flusher.Flush()
	}
}
