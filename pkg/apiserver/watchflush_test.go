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
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/watchstream"
)

// flushCounter counts the flushes that reach the connection.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++ }

type everything struct{}

func (everything) Matches(runtime.Object) bool { return true }
func (everything) Shard() (string, bool)       { return "", false }

// A watch flushes its headers at once, then once a burst has been written,
// not after each of its events, and at once after an event that comes
// alone; other requests flush as they ask. The chain is the server's.
func TestWatchEventsAreFlushedAtTheEndOfABurst(t *testing.T) {
	for _, tc := range []struct {
		name        string
		verb        string
		events      int
		wantFlushes int
	}{
		// The headers' flush, then the flush after the last but one is
		// taken too: the last event was already on its way, the queue
		// empty.
		{name: "a burst of 50", verb: "watch", events: 50, wantFlushes: 1 + 2},
		{name: "one event", verb: "watch", events: 1, wantFlushes: 1 + 1},
		// A list's answer is built whole before it is sent (listSlots).
		{name: "a list", verb: "list", events: 5, wantFlushes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				stream := watchstream.New(1, watchstream.Options{HistorySize: 100, WatcherBuffer: 100})
				// As the generic watch handler: write each event taken,
				// then flush.
				build := func(handler http.Handler, _ *genericapiserver.Config) http.Handler { return handler }
				handler := buildHandlerChain(build, newListSlots(), servingGeneration(0))(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					watcher, err := stream.Watch(req.Context(), everything{}, watchstream.WatchOptions{SendInitialEvents: ptr.To(false)}, nil)
					if err != nil {
						t.Error(err)
						return
					}
					defer watcher.Stop()
					for rv := range tc.events {
						stream.Publish(&watchstream.Event{RV: uint64(rv + 2), Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: strconv.Itoa(rv)}}})
					}
					// The stream begins: its headers go out while the
					// events wait.
					synctest.Wait()
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
					for range tc.events {
						event := <-watcher.ResultChan()
						// Encoding takes a while: the watcher has the next
						// event on its way meanwhile.
						synctest.Wait()
						_, _ = w.Write([]byte(event.Object.(*corev1.ConfigMap).Name))
						w.(http.Flusher).Flush()
					}
				}), nil)
				req := httptest.NewRequest(http.MethodGet, "/apis/topology.gridview.io/v1alpha1/nodeendpoints?watch=true", nil)
				req = req.WithContext(genericapirequest.WithRequestInfo(req.Context(), &genericapirequest.RequestInfo{
					IsResourceRequest: true, Verb: tc.verb, APIGroup: "topology.gridview.io", APIVersion: "v1alpha1", Resource: "nodeendpoints",
				}))
				rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
				handler.ServeHTTP(rec, req)
				if rec.flushes != tc.wantFlushes {
					t.Errorf("%d events written with %d flushes, want %d", tc.events, rec.flushes, tc.wantFlushes)
				}
			})
		})
	}
}
