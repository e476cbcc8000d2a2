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

	genericapiserver "k8s.io/apiserver/pkg/server"
)

// buildHandlerChain puts gridview's filters inside the chain build, after
// authentication and authorization: withListParameters, so that only who
// may list learns what is wrong with the query; the bound on lists built at
// once; and the batching of watch events.
func buildHandlerChain(build func(http.Handler, *genericapiserver.Config) http.Handler, slots *listSlots) func(http.Handler, *genericapiserver.Config) http.Handler {
	return func(apiHandler http.Handler, c *genericapiserver.Config) http.Handler {
		return build(withListParameters(slots.wrap(withWatchBatching(apiHandler))), c)
	}
}
