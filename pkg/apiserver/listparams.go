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

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/gridview/gridview/pkg/watchstream"
)

// withListParameters answers a list or watch whose query cannot be read with
// a 400 that names the bad parameter, before the generic handler does it
// with a message that names none (`strconv.ParseInt: parsing "abc"`), and
// refuses a negative timeoutSeconds, which the generic handler takes for a
// watch that ends at once.
func withListParameters(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := genericapirequest.RequestInfoFrom(req.Context())
		if ok && info.IsResourceRequest && (info.Verb == "list" || info.Verb == "watch") {
			if _, err := watchstream.DecodeListOptions(req.URL.Query()); err != nil {
				gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
				responsewriters.ErrorNegotiated(err, Codecs, gv, w, req)
				return
			}
		}
		handler.ServeHTTP(w, req)
	})
}
