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
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Keys of the annotations on index.json's entry: containerd's names the
// image `ctr images import` creates; the OCI one holds the tag alone.
const (
	containerdImageName = "io.containerd.image.name"
	ociRefName          = "org.opencontainers.image.ref.name"
)

// writeOutputs writes one command's image index to out: an OCI layout
// directory NAME/, the same as NAME.oci.tar for `ctr images import`, and
// one docker tarball per platform, NAME-OS-ARCH.docker.tar, for
// `docker load`, which loads one platform at a time.
func writeOutputs(out, cmdName string, tag name.Tag, idx v1.ImageIndex, mtime time.Time) error {
	dir := filepath.Join(out, cmdName)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the previous layout: %w", err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("creating the layout %s: %w", dir, err)
	}
	err = p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		containerdImageName: tag.Name(),
		ociRefName:          tag.TagStr(),
	}))
	if err != nil {
		return fmt.Errorf("writing the layout %s: %w", dir, err)
	}
	if err := writeArchive(dir, dir+".oci.tar", mtime); err != nil {
		return err
	}
	return eachImage(idx, func(desc v1.Descriptor, img v1.Image) error {
		file := filepath.Join(out, fmt.Sprintf("%s-%s-%s.docker.tar", cmdName, desc.Platform.OS, desc.Platform.Architecture))
		if err := tarball.WriteToFile(file, tag, img); err != nil {
			return fmt.Errorf("writing %s: %w", file, err)
		}
		return nil
	})
}

// writeArchive tars the layout directory dir into file, its root as the
// archive's, as ctr and skopeo read an oci-archive. Entries come in
// lexical order with fixed modes and times, so the file is reproducible
// too.
func writeArchive(dir, file string, mtime time.Time) (err error) {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("creating the archive: %w", err)
	}
	defer func() {
		if closeErr := f.Close(); err == nil && closeErr != nil {
			err = fmt.Errorf("closing %s: %w", file, closeErr)
		}
	}()
	w := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		header := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime}
		if d.IsDir() {
			header.Typeflag, header.Name, header.Mode = tar.TypeDir, header.Name+"/", 0o755
			return w.WriteHeader(header)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		header.Typeflag, header.Mode, header.Size = tar.TypeReg, 0o644, info.Size()
		if err := w.WriteHeader(header); err != nil {
			return err
		}
		return copyFile(w, path)
	})
	if err != nil {
		return fmt.Errorf("archiving %s: %w", dir, err)
	}
	return w.Close()
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
