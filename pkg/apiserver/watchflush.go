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

package apiserver

import (
	"net/http"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"

	"github.com/gridview/gridview/pkg/watchstream"
)

// withWatchBatching lets a watch's events leave in full HTTP/2 frames while
// more wait for its client: the generic watch handler flushes after each
// event, which through the aggregator costs a frame, a TLS record and a
// write per event on each hop. The last event of a burst is flushed at once.
func withWatchBatching(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := genericapirequest.RequestInfoFrom(req.Context())
		if !ok || !info.IsResourceRequest || info.Verb != "watch" {
			handler.ServeHTTP(w, req)
			return
		}
		ctx, backlog := watchstream.WithBacklog(req.Context())
		handler.ServeHTTP(responsewriter.WrapForHTTP1Or2(&batchingWriter{ResponseWriter: w, backlog: backlog}), req.WithContext(ctx))
	})
}

// batchingWriter skips the flushes asked for while the watch's client has
// more events coming, but never the one that sends the headers: the client
// waits for them while the watch builds its initial events.
type batchingWriter struct {
	http.ResponseWriter
	backlog   *watchstream.Backlog
	wroteBody bool
}

var (
	_ responsewriter.UserProvidedDecorator = &batchingWriter{}
	_ http.Flusher                         = &batchingWriter{}
)

func (w *batchingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *batchingWriter) Write(p []byte) (int, error) {
	w.wroteBody = true
	return w.ResponseWriter.Write(p)
}

func (w *batchingWriter) Flush() {
	if w.wroteBody && w.backlog.Waiting() {
		return
	}
	if flusher, ok := w.ResponseWriter.(http.Flusher); ok {
		flusher.Flush()
	}
}
