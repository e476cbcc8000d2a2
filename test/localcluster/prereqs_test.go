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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrereqsNamesWhatIsMissing runs hack/prereqs.sh --check, which make run,
// make test and .ci/run call first, on a PATH that holds only the commands a
// case gives it: a fresh machine must learn every missing package at once.
func TestPrereqsNamesWhatIsMissing(t *testing.T) {
	root, err := FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	asRoot := os.Geteuid() == 0
	cases := []struct {
		name        string
		commands    []string
		wantOK      bool
		wantMessage string
	}{
		{name: "fresh machine", wantMessage: "apt-get install iproute2 nftables curl protobuf-compiler"},
		{name: "only nft missing", commands: []string{"ip", "curl", "protoc"}, wantMessage: "apt-get install nftables\n"},
		{name: "only protoc missing", commands: []string{"ip", "nft", "curl"}, wantMessage: "apt-get install protobuf-compiler\n"},
		{name: "everything present", commands: []string{"ip", "nft", "curl", "protoc"}, wantOK: asRoot, wantMessage: "run as root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bin := t.TempDir()
			if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
				t.Fatal(err)
			}
			for _, name := range tc.commands {
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(bash, filepath.Join(root, "hack", "prereqs.sh"), "--check")
			cmd.Env = []string{"PATH=" + bin}
			out, err := cmd.CombinedOutput()
			var exitErr *exec.ExitError
			switch {
			case tc.wantOK && err != nil:
				t.Fatalf("want success, got %v:\n%s", err, out)
			case tc.wantOK:
				return
			case !errors.As(err, &exitErr) || exitErr.ExitCode() != 1:
				t.Fatalf("want exit status 1, got %v:\n%s", err, out)
			case !strings.Contains(string(out), tc.wantMessage):
				t.Fatalf("output does not say %q:\n%s", tc.wantMessage, out)
			}
		})
	}
}
