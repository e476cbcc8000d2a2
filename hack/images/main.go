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

// Command images builds gridview's container images without a container
// runtime: static binaries on an empty base, one OCI image index per
// command for linux/amd64 and linux/arm64 (make images), and pushes them
// (make push).
//
//	images build [--out DIR] [--repository REPO]
//	images push --registry REGISTRY [--out DIR]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "images: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: images build|push [flags]")
	}
	flags := flag.NewFlagSet("images "+args[0], flag.ContinueOnError)
	out := flags.String("out", "_output/images", "directory of the layouts, archives and digests.txt")
	switch args[0] {
	case "build":
		repository := flags.String("repository", "ghcr.io/gridview", "repository the images are tagged in, as the manifests name them")
		source := flags.String("source", "https://github.com/gridview/gridview", "the org.opencontainers.image.source label")
		if err := flags.Parse(args[1:]); err != nil {
			return err
		}
		return build(".", *out, *repository, *source)
	case "push":
		registry := flags.String("registry", "", "where to push, e.g. ghcr.io/gridview: images go to REGISTRY/NAME:VERSION")
		if err := flags.Parse(args[1:]); err != nil {
			return err
		}
		if *registry == "" {
			return errors.New("push needs --registry (make push REGISTRY=...)")
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return push(os.Stdout, *out, *registry, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	}
	return fmt.Errorf("unknown subcommand %q: want build or push", args[0])
}

// build compiles the commands for every platform under out/bin and writes
// each command's images and out/digests.txt.
func build(root, out, repository, source string) error {
	start := time.Now()
	meta, err := readMetadata(root, source)
	if err != nil {
		return err
	}
	names := presentCommands(root)
	fmt.Printf("images: version %s (revision %s, created %s)\n", meta.Version, meta.Revision, meta.Created.Format(time.RFC3339))
	fingerprint, err := inputsFingerprint(root, names, meta)
	if err != nil {
		return err
	}
	if same, err := builtFrom(out, fingerprint); err != nil || same {
		if err == nil {
			err = printDigests(out)
			fmt.Printf("images: %s holds them already, built from the same inputs (checked in %s)\n", out, time.Since(start).Round(100*time.Millisecond))
		}
		return err
	}
	if err := os.Remove(filepath.Join(out, fingerprintFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, p := range platforms {
		if err := compile(root, binaryDir(out, p.OS, p.Architecture), names, p.OS, p.Architecture); err != nil {
			return err
		}
	}
	compiled := time.Now()
	var digests bytes.Buffer
	for _, cmdName := range names {
		var binaries [][]byte
		for _, p := range platforms {
			binary, err := os.ReadFile(filepath.Join(binaryDir(out, p.OS, p.Architecture), cmdName))
			if err != nil {
				return err
			}
			binaries = append(binaries, binary)
		}
		idx, err := assembleIndex(cmdName, binaries, meta)
		if err != nil {
			return err
		}
		tag, err := name.NewTag(repository + "/" + cmdName + ":" + meta.Version)
		if err != nil {
			return fmt.Errorf("tagging %s: %w", cmdName, err)
		}
		if err := writeOutputs(out, cmdName, tag, idx, meta.Created); err != nil {
			return fmt.Errorf("%s: %w", cmdName, err)
		}
		if err := report(&digests, cmdName, tag, idx); err != nil {
			return fmt.Errorf("%s: %w", cmdName, err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "digests.txt"), digests.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, fingerprintFile), []byte(fingerprint), 0o644); err != nil {
		return err
	}
	os.Stdout.Write(digests.Bytes())
	fmt.Printf("images: written to %s in %s (compiling %s, images %s)\n", out,
		time.Since(start).Round(100*time.Millisecond), compiled.Sub(start).Round(100*time.Millisecond), time.Since(compiled).Round(100*time.Millisecond))
	return nil
}

// printDigests prints the tags and digests of the images in out.
func printDigests(out string) error {
	digests, err := os.ReadFile(filepath.Join(out, "digests.txt"))
	if err == nil {
		os.Stdout.Write(digests)
	}
	return err
}

func binaryDir(out, goos, goarch string) string {
	return filepath.Join(out, "bin", goos+"_"+goarch)
}
