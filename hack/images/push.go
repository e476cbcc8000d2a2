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
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// push copies the image index of every command's layout under out to
// registry/NAME:TAG, the tag as make images wrote it: what is pushed is
// what was built and tested, not a rebuild.
func push(w io.Writer, out, registry string, options ...remote.Option) error {
	pushed := 0
	for _, cmdName := range commands {
		dir := filepath.Join(out, cmdName)
		if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
			continue
		}
		top, err := layout.ImageIndexFromPath(dir)
		if err != nil {
			return fmt.Errorf("reading %s: %w", dir, err)
		}
		manifest, err := top.IndexManifest()
		if err != nil {
			return fmt.Errorf("reading %s: %w", dir, err)
		}
		if len(manifest.Manifests) != 1 || manifest.Manifests[0].Annotations[ociRefName] == "" {
			return fmt.Errorf("%s holds %d entries, want one tagged image index: run make images", dir, len(manifest.Manifests))
		}
		desc := manifest.Manifests[0]
		idx, err := top.ImageIndex(desc.Digest)
		if err != nil {
			return fmt.Errorf("reading the image index of %s: %w", dir, err)
		}
		tag, err := name.NewTag(registry + "/" + cmdName + ":" + desc.Annotations[ociRefName])
		if err != nil {
			return fmt.Errorf("REGISTRY %q: %w", registry, err)
		}
		if err := remote.WriteIndex(tag, idx, options...); err != nil {
			return fmt.Errorf("pushing %s: %w", tag, err)
		}
		fmt.Fprintf(w, "pushed %s@%s\n", tag, desc.Digest)
		pushed++
	}
	if pushed == 0 {
		return fmt.Errorf("no image layouts in %s: run make images", out)
	}
	return nil
}
