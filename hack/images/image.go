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
	"fmt"
	"io"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// nonRoot is the user and group the images run as: distroless's "nonroot",
// which the manifests' securityContexts name too.
const nonRoot = "65532:65532"

// binDir is where the binary sits in the image; PATH names it so that a
// debugging `kubectl exec -- NAME --version` finds it.
const binDir = "/usr/local/bin"

// platforms are the architectures every image is built for; edge fleets
// are often arm64.
var platforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"},
	{OS: "linux", Architecture: "arm64"},
}

// metadata is what every image records of its source. Created is also
// every file's mtime: a fixed time, never the wall clock, keeps the digests
// of two builds of the same sources equal.
type metadata struct {
	Version  string
	Revision string
	Source   string
	Created  time.Time
}

// labels are the OCI annotations' keys, as labels of the image config.
func (m metadata) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.source":   m.Source,
		"org.opencontainers.image.revision": m.Revision,
		"org.opencontainers.image.version":  m.Version,
		"org.opencontainers.image.created":  m.Created.UTC().Format(time.RFC3339),
	}
}

// assembleIndex builds the image index of one command from its binaries,
// one per entry of platforms, in that order.
func assembleIndex(name string, binaries [][]byte, meta metadata) (v1.ImageIndex, error) {
	if len(binaries) != len(platforms) {
		return nil, fmt.Errorf("%s: %d binaries for %d platforms", name, len(binaries), len(platforms))
	}
	var adds []mutate.IndexAddendum
	for i, p := range platforms {
		img, err := assembleImage(name, binaries[i], p, meta)
		if err != nil {
			return nil, fmt.Errorf("%s for %s/%s: %w", name, p.OS, p.Architecture, err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.AppendManifests(empty.Index, adds...), nil
}

// assembleImage is one platform's image: the binary alone on an empty base,
// run as nonRoot, without a shell or anything else to execute.
func assembleImage(name string, binary []byte, p v1.Platform, meta metadata) (v1.Image, error) {
	entrypoint := binDir + "/" + name
	layerTar, err := binaryLayerTar(entrypoint, binary, meta.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("compressing the layer: %w", err)
	}
	created := v1.Time{Time: meta.Created}
	base, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: p.Architecture,
		OS:           p.OS,
		Created:      created,
		Config: v1.Config{
			User:       nonRoot,
			Entrypoint: []string{entrypoint},
			Env:        []string{"PATH=" + binDir},
			WorkingDir: "/",
			Labels:     meta.labels(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("setting the config: %w", err)
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: created, CreatedBy: "hack/images: " + entrypoint},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

// binaryLayerTar is the layer's filesystem: the directories of binDir and
// the binary at path in it, owned by root so that the user cannot change it,
// with fixed modes and mtimes.
func binaryLayerTar(path string, binary []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	dir := ""
	for _, component := range strings.Split(strings.Trim(binDir, "/"), "/") {
		dir += component + "/"
		if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: mtime}); err != nil {
			return nil, fmt.Errorf("writing %s: %w", dir, err)
		}
	}
	header := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(path, "/"), Mode: 0o755, Size: int64(len(binary)), ModTime: mtime}
	if err := w.WriteHeader(header); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := w.Write(binary); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}
