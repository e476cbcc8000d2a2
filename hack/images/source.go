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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// commands are the images' commands, in the order they are reported; one
// whose cmd/ directory does not exist (yet) is left out.
var commands = []string{"gridview-apiserver", "gridview-wrapper", "kubectl-gridview"}

// versionPattern is what VERSION may hold: a tag a registry and the
// manifests accept, in semver form.
var versionPattern = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// presentCommands are the commands with a main package under root/cmd.
func presentCommands(root string) []string {
	var present []string
	for _, name := range commands {
		if _, err := os.Stat(filepath.Join(root, "cmd", name, "main.go")); err == nil {
			present = append(present, name)
		}
	}
	return present
}

// readMetadata takes the version from root/VERSION and the revision and
// creation time from git's HEAD, the revision marked -dirty when the work
// tree differs from it; SOURCE_DATE_EPOCH, as reproducible
// builds define it, overrides the commit time.
func readMetadata(root, source string) (metadata, error) {
	meta := metadata{Source: source}
	data, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return meta, fmt.Errorf("reading the version: %w", err)
	}
	meta.Version = strings.TrimSpace(string(data))
	if !versionPattern.MatchString(meta.Version) {
		return meta, fmt.Errorf("VERSION holds %q, want a tag like v1.2.3", meta.Version)
	}
	if meta.Revision, err = git(root, "rev-parse", "HEAD"); err != nil {
		return meta, err
	}
	// Binaries built from changes not committed are not the commit's: the
	// label says so rather than claim a revision they do not match.
	status, err := git(root, "status", "--porcelain")
	if err != nil {
		return meta, err
	}
	if status != "" {
		meta.Revision += "-dirty"
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git(root, "log", "-1", "--format=%ct", "HEAD"); err != nil {
			return meta, err
		}
	}
	seconds, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return meta, fmt.Errorf("the creation time %q is not seconds since 1970: %w", epoch, err)
	}
	meta.Created = time.Unix(seconds, 0).UTC()
	return meta, nil
}

func git(root string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s (the images record the commit): %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(string(out)), nil
}

// compile builds the commands for one platform into dir, statically and
// without anything of the machine or the moment in the binaries: no cgo,
// trimmed paths, no build or VCS id, the baseline instruction set.
func compile(root, dir string, names []string, goos, goarch string) error {
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", dir + string(filepath.Separator)}
	for _, name := range names {
		args = append(args, "./cmd/"+name)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOAMD64=v1", "GOARM64=v8.0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s/%s: %w", goos, goarch, err)
	}
	return nil
}
