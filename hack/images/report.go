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

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// report writes one command's tag, index digest and, per platform, the
// image's digest and compressed size: what make images prints and
// digests.txt keeps, so that two builds compare with diff.
func report(w io.Writer, cmdName string, tag name.Tag, idx v1.ImageIndex) error {
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s %s index %s\n", cmdName, tag.Name(), digest)
	return eachImage(idx, func(desc v1.Descriptor, img v1.Image) error {
		layers, err := img.Layers()
		if err != nil {
			return err
		}
		var size int64
		for _, layer := range layers {
			layerSize, err := layer.Size()
			if err != nil {
				return err
			}
			size += layerSize
		}
		fmt.Fprintf(w, "%s   %s/%s %s %.1f MiB compressed\n", cmdName, desc.Platform.OS, desc.Platform.Architecture, desc.Digest, float64(size)/(1<<20))
		return nil
	})
}

// eachImage calls visit with each entry of an image index and its image,
// in the index's order.
func eachImage(idx v1.ImageIndex, visit func(v1.Descriptor, v1.Image) error) error {
	manifest, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, desc := range manifest.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return err
		}
		if err := visit(desc, img); err != nil {
			return err
		}
	}
	return nil
}
