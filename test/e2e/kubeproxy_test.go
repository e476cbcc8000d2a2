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

package e2e

import (
	"testing"
)

// TestKubeProxyControlSeesEveryEndpoint is the control for the
// gridview-wrapper proof: a real kube-proxy for a node of unit a that reads
// kube-apiserver directly programs every endpoint of a Service that asks
// for topology, unit b's included, because nothing prunes them. The wrapper
// test runs the same kube-proxy through the wrapper and expects unit a's
// alone; without this control, a kube-proxy that programmed nothing, or a
// parser that missed endpoints, could make it pass.
func TestKubeProxyControlSeesEveryEndpoint(t *testing.T) {
	s := newSite(t)
	n := nodeNetns(t, s.Node("a1"))
	proc := startKubeProxy(t, n, nodeProxierKubeconfig(t, s.NS))

	// grid: topologyKeys ["superedge.io/nodeunit"], Pods on a1, a2 (unit a)
	// and b1 (unit b).
	expectProgrammed(t, n, proc, s.NS, "grid", 80, s.podIPs(t, "grid", "a1", "a2", "b1"))
	// A Service without topology, as a sanity check of the same path.
	expectProgrammed(t, n, proc, s.NS, "plain", 80, s.podIPs(t, "plain", "a1", "b1"))

	// Later changes reach the ruleset too: the wrapper test relies on the
	// same for relabels.
	s.setReady(t, "grid", "a2", false)
	s.runPods(t, "grid", podOn{"b1", true})
	expectProgrammed(t, n, proc, s.NS, "grid", 80, s.podIPs(t, "grid", "a1", "b1"))
}
