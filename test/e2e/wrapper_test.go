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
	"context"
	"fmt"
	"testing"
	"time"
)

// A real kube-proxy reading through gridview-wrapper programs only what its
// node's view holds; TestKubeProxyControlSeesEveryEndpoint is the control.
func TestWrapperFeedsKubeProxyItsNodesView(t *testing.T) {
	s := newSite(t)
	// ordered ("unit,*") gets endpoints in unit b only: a1 falls back to "*".
	s.writeSlice(t, "ordered", map[string]string{"10.3.0.3": "b1", "10.3.0.4": "b1"})
	n := nodeNetns(t, s.node("a1"))
	w := startWrapper(t, n, s.ns)
	proc := startKubeProxy(t, n, w.kubeconfig())

	expectProgrammed(t, n, proc, s.ns, "grid", 80, []string{"10.1.0.1", "10.1.0.2"})
	expectProgrammed(t, n, proc, s.ns, "plain", 80, []string{"10.2.0.1", "10.2.0.3"})
	expectProgrammed(t, n, proc, s.ns, "ordered", 80, []string{"10.3.0.3", "10.3.0.4"})

	// a1 moves to unit b, taking its own endpoint along.
	start := time.Now()
	s.relabel(t, "a1", "b")
	expectProgrammedWithin(t, 5*time.Second, n, proc, s.ns, "grid", 80, []string{"10.1.0.1", "10.1.0.3"})
	t.Logf("relabel to kube-proxy's ruleset: %s", time.Since(start))
}

// Through a WAN outage, and a restart of the wrapper during it, kube-proxy
// keeps routing as it did; when the link returns, the changes it missed
// arrive and later ones follow.
func TestWrapperKeepsKubeProxyRoutingThroughAnOutage(t *testing.T) {
	s := newSite(t)
	n := nodeNetns(t, s.node("a1"))
	w := startWrapper(t, n, s.ns)
	proc := startKubeProxy(t, n, w.kubeconfig())
	before := []string{"10.1.0.1", "10.1.0.2"}
	expectProgrammed(t, n, proc, s.ns, "grid", 80, before)
	w.waitCached()

	cutOff(t, n)
	eventually(t, 15*time.Second, "the wrapper seeing the outage", func(context.Context) error {
		if connected := w.metric("gridview_wrapper_upstream_connected"); connected != 0 {
			return fmt.Errorf("upstream_connected = %v", connected)
		}
		return nil
	})
	// A change the wrapper cannot see yet.
	s.writeSlice(t, "grid", map[string]string{"10.1.0.1": "a1", "10.1.0.5": "a2", "10.1.0.3": "b1"})
	expectStillProgrammed(t, 3*time.Second, n, proc, s.ns, "grid", 80, before)

	w.restart()
	expectStillProgrammed(t, 5*time.Second, n, proc, s.ns, "grid", 80, before)

	reconnect(t, n)
	expectProgrammed(t, n, proc, s.ns, "grid", 80, []string{"10.1.0.1", "10.1.0.5"})
	s.writeSlice(t, "grid", map[string]string{"10.1.0.6": "a1", "10.1.0.5": "a2", "10.1.0.3": "b1"})
	expectProgrammed(t, n, proc, s.ns, "grid", 80, []string{"10.1.0.5", "10.1.0.6"})
}
