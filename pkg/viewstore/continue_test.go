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

package viewstore

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Continue tokens come back from clients: whatever they hold, a list answers
// 400 (not a token of ours) or 410 (a token of another state), never a
// panic, never a page of another list's state.
func TestHostileContinueTokens(t *testing.T) {
	s := newTestStore(t, testOptions)
	loadRV := s.stream.RV()
	first, err := s.List(Filter{}, ListOptions{Limit: 2})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, first.Continue)
	}
	valid, err := decodeContinue(first.Continue)
	if err != nil {
		t.Fatal(err)
	}
	raw := func(json string) string { return base64.RawURLEncoding.EncodeToString([]byte(json)) }
	flipped := []byte(first.Continue)
	flipped[len(flipped)/2] ^= 0x01
	tests := []struct {
		name  string
		token string
		want  func(error) bool
	}{
		{name: "empty JSON", token: raw(`{}`), want: apierrors.IsBadRequest},
		{name: "not JSON", token: raw(`not json`), want: apierrors.IsBadRequest},
		{name: "JSON null", token: raw(`null`), want: apierrors.IsBadRequest},
		{name: "a JSON array", token: raw(`[1,2]`), want: apierrors.IsBadRequest},
		{name: "a string resourceVersion", token: raw(`{"rv":"12"}`), want: apierrors.IsBadRequest},
		{name: "a negative resourceVersion", token: raw(`{"rv":-1}`), want: apierrors.IsBadRequest},
		{name: "a resourceVersion past uint64", token: raw(`{"rv":18446744073709551616}`), want: apierrors.IsBadRequest},
		{name: "a fractional resourceVersion", token: raw(`{"rv":1.5}`), want: apierrors.IsBadRequest},
		{name: "a position of the wrong type", token: raw(fmt.Sprintf(`{"rv":%d,"after":"x"}`, valid.RV)), want: apierrors.IsBadRequest},
		{name: "standard base64", token: base64.StdEncoding.EncodeToString([]byte(`{"rv":1}`)) + "==", want: apierrors.IsBadRequest},
		{name: "truncated", token: first.Continue[:len(first.Continue)/2], want: apierrors.IsBadRequest},
		{name: "a flipped bit", token: string(flipped), want: func(err error) bool {
			return err == nil || apierrors.IsBadRequest(err) || apierrors.IsResourceExpired(err)
		}},
		{name: "huge", token: strings.Repeat("A", 1<<20), want: apierrors.IsBadRequest},
		{name: "from the future (another server)", token: continueToken{RV: s.stream.RV() + 1}.encode(), want: apierrors.IsResourceExpired},
		{name: "the largest resourceVersion", token: continueToken{RV: math.MaxUint64}.encode(), want: apierrors.IsResourceExpired},
		{name: "from before the load (another server)", token: continueToken{RV: loadRV - 1}.encode(), want: apierrors.IsResourceExpired},
		{name: "resourceVersion 1", token: continueToken{RV: 1}.encode(), want: apierrors.IsResourceExpired},
		{name: "a position past the end", token: continueToken{RV: valid.RV, After: position{Namespace: "\xff\xff"}}.encode(),
			want: func(err error) bool { return err == nil }},
		{name: "a position of names no object has", token: continueToken{RV: valid.RV, After: position{Namespace: "../..", Node: "\x00", Service: strings.Repeat("z", 10000), Slice: ".."}}.encode(),
			want: func(err error) bool { return err == nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list, err := s.List(Filter{}, ListOptions{Limit: 2, Continue: tc.token})
			if !tc.want(err) {
				t.Fatalf("continue %.60q: %v", tc.token, err)
			}
			if err == nil && list.ResourceVersion != first.ResourceVersion {
				t.Errorf("continued at resourceVersion %s, the first page at %s", list.ResourceVersion, first.ResourceVersion)
			}
			if err != nil && !strings.Contains(err.Error(), "continue") {
				t.Errorf("the error does not name the parameter: %v", err)
			}
		})
	}

	// A token from a state the bounded history no longer holds reads on
	// from the state kept for its list; once that is not kept any more, it
	// has expired.
	for i := range testOptions.HistorySize + 1 {
		s.SetNode(node("edge-3", []string{"a", "b"}[i%2]))
	}
	if _, err := s.List(Filter{Namespace: "other"}, ListOptions{Limit: 2, Continue: first.Continue}); err != nil {
		t.Errorf("continue from before the history, its first page's state kept: %v", err)
	}
	s.paged.forget()
	if _, err := s.List(Filter{Namespace: "other"}, ListOptions{Limit: 2, Continue: first.Continue}); !apierrors.IsResourceExpired(err) {
		t.Errorf("continue from before the history, its first page's state not kept: %v, want 410", err)
	}
}

// FuzzDecodeContinue: whatever a client sends as a continue token, decoding
// it and listing with it never panic; a list answers a page, 400 or 410.
func FuzzDecodeContinue(f *testing.F) {
	for _, seed := range []string{
		continueToken{RV: 1}.encode(),
		continueToken{RV: 42, After: position{Namespace: "demo", Node: "edge-1", Service: "echo"}}.encode(),
		"", "e30", "%%%", "bnVsbA", base64.RawURLEncoding.EncodeToString([]byte(`{"rv":1e30}`)),
	} {
		f.Add(seed)
	}
	var s *Store
	f.Fuzz(func(t *testing.T, value string) {
		token, err := decodeContinue(value)
		if err != nil {
			if !apierrors.IsBadRequest(err) {
				t.Fatalf("decodeContinue(%q): %v, want a 400", value, err)
			}
		} else {
			if token.RV == 0 {
				t.Fatalf("decodeContinue(%q) accepted resourceVersion 0", value)
			}
			again, err := decodeContinue(token.encode())
			if err != nil || again != token {
				t.Fatalf("decodeContinue(%q) = %+v, does not survive a round trip: %+v, %v", value, token, again, err)
			}
		}
		if s == nil {
			s = newTestStore(t, testOptions)
		}
		if value == "" {
			return
		}
		list, err := s.List(Filter{}, ListOptions{Limit: 1, Continue: value})
		switch {
		case err == nil:
			if len(list.Items) > 1 {
				t.Fatalf("continue %q: %d items, limit 1", value, len(list.Items))
			}
		case apierrors.IsBadRequest(err), apierrors.IsResourceExpired(err):
		default:
			t.Fatalf("continue %q: %v, want a page, 400 or 410", value, err)
		}
	})
}
