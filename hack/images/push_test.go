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

package main

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPushRoundTrip pushes a layout to an in-process registry and pulls the
// index back by its tag: same digest, both platforms pullable.
func TestPushRoundTrip(t *testing.T) {
	server := httptest.NewServer(registry.New())
	defer server.Close()
	out, idx := writeTestOutputs(t)
	registryName := strings.TrimPrefix(server.URL, "http://") + "/gridview"

	var stdout bytes.Buffer
	if err := push(&stdout, out, registryName); err != nil {
		t.Fatal(err)
	}
	want, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(registryName + "/gridview-wrapper:v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != "pushed "+ref.String()+"@"+want.String()+"\n" {
		t.Errorf("push printed %q", got)
	}
	pulled, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := pulled.Digest(); err != nil || got != want {
		t.Fatalf("pulled index %s (%v), want %s", got, err, want)
	}
	for platform, img := range platformImages(t, pulled) {
		if _, err := img.RawConfigFile(); err != nil {
			t.Errorf("%s: %v", platform, err)
		}
	}
}

func TestPushRefuses(t *testing.T) {
	out, _ := writeTestOutputs(t)
	for name, tc := range map[string]struct{ out, registry string }{
		"no layouts":       {t.TempDir(), "localhost:5000/gridview"},
		"invalid registry": {out, "Not A Registry!"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := push(&bytes.Buffer{}, tc.out, tc.registry); err == nil {
				t.Error("push succeeded")
			}
		})
	}
}
