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
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// imagesDirEnv overrides where `make images` writes the images.
const imagesDirEnv = "GRIDVIEW_IMAGES_DIR"

// gridviewImageLayout is the OCI layout of gridview-apiserver's image that
// `make images` writes: $GRIDVIEW_IMAGES_DIR/gridview-apiserver, else
// <repo>/_output/images/gridview-apiserver.
func gridviewImageLayout(repoRoot string) string {
	dir := os.Getenv(imagesDirEnv)
	if dir == "" {
		dir = filepath.Join(repoRoot, "_output", "images")
	}
	return filepath.Join(dir, "gridview-apiserver")
}

// extractGridviewBinary writes the entrypoint of the layout's image for
// this machine's platform to destDir and returns its path and where it
// came from: the local cluster runs the binary users deploy, so every test
// run proves the image works.
func extractGridviewBinary(layoutDir, destDir string) (binary, origin string, err error) {
	img, origin, err := platformImage(layoutDir, v1.Platform{OS: "linux", Architecture: runtime.GOARCH})
	if err != nil {
		return "", "", fmt.Errorf("gridview-apiserver's image in %s (run `make images`): %w", layoutDir, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", "", fmt.Errorf("reading the config of %s: %w", origin, err)
	}
	if len(cfg.Config.Entrypoint) != 1 {
		return "", "", fmt.Errorf("%s: entrypoint %q, want the binary alone", origin, cfg.Config.Entrypoint)
	}
	if err := os.MkdirAll(destDir, 0o755); err != nil {
		return "", "", err
	}
	binary = filepath.Join(destDir, path.Base(cfg.Config.Entrypoint[0]))
	if err := extractFile(img, cfg.Config.Entrypoint[0], binary); err != nil {
		return "", "", fmt.Errorf("extracting %s from %s: %w", cfg.Config.Entrypoint[0], origin, err)
	}
	return binary, origin, nil
}

// platformImage finds the image for platform in the image index that the
// layout's index.json lists alone, as `make images` writes it.
func platformImage(layoutDir string, platform v1.Platform) (v1.Image, string, error) {
	top, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		return nil, "", err
	}
	manifest, err := top.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	if len(manifest.Manifests) != 1 {
		return nil, "", fmt.Errorf("index.json lists %d entries, want one image index", len(manifest.Manifests))
	}
	idx, err := top.ImageIndex(manifest.Manifests[0].Digest)
	if err != nil {
		return nil, "", err
	}
	images, err := idx.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	for _, desc := range images.Manifests {
		if desc.Platform != nil && desc.Platform.Satisfies(platform) {
			img, err := idx.Image(desc.Digest)
			origin := fmt.Sprintf("%s@%s (%s/%s %s)", manifest.Manifests[0].Annotations["io.containerd.image.name"],
				manifest.Manifests[0].Digest, platform.OS, platform.Architecture, desc.Digest)
			return img, origin, err
		}
	}
	return nil, "", fmt.Errorf("no image for %s/%s", platform.OS, platform.Architecture)
}

// extractFile copies the regular file at the absolute path file of the
// image's filesystem to dest, executable.
func extractFile(img v1.Image, file, dest string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	r := tar.NewReader(rc)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return errors.New("not in the image")
		}
		if err != nil {
			return err
		}
		if path.Clean("/"+h.Name) != file || h.Typeflag != tar.TypeReg {
			continue
		}
		f, err := os.OpenFile(dest, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}
