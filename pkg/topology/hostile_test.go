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

package topology_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// kubeAnnotationsLimit is what kube-apiserver accepts of a Service's
// annotations, keys and values together.
const kubeAnnotationsLimit = 256 * 1024

// manyKeys returns n distinct valid label keys.
func manyKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("example.com/key-%d", i)
	}
	return keys
}

// hostileKeys is a topology key annotation a test parses.
type hostileKeys struct {
	name     string
	parse    func(string) ([]string, error)
	value    string
	wantKeys int
	wantErr  string
}

// hostileKeyAnnotations are malformed, huge or odd key annotations, up to
// what kube-apiserver accepts.
func hostileKeyAnnotations() []hostileKeys {
	jsonOf := func(keys []string) string {
		data, _ := json.Marshal(keys)
		return string(data)
	}
	badKeys := make([]string, 10000)
	for i := range badKeys {
		badKeys[i] = fmt.Sprintf("bad key %d", i)
	}
	hugeKey := strings.Repeat("a", kubeAnnotationsLimit-len(topology.AnnotationTopologyKeys)-4)
	return []hostileKeys{
		{name: "malformed JSON: unterminated", parse: topology.ParseTopologyKeys, value: `["unit"`, wantErr: "must be a JSON array"},
		{name: "malformed JSON: an object", parse: topology.ParseTopologyKeys, value: `{"unit":1}`, wantErr: "must be a JSON array"},
		{name: "malformed JSON: numbers", parse: topology.ParseTopologyKeys, value: `[1,2]`, wantErr: "must be a JSON array"},
		{name: "malformed JSON: null", parse: topology.ParseTopologyKeys, value: `null`, wantErr: "lists no node label key"},
		{name: "malformed JSON: nested", parse: topology.ParseTopologyKeys, value: `[["unit"]]`, wantErr: "must be a JSON array"},
		{name: "malformed JSON: deeply nested", parse: topology.ParseTopologyKeys, value: strings.Repeat("[", 100000), wantErr: "must be a JSON array"},
		{name: "malformed JSON: trailing garbage", parse: topology.ParseTopologyKeys, value: `["unit"]x`, wantErr: "must be a JSON array"},
		{name: "malformed JSON: invalid UTF-8", parse: topology.ParseTopologyKeys, value: "[\"\xff\"]", wantErr: "key"},
		{name: "invalid characters", parse: topology.ParseTopologyKeys, value: `["unit!","a b","-x","x/y/z","UPPER/ok"]`, wantErr: `key "unit!"`},
		{name: "invalid characters, ordered", parse: topology.ParseGridviewKeys, value: "unit;zone", wantErr: `key "unit;zone"`},
		{name: "a control character", parse: topology.ParseGridviewKeys, value: "unit\x00", wantErr: `key "unit\x00"`},
		{name: "a huge key", parse: topology.ParseTopologyKeys, value: `["` + hugeKey + `"]`, wantErr: "bytes)"},
		{name: "a huge ordered key", parse: topology.ParseGridviewKeys, value: hugeKey, wantErr: "bytes)"},
		{name: "thousands of invalid keys", parse: topology.ParseTopologyKeys, value: jsonOf(badKeys), wantErr: "more errors"},
		{name: "thousands of invalid ordered keys", parse: topology.ParseGridviewKeys, value: strings.Join(badKeys, ","), wantErr: "more errors"},
		{name: "thousands of duplicates", parse: topology.ParseGridviewKeys, value: strings.Repeat("unit,", 20000) + "unit", wantKeys: 1},
		{name: "thousands of duplicates, any-match", parse: topology.ParseTopologyKeys, value: jsonOf(slices.Repeat([]string{"unit"}, 20000)), wantKeys: 1},
		{name: "* before thousands of keys", parse: topology.ParseGridviewKeys, value: "*," + strings.Join(manyKeys(10000), ","), wantErr: "the 10000 keys after it"},
		{name: "* before thousands of any-match keys", parse: topology.ParseTopologyKeys, value: jsonOf(append([]string{"*"}, manyKeys(10000)...)), wantErr: "the 10000 keys after it"},
		{name: "thousands of valid keys", parse: topology.ParseTopologyKeys, value: jsonOf(manyKeys(10000)), wantKeys: 10000},
		{name: "thousands of valid keys and *", parse: topology.ParseTopologyKeys, value: jsonOf(append(manyKeys(10000), "*")), wantKeys: 10001},
		{name: "thousands of valid ordered keys", parse: topology.ParseGridviewKeys, value: strings.Join(manyKeys(10000), ",") + ",*", wantKeys: 10001},
	}
}

// Hostile annotations are refused with a short error, or accepted when they
// are valid however large; how fast is BenchmarkParseHostileAnnotations' to
// tell, as a time bound here fails on a loaded machine.
func TestParseHostileAnnotations(t *testing.T) {
	tests := hostileKeyAnnotations()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.value) > kubeAnnotationsLimit {
				t.Fatalf("the value is %d bytes, more than kube-apiserver accepts", len(tc.value))
			}
			keys, err := tc.parse(tc.value)
			if tc.wantErr == "" {
				if err != nil || len(keys) != tc.wantKeys {
					t.Fatalf("got %d keys, %v; want %d keys", len(keys), err, tc.wantKeys)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %.300v, want one containing %q", err, tc.wantErr)
			}
			// The error goes into an Event, the log and memory: it stays short
			// whatever the annotation holds.
			if len(err.Error()) > 4096 {
				t.Errorf("the error is %d bytes long: %.300s...", len(err.Error()), err)
			}
		})
	}
}

// BenchmarkParseHostileAnnotations measures the parsing of each hostile
// annotation: every one should take milliseconds, not seconds.
func BenchmarkParseHostileAnnotations(b *testing.B) {
	for _, tc := range hostileKeyAnnotations() {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = tc.parse(tc.value)
			}
		})
	}
}

// A Service with thousands of keys and a slice of 1,000 endpoints (the most
// an EndpointSlice may hold) is computed right and fast, and so is a change.
func TestThousandsOfKeysAndEndpoints(t *testing.T) {
	keys := manyKeys(5000)
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		mode        topologyapi.TopologyMode
	}{
		{name: "any-match", annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + strings.Join(append(keys, "unit"), `","`) + `"]`}, mode: topologyapi.TopologyModeAnyMatch},
		{name: "any-match with *", annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + strings.Join(append(keys, "unit", "*"), `","`) + `"]`, topology.AnnotationMinReady: "2"}, mode: topologyapi.TopologyModeAnyMatch},
		{name: "ordered", annotations: map[string]string{topology.AnnotationGridviewKeys: strings.Join(append(keys, "unit", "*"), ",")}, mode: topologyapi.TopologyModeOrdered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoints := make([]discoveryv1.Endpoint, 1000)
			nodes := []string{"edge-1", "edge-2", "edge-3", "edge-4", "edge-5"}
			for i := range endpoints {
				endpoints[i] = endpoint(fmt.Sprintf("10.0.%d.%d", i/250, i%250), nodes[i%len(nodes)], true)
			}
			e := twoUnits(tc.annotations, endpoints...)
			view, ok := e.View("edge-1", echo)
			if !ok || view.Topology.Mode != tc.mode || view.Topology.MatchedKey != "unit" {
				t.Fatalf("edge-1's view: %v, %+v", ok, view)
			}
			// Unit a is edge-1 and edge-2: two fifths of the endpoints.
			if got := len(view.Slices[0].Endpoints); got != 400 {
				t.Errorf("edge-1 sees %d endpoints, want 400", got)
			}
			if changes := e.SetNode("edge-4", map[string]string{"unit": "a"}); len(changedKeys(changes, e.Nodes())) != 3 {
				t.Errorf("moving edge-4 into unit a changed %v, want the views of unit a's nodes", changedKeys(changes, e.Nodes()))
			}
			if view, _ := e.View("edge-1", echo); len(view.Slices[0].Endpoints) != 600 {
				t.Errorf("after the move edge-1 sees %d endpoints, want 600", len(view.Slices[0].Endpoints))
			}
		})
	}
}

// A Service whose annotation is huge or malformed in every way is unpruned,
// and its views still come.
func TestHostileAnnotationsLeaveServicesUnpruned(t *testing.T) {
	for _, value := range []string{`[not json`, `["` + strings.Repeat("x", 200*1024) + `"]`, `["a b"]`, `[]`, `null`, `["*","unit"]`} {
		e := twoUnits(map[string]string{topology.AnnotationTopologyKeys: value}, endpoint("a1", "edge-1", true), endpoint("b1", "edge-3", true))
		view, ok := e.View("edge-4", echo)
		if !ok || view.Topology.Mode != topologyapi.TopologyModeNone || len(view.Slices[0].Endpoints) != 2 {
			t.Errorf("%.40q: view %v %+v, want every endpoint", value, ok, view)
		}
		if err := e.Malformed(echo); err == nil || len(err.Error()) > 4096 {
			t.Errorf("%.40q: malformed %.300v", value, err)
		}
		// The Service recovers when its annotation does.
		e.SetService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: echo.Namespace, Name: echo.Name,
			Annotations: map[string]string{topology.AnnotationTopologyKeys: `["unit"]`}}})
		if view, _ := e.View("edge-4", echo); len(view.Slices[0].Endpoints) != 0 || e.Malformed(echo) != nil {
			t.Errorf("%.40q, then fixed: edge-4 sees %v", value, view.Slices[0].Endpoints)
		}
	}
}
