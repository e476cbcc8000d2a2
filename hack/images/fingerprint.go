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
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// fingerprintFile records, beside the outputs, the inputs they were built
// from: `make run` and `make test-e2e` call make images after every edit, and
// compiling six binaries again when nothing changed is most of their wait.
const fingerprintFile = "inputs.sha256"

// listTemplate prints one line per package the commands import: this
// module's, and those of modules replaced by a directory, with their
// directory and files, which the fingerprint reads; other modules' with
// their version, which names their content; the standard library's by
// path, the go command's version naming its content.
const listTemplate = `{{if .Module}}{{if or .Module.Main (and .Module.Replace (not .Module.Replace.Version))}}` +
	`files {{.Dir}} {{join .GoFiles " "}} {{join .SFiles " "}} {{join .SysoFiles " "}} {{join .EmbedFiles " "}}` +
	`{{else}}module {{.Module.Path}} {{.Module.Version}}{{with .Module.Replace}} {{.Path}} {{.Version}}{{end}}{{end}}` +
	`{{else}}std {{.ImportPath}}{{end}}`

// inputsFingerprint hashes everything the images are made of: this builder
// (its compiler flags among it), the metadata, the go command's version and
// the settings it takes from the environment, go.mod (its go and godebug
// lines set the binaries' defaults) and go.work, and for each platform
// every package the commands import.
func inputsFingerprint(root string, names []string, meta metadata) (string, error) {
	h := sha256.New()
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if err := copyFile(h, self); err != nil {
		return "", err
	}
	goEnv, err := goOutput(root, nil, "env", "GOVERSION", "GOFLAGS", "GOEXPERIMENT", "GOWORK")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%+v\n%s", meta, goEnv)
	modules := []string{filepath.Join(root, "go.mod")}
	if work := strings.Fields(string(goEnv)); len(work) > 0 && strings.HasSuffix(work[len(work)-1], "go.work") {
		modules = append(modules, work[len(work)-1])
	}
	for _, file := range modules {
		if err := copyFile(h, file); err != nil {
			return "", err
		}
	}
	for _, p := range platforms {
		args := []string{"list", "-deps", "-f", listTemplate}
		for _, name := range names {
			args = append(args, "./cmd/"+name)
		}
		packages, err := goOutput(root, []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Architecture}, args...)
		if err != nil {
			return "", err
		}
		h.Write(packages)
		lines := bufio.NewScanner(bytes.NewReader(packages))
		for lines.Scan() {
			fields := strings.Fields(lines.Text())
			if len(fields) < 2 || fields[0] != "files" {
				continue
			}
			for _, file := range fields[2:] {
				if err := copyFile(h, filepath.Join(fields[1], file)); err != nil {
					return "", err
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func goOutput(root string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// builtFrom says whether out holds a whole build from the inputs of
// fingerprint: the fingerprint is written last, after digests.txt, and
// removed before a build starts, so an interrupted build never matches.
func builtFrom(out, fingerprint string) (bool, error) {
	recorded, err := os.ReadFile(filepath.Join(out, fingerprintFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil && string(recorded) == fingerprint, err
}
