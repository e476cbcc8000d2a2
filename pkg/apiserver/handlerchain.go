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
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/gridview/gridview/pkg/inputlog"
	"github.com/gridview/gridview/pkg/viewstore"
)

// buildHandlerChain puts gridview's filters inside the chain build, after
// authentication and authorization: the refusal of a replica whose engine
// generation no longer serves; withListParameters, so that only who may
// list learns what is wrong with the query; the bound on lists built at
// once; and the batching of watch events.
func buildHandlerChain(build func(http.Handler, *genericapiserver.Config) http.Handler, slots *listSlots, engines generations) func(http.Handler, *genericapiserver.Config) http.Handler {
	return func(apiHandler http.Handler, c *genericapiserver.Config) http.Handler {
		return build(refuseWhileSuperseded(engines, withListParameters(slots.wrap(withWatchBatching(apiHandler)))), c)
	}
}

// refuseWhileSuperseded answers every request of NodeEndpoints with 429
// while another engine generation serves the views (inputlog.Engines):
// this replica's resourceVersions would move its clients to its engine and
// back, one list each time. It closes the connection too (an HTTP/2
// GOAWAY): the aggregator keeps one open to a replica, and would carry the
// client's retry back here; a new one reaches a replica that is ready.
func refuseWhileSuperseded(engines generations, handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := nodeEndpointsRequest(req)
		if !ok {
			handler.ServeHTTP(w, req)
			return
		}
		if err := supersededError(engines); err != nil {
			w.Header().Set("Connection", "close")
			gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
			responsewriters.ErrorNegotiated(err, Codecs, gv, w, req)
			return
		}
		handler.ServeHTTP(w, req)
	})
}

// generations tells whether this replica's engine generation serves the
// views (inputlog.Engines).
type generations interface {
	Superseded() (serving int64, superseded bool)
}

var _ generations = &inputlog.Engines{}

// supersededError is the 429 of a replica whose engine generation another
// replica's superseded, nil while its own serves.
func supersededError(engines generations) error {
	serving, superseded := engines.Superseded()
	if !superseded {
		return nil
	}
	return apierrors.NewTooManyRequests(fmt.Sprintf("this gridview-apiserver runs engine generation %d, and generation %d serves the views "+
		"(a rolling update between gridview versions): another replica serves this request", viewstore.EngineGeneration, serving), 1)
}
