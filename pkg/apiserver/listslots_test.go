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
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// serve runs one request in the background; its recorder is complete once
// done is closed.
func serve(t *testing.T, handler http.Handler, path string) (*httptest.ResponseRecorder, chan struct{}) {
	t.Helper()
	resolver := &genericapirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	req := httptest.NewRequest(http.MethodGet, path, nil)
	info, err := resolver.NewRequestInfo(req)
	if err != nil {
		t.Fatal(err)
	}
	req = req.WithContext(genericapirequest.WithRequestInfo(req.Context(), info))
	rec, done := httptest.NewRecorder(), make(chan struct{})
	go func() {
		defer close(done)
		handler.ServeHTTP(rec, req)
	}()
	return rec, done
}

func TestListsOfNodeEndpointsWaitForASlot(t *testing.T) {
	const views = "/apis/topology.gridview.io/v1alpha1/namespaces/default/nodeendpoints"
	synctest.Test(t, func(t *testing.T) {
		// Lists hold on until released; the rest only count.
		release := make(chan struct{})
		building, others := 0, 0
		handler := make(listSlots, 1).wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.URL.Path != views || req.URL.Query().Has("watch") {
				others++
				return
			}
			building++
			<-release
			building--
		}))

		_, firstDone := serve(t, handler, views)
		synctest.Wait()
		if building != 1 {
			t.Fatalf("%d lists building, want the first", building)
		}
		// A watch, a get and a list of ServiceGrids need no slot.
		for i, path := range []string{views + "?watch=true", views + "/n1..s1", "/apis/topology.gridview.io/v1alpha1/servicegrids"} {
			_, done := serve(t, handler, path)
			synctest.Wait()
			if others != i+1 {
				t.Errorf("%s waits for a slot", path)
			}
			<-done
		}

		second, secondDone := serve(t, handler, views)
		synctest.Wait()
		if building != 1 {
			t.Fatalf("%d lists building, want the second to wait", building)
		}
		time.Sleep(listQueueTimeout)
		<-secondDone
		if second.Code != http.StatusTooManyRequests || second.Header().Get("Retry-After") != "1" {
			t.Errorf("a list that found no slot in time: %d, Retry-After %q; want 429 and 1", second.Code, second.Header().Get("Retry-After"))
		}

		third, thirdDone := serve(t, handler, views)
		synctest.Wait()
		release <- struct{}{}
		<-firstDone
		synctest.Wait()
		if building != 1 {
			t.Errorf("%d lists building after the first ended, want the waiting one", building)
		}
		release <- struct{}{}
		<-thirdDone
		if third.Code != http.StatusOK {
			t.Errorf("the list that got a slot: %d", third.Code)
		}
	})
}
