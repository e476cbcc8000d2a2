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
	"runtime"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/gridview/gridview/apis/topology"
)

// listQueueTimeout is how long a list waits for a slot before it is told to
// come back: well inside the generic server's one-minute request timeout.
const listQueueTimeout = 30 * time.Second

// listSlots bounds the lists of NodeEndpoints built and encoded at once.
// After a restart every node's watcher gets 410 and relists at the same
// moment; built all at once, those lists held gigabytes (17.6 GB at
// edge-10k) for work the CPUs do a few at a time anyway. A list waits for
// a slot, in arrival order as Go's channel senders are served, and gets 429
// with Retry-After if none frees up in time. API Priority and Fairness does
// not bound them: it charges a list by the objects storage counts, and the
// views are not in storage.
type listSlots chan struct{}

func newListSlots() listSlots {
	return make(listSlots, max(4, 2*runtime.GOMAXPROCS(0)))
}

func (slots listSlots) wrap(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := nodeEndpointsRequest(req)
		if !ok || info.Verb != "list" {
			handler.ServeHTTP(w, req)
			return
		}
		wait := time.NewTimer(listQueueTimeout)
		defer wait.Stop()
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			handler.ServeHTTP(w, req)
		case <-req.Context().Done():
		case <-wait.C:
			gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
			err := apierrors.NewTooManyRequests("too many lists of nodeendpoints are being built; retry", 1)
			responsewriters.ErrorNegotiated(err, Codecs, gv, w, req)
		}
	})
}

// nodeEndpointsRequest returns the request's info when it is a request of
// the nodeendpoints resource itself, which only this replica's views answer.
func nodeEndpointsRequest(req *http.Request) (*genericapirequest.RequestInfo, bool) {
	info, ok := genericapirequest.RequestInfoFrom(req.Context())
	if !ok || !info.IsResourceRequest || info.APIGroup != topology.GroupName ||
		info.Resource != "nodeendpoints" || info.Subresource != "" {
		return nil, false
	}
	return info, true
}
