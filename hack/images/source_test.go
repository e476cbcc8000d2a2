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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitRepo makes a repository with one commit dated 2026-11-30T12:00:00Z
// and VERSION holding version.
func gitRepo(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte(version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "VERSION"},
		{"-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "version", "--date=2026-11-30T12:00:00Z"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2026-11-30T12:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return dir
}

func TestReadMetadata(t *testing.T) {
	commitTime := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		version, sourceDateEpoch string
		uncommitted              bool
		wantCreated              time.Time
		wantErr                  bool
	}{
		"commit time":              {version: "v0.1.0", wantCreated: commitTime},
		"uncommitted changes":      {version: "v0.1.0", uncommitted: true, wantCreated: commitTime},
		"SOURCE_DATE_EPOCH":        {version: "v0.1.0-rc.1", sourceDateEpoch: "1700000000", wantCreated: time.Unix(1700000000, 0)},
		"SOURCE_DATE_EPOCH broken": {version: "v0.1.0", sourceDateEpoch: "yesterday", wantErr: true},
		"latest is no version":     {version: "latest", wantErr: true},
		"no v":                     {version: "0.1.0", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			dir := gitRepo(t, tc.version)
			if tc.uncommitted {
				if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("SOURCE_DATE_EPOCH", tc.sourceDateEpoch)
			meta, err := readMetadata(dir, "https://example.com/src")
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want an error", meta)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			commit, dirty := strings.CutSuffix(meta.Revision, "-dirty")
			if meta.Version != tc.version || len(commit) != 40 || dirty != tc.uncommitted || !meta.Created.Equal(tc.wantCreated) || meta.Source != "https://example.com/src" {
				t.Errorf("got %+v, want version %s, a commit (-dirty: %t) and created %s", meta, tc.version, tc.uncommitted, tc.wantCreated)
			}
		})
	}
}

func TestPresentCommands(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"gridview-apiserver", "kubectl-gridview"} {
		if err := os.MkdirAll(filepath.Join(root, "cmd", name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "cmd", name, "main.go"), []byte("package main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := presentCommands(root)
	if len(got) != 2 || got[0] != "gridview-apiserver" || got[1] != "kubectl-gridview" {
		t.Errorf("got %v, want gridview-apiserver and kubectl-gridview", got)
	}
}
