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

package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	logsapi "k8s.io/component-base/logs/api/v1"
)

// resetLogging lets a test apply the logging options again, as each command
// run does once in a real process.
func resetLogging(t *testing.T) {
	t.Helper()
	if err := logsapi.ResetForTest(utilfeature.DefaultFeatureGate); err != nil {
		t.Fatal(err)
	}
}

func TestCommandRefusesBadInput(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "unknown flag", args: []string{"--no-such-flag"}, wantErr: "unknown flag: --no-such-flag (see gridview-apiserver --help)"},
		{name: "positional argument", args: []string{"serve"}, wantErr: `unknown command "serve"`},
		{name: "data dir that is a file", args: []string{"--data-dir", notADir}, wantErr: "--data-dir " + notADir + " cannot be created"},
		{name: "empty data dir", args: []string{"--data-dir", ""}, wantErr: "--data-dir must not be empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resetLogging(t)
			cmd := NewCommand(context.Background())
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

func TestRunFailsOnUnreachableEtcd(t *testing.T) {
	// A port that was free a moment ago: nothing answers there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	resetLogging(t)
	o := NewOptions()
	o.etcdReachTimeout = 2 * time.Second
	o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{"http://" + addr}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if o.embeddedEtcd != nil {
		t.Fatal("embedded etcd chosen although --etcd-servers is set")
	}
	err = o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot reach etcd at [http://"+addr+"]") {
		t.Fatalf("Run error = %v, want one naming the unreachable etcd", err)
	}
}

func TestCompleteChoosesEmbeddedEtcd(t *testing.T) {
	resetLogging(t)
	o := NewOptions()
	o.DataDir = t.TempDir()
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if o.embeddedEtcd == nil {
		t.Fatal("no embedded etcd without --etcd-servers")
	}
	servers := o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList
	if len(servers) != 1 || servers[0] != o.embeddedEtcd.ClientURL.String() {
		t.Errorf("etcd servers = %v, want the embedded member's %s", servers, o.embeddedEtcd.ClientURL.String())
	}
}
