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

package apiserver

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// forwardedReads counts the NodeEndpoints reads a replica that does not lead
// handled: "leader" sent to the leader, "follower" watches served here from
// the history this replica keeps as the leader's follower, "local" served
// here because the leader did not answer. A growing "local" means clients of
// this replica relist when they next reach the leader.
var forwardedReads = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem: "gridview_apiserver", Name: "leader_reads_total", StabilityLevel: metrics.ALPHA,
	Help: "NodeEndpoints reads a replica that does not lead sent to the leader (leader), served itself as the leader's follower (follower) or served itself because the leader did not answer (local).",
}, []string{"served_by"})

// leading says which replica answers every replica's reads of NodeEndpoints
// and numbers view changes on its own.
var leading = metrics.NewGauge(&metrics.GaugeOpts{
	Subsystem: "gridview_apiserver", Name: "leading", StabilityLevel: metrics.ALPHA,
	Help: "1 while this replica holds the ServiceGrid controller's Lease, whose holder reconciles ServiceGrids and answers every replica's reads of NodeEndpoints.",
})

// quietCollections counts the collection cycles run while the views were
// quiet (see collectWhileQuiet).
var quietCollections = metrics.NewCounter(&metrics.CounterOpts{
	Subsystem: "gridview_apiserver", Name: "quiet_collections_total", StabilityLevel: metrics.ALPHA,
	Help: "Garbage collection cycles run while no view changed, ahead of those the next changes would have started.",
})

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(forwardedReads, leading, quietCollections) })
}
