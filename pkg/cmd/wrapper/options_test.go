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

package wrapper

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options func(*Options)
		want    string
	}{
		{name: "defaults with a node", options: func(*Options) {}},
		{name: "no node", options: func(o *Options) { o.NodeName = "" }, want: "--node-name is required"},
		{name: "listen without a port", options: func(o *Options) { o.Listen = "127.0.0.1" }, want: "--listen"},
		{name: "cache dir under a file", options: func(o *Options) { o.CacheDir = "/dev/null/cache" }, want: "--cache-dir"},
		{name: "local endpoint", options: func(o *Options) { o.KubernetesEndpoint = "[fd00::2]:6443" }},
		{name: "short upstream watches", options: func(o *Options) { o.UpstreamWatchTimeout = 30 * time.Second }},
		{name: "upstream watches of one second", options: func(o *Options) { o.UpstreamWatchTimeout = time.Second }},
		{name: "upstream watches under a second", options: func(o *Options) { o.UpstreamWatchTimeout = 500 * time.Millisecond }, want: "--upstream-watch-timeout 500ms"},
		{name: "negative upstream watch timeout", options: func(o *Options) { o.UpstreamWatchTimeout = -time.Minute }, want: "--upstream-watch-timeout -1m0s"},
		{name: "bad local endpoint", options: func(o *Options) { o.KubernetesEndpoint = "lite-apiserver:6443" }, want: "--kubernetes-endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.NodeName, o.CacheDir = "edge-1", t.TempDir()
			tc.options(o)
			err := o.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// SuperEdge's flag names set ours, so its DaemonSets work unchanged.
func TestSuperEdgeFlagAliases(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("gridview-wrapper", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--hostname=edge-7", "--bind-address=127.0.0.1:51007"}); err != nil {
		t.Fatal(err)
	}
	if o.NodeName != "edge-7" || o.Listen != "127.0.0.1:51007" {
		t.Errorf("node %q, listen %q", o.NodeName, o.Listen)
	}
}
