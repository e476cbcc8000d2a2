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
	"fmt"
	"maps"
	"strings"
	"testing"
)

func TestParseMinReady(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    MinReady
		wantErr string
		// wantFor are minimums For must return.
		wantFor map[string]int
		// wantString is the canonical render.
		wantString string
	}{
		{name: "one integer for every key", value: "2", want: MinReady{Default: 2},
			wantFor: map[string]int{"unit": 2, KeyHostname: 2, KeyAny: 1}, wantString: "2"},
		{name: "per key, the others need one", value: "superedge.io/nodeunit=2, topology.kubernetes.io/zone = 3",
			want:       MinReady{PerKey: map[string]int32{"superedge.io/nodeunit": 2, "topology.kubernetes.io/zone": 3}},
			wantFor:    map[string]int{"superedge.io/nodeunit": 2, "topology.kubernetes.io/zone": 3, "other": 1, KeyAny: 1},
			wantString: "superedge.io/nodeunit=2,topology.kubernetes.io/zone=3"},
		{name: "a default and keys", value: "zone=3,2", want: MinReady{Default: 2, PerKey: map[string]int32{"zone": 3}},
			wantFor: map[string]int{"zone": 3, "unit": 2}, wantString: "2,zone=3"},
		{name: "a default of one is not rendered beside keys", value: "1,zone=3", want: MinReady{Default: 1, PerKey: map[string]int32{"zone": 3}},
			wantString: "zone=3"},
		{name: "bounds", value: "10000,zone=1", want: MinReady{Default: 10000, PerKey: map[string]int32{"zone": 1}}, wantString: "10000,zone=1"},
		{name: "leading zeros", value: "0002", want: MinReady{Default: 2}, wantString: "2"},
		{name: "empty", value: " ", wantErr: "names no minimum"},
		{name: "zero", value: "0", wantErr: `"0": must be an integer from 1 to 10000`},
		{name: "too many", value: "unit=10001", wantErr: `"unit=10001": must be an integer from 1 to 10000`},
		{name: "huge", value: "99999999999999999999", wantErr: "must be an integer"},
		{name: "negative", value: "-2", wantErr: `"-2": must be an integer`},
		{name: "signed", value: "+2", wantErr: `"+2": must be an integer`},
		{name: "not a number", value: "unit=two", wantErr: `"unit=two": must be an integer`},
		{name: "no count", value: "unit=", wantErr: `"unit=": must be an integer`},
		{name: "an empty part", value: "2,,unit=3", wantErr: `"": must be an integer`},
		{name: "two defaults", value: "2,3", wantErr: `"3": a second minimum for every key`},
		{name: "a key twice", value: "unit=2,unit=3", wantErr: `key "unit" named twice`},
		{name: "the last resort", value: "*=2", wantErr: `key "*" is the last resort`},
		{name: "a bad key", value: "bad key=2", wantErr: `key "bad key"`},
		{name: "no key", value: "=2", wantErr: `key ""`},
		{name: "errors are bounded", value: strings.Repeat("x=0,", 100) + "1", wantErr: "95 more errors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMinReady(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), AnnotationMinReady) {
					t.Fatalf("err = %v, want one naming %s and containing %q", err, AnnotationMinReady, tc.wantErr)
				}
				return
			}
			if err != nil || got.Default != tc.want.Default || !maps.Equal(got.PerKey, tc.want.PerKey) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			for key, want := range tc.wantFor {
				if n := got.For(key); n != want {
					t.Errorf("For(%q) = %d, want %d", key, n, want)
				}
			}
			if s := got.String(); s != tc.wantString {
				t.Errorf("String() = %q, want %q", s, tc.wantString)
			}
		})
	}
}

func TestMinReadyString(t *testing.T) {
	tests := []struct {
		name string
		m    MinReady
		want string
	}{
		{name: "zero: one of every tier", m: MinReady{}, want: "1"},
		{name: "a default", m: MinReady{Default: 3}, want: "3"},
		{name: "keys sorted", m: MinReady{PerKey: map[string]int32{"zone": 3, "unit": 2}}, want: "unit=2,zone=3"},
		{name: "both", m: MinReady{Default: 2, PerKey: map[string]int32{"zone": 3}}, want: "2,zone=3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.String(); got != tc.want {
				t.Fatalf("String() = %q, want %q", got, tc.want)
			}
			again, err := ParseMinReady(tc.want)
			if err != nil {
				t.Fatalf("the render %q does not parse: %v", tc.want, err)
			}
			for _, key := range []string{"unit", "zone", "other"} {
				if again.For(key) != tc.m.For(key) {
					t.Errorf("For(%q) after a round trip = %d, want %d", key, again.For(key), tc.m.For(key))
				}
			}
		})
	}
}

func FuzzParseMinReady(f *testing.F) {
	for _, seed := range []string{"2", "unit=2,zone=3", "2,unit=3", "", "0", "=", "*=2", "unit=2,unit=2"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		m, err := ParseMinReady(value)
		if err != nil {
			return
		}
		again, err := ParseMinReady(m.String())
		if err != nil || again.String() != m.String() {
			t.Fatalf("%q parsed to %+v, rendered %q, which parses to %+v, %v", value, m, m.String(), again, err)
		}
		for key, n := range m.PerKey {
			if n < MinReadyLowest || n > MinReadyHighest || again.For(key) != int(n) {
				t.Fatalf("%q parsed to %+v: key %q needs %d", value, m, key, n)
			}
		}
	})
}

// hostileMinReady is a min-ready annotation a test parses.
type hostileMinReady struct {
	name     string
	value    string
	wantKeys int
	wantErr  string
}

// hostileMinReadyAnnotations are huge or repetitive min-ready annotations, up
// to what kube-apiserver accepts.
func hostileMinReadyAnnotations() []hostileMinReady {
	var many []string
	for i := range 10000 {
		many = append(many, fmt.Sprintf("example.com/key-%d=%d", i, 1+i%9))
	}
	return []hostileMinReady{
		{name: "a huge key", value: strings.Repeat("a", 200_000) + "=2", wantErr: "bytes)"},
		{name: "a huge count", value: "unit=" + strings.Repeat("9", 200_000), wantErr: "bytes): must be an integer"},
		{name: "thousands of bad counts", value: strings.Repeat("unit=x,", 30000) + "1", wantErr: "more errors"},
		{name: "thousands of repeats", value: strings.Repeat("unit=2,", 30000) + "1", wantErr: "more errors"},
		{name: "thousands of keys", value: strings.Join(many, ","), wantKeys: 10000},
	}
}

// Hostile min-ready annotations are refused with a short error, or accepted
// when they are valid however large; how fast is
// BenchmarkParseHostileMinReady's to tell, as a time bound here fails on a
// loaded machine.
func TestParseHostileMinReady(t *testing.T) {
	tests := hostileMinReadyAnnotations()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMinReady(tc.value)
			if tc.wantErr == "" {
				if err != nil || len(m.PerKey) != tc.wantKeys {
					t.Fatalf("got %d keys, %.300v; want %d keys", len(m.PerKey), err, tc.wantKeys)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || len(err.Error()) > 4096 {
				t.Fatalf("err = %.300v (%d bytes), want a short one containing %q", err, len(fmt.Sprint(err)), tc.wantErr)
			}
		})
	}
}

// BenchmarkParseHostileMinReady measures the parsing of each hostile
// annotation: every one should take milliseconds, not seconds.
func BenchmarkParseHostileMinReady(b *testing.B) {
	for _, tc := range hostileMinReadyAnnotations() {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = ParseMinReady(tc.value)
			}
		})
	}
}
