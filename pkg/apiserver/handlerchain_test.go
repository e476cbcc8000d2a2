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
	"testing"

	"github.com/gridview/gridview/pkg/viewstore"
)

// servingGeneration is the engine generation serving (0: none known), as
// inputlog.Engines tells it.
type servingGeneration int64

func (g servingGeneration) Superseded() (int64, bool) {
	return int64(g), g != 0 && int64(g) != viewstore.EngineGeneration
}

// While another engine generation serves, every request of NodeEndpoints
// gets 429 and closes its connection, so that the aggregator's next one
// reaches a replica that serves; other requests pass.
func TestASupersededReplicaRefusesNodeEndpoints(t *testing.T) {
	const (
		views       = "/apis/topology.gridview.io/v1alpha1/namespaces/default/nodeendpoints"
		serviceGrid = "/apis/topology.gridview.io/v1alpha1/namespaces/default/servicegrids"
	)
	for _, tc := range []struct {
		name    string
		serving servingGeneration
		path    string
		refused bool
	}{
		{name: "none announced", serving: 0, path: views},
		{name: "this generation serves", serving: viewstore.EngineGeneration, path: views},
		{name: "another serves: a list", serving: viewstore.EngineGeneration + 1, path: views, refused: true},
		{name: "another serves: a watch", serving: viewstore.EngineGeneration + 1, path: views + "?watch=true", refused: true},
		{name: "another serves: a get", serving: viewstore.EngineGeneration + 1, path: views + "/edge-1..echo", refused: true},
		{name: "another serves: ServiceGrids", serving: viewstore.EngineGeneration + 1, path: serviceGrid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			served := false
			rec, done := serve(t, refuseWhileSuperseded(tc.serving, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true })), tc.path)
			<-done
			if tc.refused {
				if served || rec.Code != http.StatusTooManyRequests || rec.Header().Get("Connection") != "close" || rec.Header().Get("Retry-After") != "1" {
					t.Errorf("served %v, %d, Connection %q, Retry-After %q; want 429 closing the connection, Retry-After 1",
						served, rec.Code, rec.Header().Get("Connection"), rec.Header().Get("Retry-After"))
				}
				return
			}
			if !served {
				t.Errorf("refused: %d %s", rec.Code, rec.Body)
			}
		})
	}
}
