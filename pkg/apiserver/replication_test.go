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
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gridview/gridview/pkg/viewstore"
)

// Following ends when the Lease moves; only a third replica's lead ends the
// watches the follower served, since this replica, leading, holds them.
func TestFollowingEndsWhenTheLeaseMoves(t *testing.T) {
	const followed = "10.0.0.1:443"
	for _, tc := range []struct {
		name      string
		now       string
		another   bool
		wantEnds  bool
		wantCause error
	}{
		{name: "the followed replica leads", now: followed, another: true},
		{name: "this replica leads", wantEnds: true},
		{name: "a third replica leads", now: "10.0.0.3:443", another: true, wantEnds: true, wantCause: viewstore.ErrAnotherLeads},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ends, cause := followingEnds(followed, tc.now, tc.another)
			if ends != tc.wantEnds || !errors.Is(cause, tc.wantCause) || (tc.wantCause == nil) != (cause == nil) {
				t.Errorf("followingEnds = %v, %v; want %v, %v", ends, cause, tc.wantEnds, tc.wantCause)
			}
		})
	}
}

// A replica restarted in place while the Lease names the process before it
// serves no follower its inputs: a follower that loaded them would drop the
// predecessor's history, which every client resumes from, for a numbering
// no client knows.
func TestAReplicaRestartedInPlaceServesNoInputs(t *testing.T) {
	rec := httptest.NewRecorder()
	serveInputs(nil, func() error { return errPredecessorLeads }).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, inputsPath, nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "holds the Lease") {
		t.Errorf("inputs of a replica restarted in place: %d %q, want 503 saying why", rec.Code, rec.Body.String())
	}
}
