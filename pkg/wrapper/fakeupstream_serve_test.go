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
	"context"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// TestServeEdge10kUpstream serves the fake upstream of one edge-10k node
// over HTTP, for a gridview-wrapper process to measure (RSS, ready time),
// when GRIDVIEW_WRAPPER_FAKE_UPSTREAM names an address; it skips otherwise.
// It serves for GRIDVIEW_WRAPPER_FAKE_UPSTREAM_FOR (a duration, 2m by
// default). docs/performance.md says how the figures were taken.
func TestServeEdge10kUpstream(t *testing.T) {
	addr := os.Getenv("GRIDVIEW_WRAPPER_FAKE_UPSTREAM")
	if addr == "" {
		t.Skip("GRIDVIEW_WRAPPER_FAKE_UPSTREAM is not set")
	}
	serveFor := 2 * time.Minute
	if value := os.Getenv("GRIDVIEW_WRAPPER_FAKE_UPSTREAM_FOR"); value != "" {
		var err error
		if serveFor, err = time.ParseDuration(value); err != nil {
			t.Fatal(err)
		}
	}
	scenario := newNodeScenario(0)
	fake := newFakeUpstream(scenario.objectsAt)
	mux := http.NewServeMux()
	mux.Handle("/", fake)
	// The wrapper's probe.
	mux.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
	})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), serveFor)
	defer cancel()
	server := &http.Server{Handler: mux, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() { _ = server.Serve(l) }()
	t.Logf("serving node %s's upstream on %s for %v", scenario.node, addr, serveFor)
	<-ctx.Done()
	_ = server.Close()
	t.Logf("sent %d bytes, %d responses in protobuf", fake.sent.Load(), fake.protobuf.Load())
}
