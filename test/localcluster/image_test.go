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

package localcluster

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// writeTestLayout writes a layout as make images does, one image per
// architecture, each holding files and starting entrypoint.
func writeTestLayout(t *testing.T, entrypoint string, files map[string][]byte, archs ...string) string {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, arch := range archs {
		img, err := crane.Image(files)
		if err != nil {
			t.Fatal(err)
		}
		if img, err = mutate.Config(img, v1.Config{Entrypoint: []string{entrypoint}}); err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	dir := filepath.Join(t.TempDir(), "gridview-apiserver")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(mutate.AppendManifests(empty.Index, adds...)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestExtractGridviewBinary(t *testing.T) {
	const entrypoint = "/usr/local/bin/gridview-apiserver"
	files := map[string][]byte{"usr/local/bin/gridview-apiserver": []byte("binary for " + runtime.GOARCH), "etc/motd": []byte("hi")}
	tests := []struct {
		name       string
		layout     string
		wantErr    string
		wantBinary string
	}{
		{name: "this machine's platform", layout: writeTestLayout(t, entrypoint, files, "s390x", runtime.GOARCH), wantBinary: "binary for " + runtime.GOARCH},
		{name: "no image built", layout: filepath.Join(t.TempDir(), "gridview-apiserver"), wantErr: "run `make images`"},
		{name: "another platform only", layout: writeTestLayout(t, entrypoint, files, "s390x"), wantErr: "no image for linux/" + runtime.GOARCH},
		{name: "entrypoint missing", layout: writeTestLayout(t, "/gridview-apiserver", files, runtime.GOARCH), wantErr: "not in the image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binary, origin, err := extractGridviewBinary(tt.layout, t.TempDir())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(binary)
			if err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(binary)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.wantBinary || info.Mode().Perm()&0o111 == 0 || filepath.Base(binary) != "gridview-apiserver" {
				t.Errorf("extracted %s %q (mode %s), want an executable gridview-apiserver %q", binary, got, info.Mode(), tt.wantBinary)
			}
			if !strings.Contains(origin, "linux/"+runtime.GOARCH+" sha256:") {
				t.Errorf("origin %q does not name the platform's image", origin)
			}
		})
	}
}
