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

package scale

import (
	"strings"
	"testing"
)

// configEnv is every variable ConfigFromEnv reads, unset.
var configEnv = []string{"SCALE", "WATCHERS", "SEED", "SCALE_REPEATS", "SCALE_CURRENT_TIMEOUT", "SCALE_RSS_LIMIT", "SCALE_REPLICAS",
	"SCALE_RESTARTS", "SCALE_HEARTBEAT_WINDOW", "SCALE_KUBELETS", "SCALE_ENDPOINTS", "SCALE_ENCODING", "GRIDVIEW_SCALE_STRICT",
	"SCALE_PROFILE_DIR", "SCALE_GRIDVIEW_ARGS"}

func TestConfigFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		env                         map[string]string
		wantOK                      bool
		wantKubelets, wantWorkloads bool
		wantErr                     string
	}{
		{name: "no SCALE: not asked for"},
		{name: "hand-written slices by default", env: map[string]string{"SCALE": "edge-1k"}, wantOK: true},
		{name: "hand-written slices asked for", env: map[string]string{"SCALE": "edge-1k", "SCALE_ENDPOINTS": "slices"}, wantOK: true},
		{
			name:   "workloads with kwok's kubelets",
			env:    map[string]string{"SCALE": "edge-1k", "SCALE_KUBELETS": "kwok", "SCALE_ENDPOINTS": "workloads"},
			wantOK: true, wantKubelets: true, wantWorkloads: true,
		},
		{
			name:    "workloads without kubelets",
			env:     map[string]string{"SCALE": "edge-1k", "SCALE_ENDPOINTS": "workloads"},
			wantOK:  true,
			wantErr: "SCALE_ENDPOINTS=workloads needs SCALE_KUBELETS=kwok",
		},
		{
			name:    "unknown endpoints",
			env:     map[string]string{"SCALE": "edge-1k", "SCALE_KUBELETS": "kwok", "SCALE_ENDPOINTS": "pods"},
			wantOK:  true,
			wantErr: `SCALE_ENDPOINTS="pods": want slices or workloads`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range configEnv {
				t.Setenv(name, tc.env[name])
			}
			cfg, ok, err := ConfigFromEnv()
			if ok != tc.wantOK {
				t.Fatalf("ok = %t, want %t", ok, tc.wantOK)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Kubelets != tc.wantKubelets || cfg.Workloads != tc.wantWorkloads {
				t.Errorf("Kubelets %t, Workloads %t; want %t, %t", cfg.Kubelets, cfg.Workloads, tc.wantKubelets, tc.wantWorkloads)
			}
		})
	}
}
