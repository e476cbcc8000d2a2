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
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// writeTestOutputs writes gridview-wrapper's outputs to a new directory.
func writeTestOutputs(t *testing.T) (string, v1.ImageIndex) {
	t.Helper()
	out := t.TempDir()
	idx := testIndex(t, "gridview-wrapper", fakeBinaries("gridview-wrapper"), testMeta)
	if err := writeOutputs(out, "gridview-wrapper", testTag(t), idx, testMeta.Created); err != nil {
		t.Fatal(err)
	}
	return out, idx
}

func testTag(t *testing.T) name.Tag {
	t.Helper()
	tag, err := name.NewTag("ghcr.io/gridview/gridview-wrapper:" + testMeta.Version)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

func TestLayoutNamesTheIndex(t *testing.T) {
	out, idx := writeTestOutputs(t)
	top, err := layout.ImageIndexFromPath(filepath.Join(out, "gridview-wrapper"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest.Manifests) != 1 || manifest.Manifests[0].Digest != want {
		t.Fatalf("index.json lists %+v, want the index %s alone", manifest.Manifests, want)
	}
	annotations := manifest.Manifests[0].Annotations
	if annotations[containerdImageName] != "ghcr.io/gridview/gridview-wrapper:v1.2.3" || annotations[ociRefName] != "v1.2.3" {
		t.Errorf("annotations %v: want the image name for ctr and the tag", annotations)
	}
}

// TestArchiveIsTheLayout checks the oci-archive holds the layout's files at
// its root and is the same file when written twice.
func TestArchiveIsTheLayout(t *testing.T) {
	out, _ := writeTestOutputs(t)
	first, err := os.ReadFile(filepath.Join(out, "gridview-wrapper.oci.tar"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	r := tar.NewReader(bytes.NewReader(first))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	for _, want := range []string{"oci-layout", "index.json", "blobs/", "blobs/sha256/"} {
		if !slices.Contains(names, want) {
			t.Errorf("archive entries %q lack %q", names, want)
		}
	}
	again, _ := writeTestOutputs(t)
	if second, err := os.ReadFile(filepath.Join(again, "gridview-wrapper.oci.tar")); err != nil || !bytes.Equal(first, second) {
		t.Errorf("two archives of the same image differ (%v)", err)
	}
}

// TestDockerTarballs reads each platform's docker tarball back by its tag,
// as docker load would.
func TestDockerTarballs(t *testing.T) {
	out, idx := writeTestOutputs(t)
	images := platformImages(t, idx)
	for _, p := range platforms {
		platform := p.OS + "/" + p.Architecture
		t.Run(platform, func(t *testing.T) {
			file := filepath.Join(out, "gridview-wrapper-"+p.OS+"-"+p.Architecture+".docker.tar")
			tag := testTag(t)
			loaded, err := tarball.ImageFromPath(file, &tag)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := loaded.ConfigName()
			if err != nil {
				t.Fatal(err)
			}
			want, err := images[platform].ConfigName()
			if err != nil {
				t.Fatal(err)
			}
			if cfg != want {
				t.Errorf("the tarball's image has config %s, want %s's %s", cfg, platform, want)
			}
		})
	}
}
