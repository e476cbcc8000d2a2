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
	"os"
	"path/filepath"
	"testing"
)

func TestInputsFingerprintFollowsTheSources(t *testing.T) {
	root := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		path = filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/fp\n\ngo 1.26\n")
	write("cmd/tool/main.go", "package main\n\nimport \"example.com/fp/lib\"\n\nfunc main() { lib.Run() }\n")
	write("lib/lib.go", "package lib\n\nfunc Run() {}\n")
	write("unused/unused.go", "package unused\n")
	meta := metadata{Version: "v1.0.0", Revision: "abc"}
	fingerprint := func(meta metadata) string {
		t.Helper()
		fp, err := inputsFingerprint(root, []string{"tool"}, meta)
		if err != nil {
			t.Fatal(err)
		}
		return fp
	}
	first := fingerprint(meta)

	for _, tc := range []struct {
		name   string
		change func() metadata
		same   bool
	}{
		{"nothing changed", func() metadata { return meta }, true},
		{"a package the command does not import", func() metadata { write("unused/unused.go", "package unused\n\nvar X = 1\n"); return meta }, true},
		{"a package the command imports", func() metadata { write("lib/lib.go", "package lib\n\nfunc Run() { println() }\n"); return meta }, false},
		{"a new file of that package", func() metadata { write("lib/more.go", "package lib\n"); return meta }, false},
		{"the revision", func() metadata { m := meta; m.Revision = "def"; return m }, false},
		{"go.mod's godebug settings", func() metadata {
			write("go.mod", "module example.com/fp\n\ngo 1.26\n\ngodebug default=go1.25\n")
			return meta
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fingerprint(tc.change())
			if (got == first) != tc.same {
				t.Errorf("fingerprint same as before: %v, want %v", got == first, tc.same)
			}
			first = fingerprint(meta)
		})
	}
}

func TestBuiltFrom(t *testing.T) {
	out := t.TempDir()
	if same, err := builtFrom(out, "f1"); err != nil || same {
		t.Fatalf("no fingerprint recorded: builtFrom = %v, %v; want false, nil", same, err)
	}
	if err := os.WriteFile(filepath.Join(out, fingerprintFile), []byte("f1"), 0o644); err != nil {
		t.Fatal(err)
	}
	for fingerprint, want := range map[string]bool{"f1": true, "f2": false} {
		if same, err := builtFrom(out, fingerprint); err != nil || same != want {
			t.Errorf("builtFrom(%q) = %v, %v; want %v, nil", fingerprint, same, err, want)
		}
	}
}
