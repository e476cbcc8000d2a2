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
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is what `make scale` passes in the environment.
type Config struct {
	Scale    Scale
	Watchers int    // WATCHERS: node watchers; default 2,000, at most every node
	Seed     uint64 // SEED: the scenario's and the changes' random source
	Repeats  int    // SCALE_REPEATS: changes of each kind measured
	// Strict (GRIDVIEW_SCALE_STRICT=1, set by make test-all) fails the run when
	// a correctness check fails; otherwise only harness errors do.
	Strict bool
	// CurrentTimeout (SCALE_CURRENT_TIMEOUT) bounds each wait for every
	// watched node's views to be current.
	CurrentTimeout time.Duration
	// Replicas (SCALE_REPLICAS, 1 to 3) is how many gridview-apiserver
	// processes serve the APIService, on an external etcd when more than
	// one, each deriving its views from the input log there. With more
	// than one, a restart stops the leader, the replica that writes the
	// log, as a rolling update may, and another takes over the writing.
	Replicas int
	// Restarts (SCALE_RESTARTS) is how many of the two restarts to make:
	// as is, then with a change while down. With one replica each costs
	// every watcher a relist, minutes at edge-10k.
	Restarts int
	// RSSLimit (SCALE_RSS_LIMIT, bytes, default 8 GiB) ends a wait for
	// current views once gridview-apiserver's RSS passes it, so that the run
	// does not take the machine down with it: a restart's relists reached
	// 17.6 GB at edge-10k.
	RSSLimit int64
	// Encoding (SCALE_ENCODING) is what watchers read: protobuf, as
	// gridview-wrapper does (default), or json.
	Encoding string
	// ProfileDir (SCALE_PROFILE_DIR), when set, receives CPU profiles of
	// gridview-apiserver and kube-apiserver taken through the ingest, heap
	// profiles of gridview-apiserver once written and once current, and CPU
	// profiles of gridview-apiserver, kube-apiserver and the harness through
	// each kind of change, whose log lines then also count the collection
	// cycles each change saw. All of these slow what they measure.
	ProfileDir string
	// GridviewArgs (SCALE_GRIDVIEW_ARGS, split at spaces) are more flags for
	// gridview-apiserver, e.g. --disable-http2-serving.
	GridviewArgs []string
	// Kubelets (SCALE_KUBELETS=kwok) runs kube-controller-manager,
	// kube-scheduler and kwok, which plays every Node's kubelet: Leases
	// renewed every 10 s, status rewritten every 10 to 20 minutes. The
	// heartbeats phase then measures what they cost and what they change.
	Kubelets bool
	// HeartbeatWindow (SCALE_HEARTBEAT_WINDOW, default 1m) is how long the
	// heartbeats phase watches the quiet cluster.
	HeartbeatWindow time.Duration
	// Workloads (SCALE_ENDPOINTS=workloads, only with SCALE_KUBELETS=kwok)
	// gives each Service a selector and Pods to select, a Deployment's for
	// each 20-endpoint Service and a DaemonSet's for the big one, which the
	// scheduler places, kwok runs and the EndpointSlice controller writes
	// into slices; the model reads those slices back. SCALE_ENDPOINTS=slices
	// (the default) has the harness write the slices itself.
	Workloads bool
}

// SCALE_ENDPOINTS values: where the Services' EndpointSlices come from.
const (
	EndpointsSlices    = "slices"
	EndpointsWorkloads = "workloads"
)

// ConfigFromEnv reads the Config; ok is false when SCALE is unset, which
// means the harness was not asked for (go test ./... runs this package).
func ConfigFromEnv() (cfg Config, ok bool, err error) {
	name := os.Getenv("SCALE")
	if name == "" {
		return cfg, false, nil
	}
	sc, known := Scales[name]
	if !known || name == "tiny" {
		return cfg, true, fmt.Errorf("SCALE=%q: want edge-1k or edge-10k", name)
	}
	cfg = Config{Scale: sc, Watchers: min(2000, sc.Nodes), Seed: 1, Repeats: 5, CurrentTimeout: 10 * time.Minute, Encoding: EncodingProtobuf, Replicas: 1, Restarts: 2, RSSLimit: 8 << 30,
		HeartbeatWindow: time.Minute}
	cfg.Strict = os.Getenv("GRIDVIEW_SCALE_STRICT") == "1"
	cfg.ProfileDir = os.Getenv("SCALE_PROFILE_DIR")
	cfg.GridviewArgs = strings.Fields(os.Getenv("SCALE_GRIDVIEW_ARGS"))
	for _, v := range []struct {
		env string
		set func(string) error
	}{
		{"WATCHERS", func(s string) (err error) { cfg.Watchers, err = strconv.Atoi(s); return err }},
		{"SEED", func(s string) (err error) { cfg.Seed, err = strconv.ParseUint(s, 10, 64); return err }},
		{"SCALE_REPEATS", func(s string) (err error) { cfg.Repeats, err = strconv.Atoi(s); return err }},
		{"SCALE_CURRENT_TIMEOUT", func(s string) (err error) { cfg.CurrentTimeout, err = time.ParseDuration(s); return err }},
		{"SCALE_RSS_LIMIT", func(s string) (err error) { cfg.RSSLimit, err = strconv.ParseInt(s, 10, 64); return err }},
		{"SCALE_REPLICAS", func(s string) (err error) { cfg.Replicas, err = strconv.Atoi(s); return err }},
		{"SCALE_RESTARTS", func(s string) (err error) { cfg.Restarts, err = strconv.Atoi(s); return err }},
		{"SCALE_HEARTBEAT_WINDOW", func(s string) (err error) { cfg.HeartbeatWindow, err = time.ParseDuration(s); return err }},
		{"SCALE_KUBELETS", func(s string) error {
			if s != "kwok" {
				return errors.New("want kwok, or nothing for Nodes without kubelets")
			}
			cfg.Kubelets = true
			return nil
		}},
		{"SCALE_ENDPOINTS", func(s string) error {
			if s != EndpointsSlices && s != EndpointsWorkloads {
				return fmt.Errorf("want %s or %s", EndpointsSlices, EndpointsWorkloads)
			}
			cfg.Workloads = s == EndpointsWorkloads
			return nil
		}},
		{"SCALE_ENCODING", func(s string) error {
			if s != EncodingProtobuf && s != EncodingJSON {
				return fmt.Errorf("want %s or %s", EncodingProtobuf, EncodingJSON)
			}
			cfg.Encoding = s
			return nil
		}},
	} {
		if s := os.Getenv(v.env); s != "" {
			if err := v.set(s); err != nil {
				return cfg, true, fmt.Errorf("%s=%q: %w", v.env, s, err)
			}
		}
	}
	if cfg.Watchers < 1 || cfg.Watchers > sc.Nodes {
		return cfg, true, fmt.Errorf("WATCHERS=%d: want 1 to %d", cfg.Watchers, sc.Nodes)
	}
	if cfg.Replicas < 1 || cfg.Replicas > 3 {
		return cfg, true, fmt.Errorf("SCALE_REPLICAS=%d: want 1 to 3", cfg.Replicas)
	}
	if cfg.Restarts < 0 || cfg.Restarts > 2 {
		return cfg, true, fmt.Errorf("SCALE_RESTARTS=%d: want 0, 1 or 2", cfg.Restarts)
	}
	if cfg.Workloads && !cfg.Kubelets {
		return cfg, true, fmt.Errorf("SCALE_ENDPOINTS=%s needs SCALE_KUBELETS=kwok: without kube-scheduler, kube-controller-manager and kwok no Pod runs", EndpointsWorkloads)
	}
	if cfg.Repeats < 1 {
		return cfg, true, fmt.Errorf("SCALE_REPEATS=%d: want at least 1", cfg.Repeats)
	}
	return cfg, true, nil
}

// WatchedNodes spreads the watchers evenly over the nodes, edge-00000
// first, so that every unit has as many watched nodes as it can.
func (cfg Config) WatchedNodes() []int {
	out := make([]int, cfg.Watchers)
	for i := range out {
		out[i] = i * cfg.Scale.Nodes / cfg.Watchers
	}
	return out
}
