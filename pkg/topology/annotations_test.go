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

package topology

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestParseTopologyKeys(t *testing.T) {
	tests := []struct {
		value   string
		want    []string
		wantErr string
	}{
		{value: `["superedge.io/nodeunit"]`, want: []string{"superedge.io/nodeunit"}},
		{value: `["zone","unit"]`, want: []string{"zone", "unit"}},
		{value: `[]`, wantErr: "lists no node label key"},
		{value: `["unit"`, wantErr: "must be a JSON array"},
		{value: `"unit"`, wantErr: "must be a JSON array"},
		{value: `["unit","unit"]`, want: []string{"unit"}},
		{value: `["zone","unit","zone","unit"]`, want: []string{"zone", "unit"}},
		{value: `["unit","unit","bad key"]`, wantErr: `key "bad key"`},
		{value: `["*","*"]`, want: []string{"*"}},
		{value: `["*"]`, want: []string{"*"}},
		{value: `["unit","zone","*"]`, want: []string{"unit", "zone", "*"}},
		{value: `["unit","*","*"]`, want: []string{"unit", "*"}},
		{value: `["*","unit"]`, wantErr: "must come last"},
		{value: `["unit","*","zone"]`, wantErr: `"*" must come last, the 1 keys after it are never used`},
		{value: `["bad key"]`, wantErr: `key "bad key"`},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			got, err := ParseTopologyKeys(tc.value)
			checkParse(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestParseGridviewKeys(t *testing.T) {
	tests := []struct {
		value   string
		want    []string
		wantErr string
	}{
		{value: "superedge.io/nodeunit,topology.kubernetes.io/zone,*", want: []string{"superedge.io/nodeunit", "topology.kubernetes.io/zone", "*"}},
		{value: " unit , kubernetes.io/hostname ", want: []string{"unit", "kubernetes.io/hostname"}},
		{value: "*", want: []string{"*"}},
		{value: "", wantErr: "lists no node label key"},
		{value: "unit,,zone", wantErr: `key ""`},
		{value: "*,unit", wantErr: "must come last"},
		{value: "unit,unit", want: []string{"unit"}},
		{value: " unit ,zone, unit,*", want: []string{"unit", "zone", "*"}},
		{value: "unit,*,*", want: []string{"unit", "*"}},
		{value: "*,*", want: []string{"*"}},
		{value: "*,unit,*", wantErr: "must come last"},
		{value: "unit,unit,bad key", wantErr: `key "bad key"`},
		{value: "bad key", wantErr: `key "bad key"`},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			got, err := ParseGridviewKeys(tc.value)
			checkParse(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestParseName(t *testing.T) {
	tests := []struct {
		name, node, service, wantErr string
	}{
		{name: "edge-1..echo-svc-x7k2p", node: "edge-1", service: "echo-svc-x7k2p"},
		{name: "edge-1.example.com..echo.svc.v1", node: "edge-1.example.com", service: "echo.svc.v1"},
		{name: "edge-1.echo-svc", wantErr: "not <node>..<endpointslice>"},
		{name: "edge-1", wantErr: "not <node>..<endpointslice>"},
		{name: "..echo-svc", wantErr: "node"},
		{name: "edge-1..", wantErr: "endpointslice"},
		{name: "edge-1...echo-svc", wantErr: "endpointslice"},
		{name: "edge-1..echo..svc", wantErr: "endpointslice"},
		{name: "Edge_1..echo-svc", wantErr: "node"},
		{name: "edge-1..Echo_svc", wantErr: "endpointslice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node, service, err := ParseName(tc.name)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || node != tc.node || service != tc.service {
				t.Fatalf("ParseName = %q, %q, %v; want %q, %q", node, service, err, tc.node, tc.service)
			}
			if Name(node, service) != tc.name {
				t.Errorf("Name(%q, %q) = %q, want %q", node, service, Name(node, service), tc.name)
			}
		})
	}
}

func checkParse(t *testing.T, got []string, err error, want []string, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want one containing %q", err, wantErr)
		}
		return
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

func FuzzParseTopologyKeys(f *testing.F) {
	for _, seed := range []string{`["unit"]`, `[]`, `["a","a"]`, `[1]`, `null`, `["unit","*"]`, `["*"]`, `["*","unit"]`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		keys, err := ParseTopologyKeys(value)
		if err != nil {
			return
		}
		// Accepted keys survive a round trip and are usable label keys,
		// with "*", the fallback set, only last.
		data, _ := json.Marshal(keys)
		again, err := ParseTopologyKeys(string(data))
		if err != nil || !slices.Equal(keys, again) || len(keys) == 0 {
			t.Fatalf("%q parsed to %q, round trip %q, %v", value, keys, again, err)
		}
		if i := slices.Index(keys, KeyAny); i >= 0 && i != len(keys)-1 {
			t.Fatalf("%q parsed to %q with %q before the end", value, keys, KeyAny)
		}
	})
}

func FuzzParseGridviewKeys(f *testing.F) {
	for _, seed := range []string{"unit,zone,*", "*", "", ",", "*,a", " a , b "} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		keys, err := ParseGridviewKeys(value)
		if err != nil {
			return
		}
		again, err := ParseGridviewKeys(strings.Join(keys, ","))
		if err != nil || !slices.Equal(keys, again) || len(keys) == 0 {
			t.Fatalf("%q parsed to %q, round trip %q, %v", value, keys, again, err)
		}
		if i := slices.Index(keys, KeyAny); i >= 0 && i != len(keys)-1 {
			t.Fatalf("%q parsed to %q with %q before the end", value, keys, KeyAny)
		}
	})
}

// A name parses to one node and one slice only: both are DNS subdomains,
// which never hold "..", and they name it again.
func FuzzParseName(f *testing.F) {
	for _, seed := range []string{"edge-1..echo-svc-abcde", "a.b..c.d", "0..0.0", "..", "x..", "..y", "a...b", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		node, slice, err := ParseName(name)
		if err != nil {
			return
		}
		if Name(node, slice) != name || strings.Contains(node, "..") || strings.Contains(slice, "..") {
			t.Fatalf("%q parsed to node %q, slice %q", name, node, slice)
		}
	})
}
