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
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// Flag errors end the command before it runs.
func TestCommandRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "unknown flag", args: []string{"--no-such-flag"}, wantErr: "unknown flag: --no-such-flag (see gridview-apiserver --help)"},
		{name: "positional argument", args: []string{"serve"}, wantErr: `unknown command "serve"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
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

func TestValidateRefusesUnusableDataDir(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dataDir string
		wantErr string
	}{
		{name: "a file", dataDir: notADir, wantErr: "--data-dir " + notADir + " cannot be created"},
		{name: "empty", dataDir: "", wantErr: "--data-dir must not be empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.DataDir = tc.dataDir
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error = %v, want one line containing %q", err, tc.wantErr)
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

func TestValidateServingCertFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string // empty: valid
	}{
		{name: "managed certificate", args: []string{"--serving-cert-secret=gridview-system/serving-cert", "--apiservice-name=v1alpha1.topology.gridview.io"}},
		{name: "managed certificate without APIService", args: []string{"--serving-cert-secret=gridview-system/serving-cert"}},
		{name: "given certificate", args: []string{"--tls-cert-file=tls.crt", "--tls-private-key-file=tls.key"}},
		{name: "no namespace", args: []string{"--serving-cert-secret=serving-cert"},
			wantErr: `--serving-cert-secret "serving-cert" must be <namespace>/<name> of a Secret`},
		{name: "invalid name", args: []string{"--serving-cert-secret=gridview-system/Serving_Cert"},
			wantErr: `--serving-cert-secret "gridview-system/Serving_Cert" must be <namespace>/<name> of a Secret`},
		{name: "both certificates", args: []string{"--serving-cert-secret=gridview-system/serving-cert", "--tls-cert-file=tls.crt", "--tls-private-key-file=tls.key"},
			wantErr: "--serving-cert-secret excludes --tls-cert-file and --tls-private-key-file"},
		{name: "APIService without a managed CA", args: []string{"--apiservice-name=v1alpha1.topology.gridview.io"},
			wantErr: "--apiservice-name needs --serving-cert-secret"},
		{name: "invalid APIService name", args: []string{"--serving-cert-secret=gridview-system/serving-cert", "--apiservice-name=V1/topology"},
			wantErr: `--apiservice-name "V1/topology" must be <version>.<group> of an APIService`},
		{name: "APIService name without a version", args: []string{"--serving-cert-secret=gridview-system/serving-cert", "--apiservice-name=topology.gridview.io"},
			wantErr: `--apiservice-name "topology.gridview.io" must be <version>.<group> of an APIService`},
		{name: "APIService name without a group", args: []string{"--serving-cert-secret=gridview-system/serving-cert", "--apiservice-name=v1alpha1"},
			wantErr: `--apiservice-name "v1alpha1" must be <version>.<group> of an APIService`},
		{name: "APIService of another group", args: []string{"--serving-cert-secret=gridview-system/serving-cert", "--apiservice-name=v1beta1.metrics.k8s.io"},
			wantErr: `--apiservice-name "v1beta1.metrics.k8s.io" must be <version>.<group> of an APIService of gridview's group`},
		{name: "APIService name with an invalid version", args: []string{"--serving-cert-secret=gridview-system/serving-cert", "--apiservice-name=v0alpha1.topology.gridview.io"},
			wantErr: `--apiservice-name "v0alpha1.topology.gridview.io" must be <version>.<group> of an APIService`},
		{name: "beta APIService", args: []string{"--serving-cert-secret=gridview-system/serving-cert", "--apiservice-name=v2beta3.topology.gridview.io"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkValidation(t, tc.args, tc.wantErr)
		})
	}
}

func TestValidateRoutingMetricsInterval(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		wantInterval time.Duration
		wantErr      string // empty: valid
	}{
		{name: "default", wantInterval: 30 * time.Second},
		{name: "off", args: []string{"--routing-metrics-interval=0"}},
		{name: "every 5s", args: []string{"--routing-metrics-interval=5s"}, wantInterval: 5 * time.Second},
		{name: "negative", args: []string{"--routing-metrics-interval=-1s"}, wantInterval: -time.Second,
			wantErr: "--routing-metrics-interval must not be negative (0 turns the routing metrics off), got -1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := checkValidation(t, tc.args, tc.wantErr)
			if o.RoutingMetricsInterval != tc.wantInterval {
				t.Errorf("interval = %s, want %s", o.RoutingMetricsInterval, tc.wantInterval)
			}
		})
	}
}

// checkValidation parses args, completes and validates the options, and
// fails unless the validation error is one line containing wantErr, or
// there is none when wantErr is empty.
func checkValidation(t *testing.T, args []string, wantErr string) *Options {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(append(args, "--data-dir="+t.TempDir())); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	err := o.Validate()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("error = %v, want none", err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr) || strings.Contains(err.Error(), "\n")):
		t.Fatalf("error = %v, want one line containing %q", err, wantErr)
	}
	return o
}

// The collector targets defaultGCPercent unless GOGC says otherwise, which
// the runtime has then read already.
func TestTuneCollector(t *testing.T) {
	for name, tc := range map[string]struct {
		gogc string
		want int
	}{
		"GOGC unset":   {want: defaultGCPercent},
		"GOGC set":     {gogc: "80", want: 100},
		"GOGC is off":  {gogc: "off", want: 100},
		"GOGC is zero": {gogc: "0", want: 100},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			previous := debug.SetGCPercent(100)
			t.Cleanup(func() { debug.SetGCPercent(previous) })
			tuneCollector()
			if got := debug.SetGCPercent(100); got != tc.want {
				t.Errorf("GC percent %d, want %d", got, tc.want)
			}
		})
	}
}
