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
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var testMeta = metadata{
	Version:  "v1.2.3",
	Revision: "0123456789abcdef0123456789abcdef01234567",
	Source:   "https://example.com/gridview",
	Created:  time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
}

// fakeBinaries stand in for the compiled commands: the images do not look
// inside them.
func fakeBinaries(cmdName string) [][]byte {
	var binaries [][]byte
	for _, p := range platforms {
		binaries = append(binaries, []byte("\x7fELF "+cmdName+" for "+p.Architecture))
	}
	return binaries
}

func testIndex(t *testing.T, cmdName string, binaries [][]byte, meta metadata) v1.ImageIndex {
	t.Helper()
	idx, err := assembleIndex(cmdName, binaries, meta)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// platformImages returns the index's images by "os/arch", failing on any
// other media type than OCI's.
func platformImages(t *testing.T, idx v1.ImageIndex) map[string]v1.Image {
	t.Helper()
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if manifest.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", manifest.MediaType, types.OCIImageIndex)
	}
	images := map[string]v1.Image{}
	for _, desc := range manifest.Manifests {
		if desc.MediaType != types.OCIManifestSchema1 || desc.Platform == nil {
			t.Fatalf("index entry %+v: want an OCI manifest with a platform", desc)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		images[desc.Platform.OS+"/"+desc.Platform.Architecture] = img
	}
	return images
}

func TestImageConfig(t *testing.T) {
	for _, cmdName := range commands {
		t.Run(cmdName, func(t *testing.T) {
			images := platformImages(t, testIndex(t, cmdName, fakeBinaries(cmdName), testMeta))
			if got, want := slices.Sorted(maps.Keys(images)), []string{"linux/amd64", "linux/arm64"}; !slices.Equal(got, want) {
				t.Fatalf("platforms %v, want %v", got, want)
			}
			for platform, img := range images {
				cfg, err := img.ConfigFile()
				if err != nil {
					t.Fatal(err)
				}
				if got := cfg.OS + "/" + cfg.Architecture; got != platform {
					t.Errorf("%s: config for %s", platform, got)
				}
				if cfg.Config.User != "65532:65532" {
					t.Errorf("%s: user %q, want 65532:65532", platform, cfg.Config.User)
				}
				if want := []string{"/usr/local/bin/" + cmdName}; !slices.Equal(cfg.Config.Entrypoint, want) || len(cfg.Config.Cmd) > 0 {
					t.Errorf("%s: entrypoint %q cmd %q, want %q alone", platform, cfg.Config.Entrypoint, cfg.Config.Cmd, want)
				}
				wantLabels := map[string]string{
					"org.opencontainers.image.source":   testMeta.Source,
					"org.opencontainers.image.revision": testMeta.Revision,
					"org.opencontainers.image.version":  testMeta.Version,
					"org.opencontainers.image.created":  "2026-11-30T12:00:00Z",
				}
				if !maps.Equal(cfg.Config.Labels, wantLabels) {
					t.Errorf("%s: labels %v, want %v", platform, cfg.Config.Labels, wantLabels)
				}
				if !cfg.Created.Equal(testMeta.Created) {
					t.Errorf("%s: created %s, want %s", platform, cfg.Created, testMeta.Created)
				}
			}
		})
	}
}

// TestLayerHoldsTheBinaryAlone checks the image's whole filesystem: the
// binary, root-owned and with fixed modes and times, and its directories;
// no shell, nothing else to run.
func TestLayerHoldsTheBinaryAlone(t *testing.T) {
	binaries := fakeBinaries("gridview-wrapper")
	images := platformImages(t, testIndex(t, "gridview-wrapper", binaries, testMeta))
	for i, p := range platforms {
		platform := p.OS + "/" + p.Architecture
		t.Run(platform, func(t *testing.T) {
			files := extract(t, images[platform])
			want := map[string]string{
				"usr":                            "dir 0755 0:0",
				"usr/local":                      "dir 0755 0:0",
				"usr/local/bin":                  "dir 0755 0:0",
				"usr/local/bin/gridview-wrapper": "file 0755 0:0 " + string(binaries[i]),
			}
			if !maps.Equal(files, want) {
				t.Errorf("filesystem %q, want %q", files, want)
			}
		})
	}
}

// extract describes every entry of the image's flattened filesystem,
// failing on an mtime other than testMeta's.
func extract(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]string{}
	r := tar.NewReader(rc)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(testMeta.Created) {
			t.Errorf("%s: mtime %s, want %s", h.Name, h.ModTime, testMeta.Created)
		}
		kind := map[byte]string{tar.TypeDir: "dir", tar.TypeReg: "file"}[h.Typeflag]
		if kind == "" {
			kind = "type " + string(h.Typeflag)
		}
		var content bytes.Buffer
		if _, err := io.Copy(&content, r); err != nil {
			t.Fatal(err)
		}
		files[h.Name] = fmt.Sprintf("%s %04o %d:%d", kind, h.Mode, h.Uid, h.Gid)
		if kind == "file" {
			files[h.Name] += " " + content.String()
		}
	}
}

// TestReproducible assembles the same inputs twice, and inputs that differ
// in one thing each, which must change the digest.
func TestReproducible(t *testing.T) {
	binaries := fakeBinaries("gridview-apiserver")
	digest := func(binaries [][]byte, meta metadata) v1.Hash {
		t.Helper()
		d, err := testIndex(t, "gridview-apiserver", binaries, meta).Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest(binaries, testMeta)
	if again := digest(fakeBinaries("gridview-apiserver"), testMeta); again != first {
		t.Fatalf("the same inputs gave %s, then %s", first, again)
	}
	otherBinary := slices.Clone(binaries)
	otherBinary[1] = []byte("another arm64 build")
	laterMeta, otherVersion := testMeta, testMeta
	laterMeta.Created = laterMeta.Created.Add(time.Second)
	otherVersion.Version = "v1.2.4"
	for name, tc := range map[string]struct {
		binaries [][]byte
		meta     metadata
	}{
		"another arm64 binary": {otherBinary, testMeta},
		"another created time": {binaries, laterMeta},
		"another version":      {binaries, otherVersion},
	} {
		t.Run(name, func(t *testing.T) {
			if digest(tc.binaries, tc.meta) == first {
				t.Errorf("digest %s unchanged", first)
			}
		})
	}
}

func TestAssembleIndexWantsOneBinaryPerPlatform(t *testing.T) {
	if _, err := assembleIndex("gridview-wrapper", fakeBinaries("gridview-wrapper")[:1], testMeta); err == nil {
		t.Error("an index from one binary for two platforms was assembled")
	}
}
