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

package viewstore

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const subsystem = "gridview_nodeendpoints"

var (
	viewsChanged = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "views_recomputed_total", StabilityLevel: metrics.ALPHA,
		Help: "Changes of what a group of nodes sees of one EndpointSlice, each sent to the watchers of those nodes.",
	})
	recomputeSeconds = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem: subsystem, Name: "recompute_duration_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Time to apply one Node, Service or EndpointSlice change and compute the views it changed.",
		Buckets: metrics.ExponentialBuckets(0.00001, 4, 10),
	})
	ownViewsWaitSeconds = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem: subsystem, Name: "own_views_wait_duration_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Time a node that changed labels waited, holding the store's lock, for the views of the nodes that see its endpoints to be handed to their watchers before its own were published; at most 0.1 s.",
		Buckets: metrics.ExponentialBuckets(0.001, 2, 8),
	})
	eventsSent = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "watch_events_sent_total", StabilityLevel: metrics.ALPHA,
		Help: "Watch events sent to NodeEndpoints watchers, bookmarks excluded.",
	})
	watchersCurrent = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: subsystem, Name: "watchers", StabilityLevel: metrics.ALPHA,
		Help: "NodeEndpoints watchers currently connected.",
	})
	// logRevision tells how far behind another replica one is: both
	// serve the same views at the same revision.
	logRevision = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: subsystem, Name: "log_revision", StabilityLevel: metrics.ALPHA,
		Help: "The etcd revision of gridview's input log whose views this replica serves.",
	})
	watchersCutOff = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "watchers_cut_off_total", StabilityLevel: metrics.ALPHA,
		Help: "Watchers cut off because they fell too far behind, or their client took nothing for 15 s while an event waited; their clients watch again.",
	})
	malformedAnnotations = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: "gridview_topology", Name: "malformed_annotations", StabilityLevel: metrics.ALPHA,
		Help: "Services whose own topology annotations cannot be parsed; what cannot is ignored: a malformed rule leaves its Service unpruned, a malformed min-ready leaves it pruned without the gating.",
	})
	// A Namespace's default is counted apart: the Services it leaves
	// unpruned carry nothing malformed, and the name above is what
	// dashboards already read.
	malformedDefaults = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: "gridview_topology", Name: "malformed_namespace_defaults", StabilityLevel: metrics.ALPHA,
		Help: "Namespaces whose default topology rule cannot be parsed; their Services without a rule of their own are not pruned.",
	})

	// The routing metrics are set by a RoutingObserver's passes.
	routingNodes = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem: "gridview_routing", Name: "nodes", StabilityLevel: metrics.ALPHA,
		Help: "(node, Service) pairs by the Service's topology rule (None: not pruned, no rule) and where the node's traffic goes: local (its first tier), fallback-N (the tier of the rule's key N, from 0), all (every endpoint) or none.",
	}, []string{"rule", "route"})
	// Only stranded Services have a series, so that their number bounds it.
	nodesWithoutEndpoints = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem: "gridview_service", Name: "nodes_without_endpoints", StabilityLevel: metrics.ALPHA,
		Help: "Nodes that route a Service with endpoints to none of them; a Service has a series only while it has such nodes.",
	}, []string{"namespace", "service"})
	routingFallbacks = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: "gridview_routing", Name: "fallbacks_total", StabilityLevel: metrics.ALPHA,
		Help: "Per Service, the increase between two passes of its nodes routing to a fallback tier or to none (net: nodes that came back offset those that fell back), by the Service's topology rule.",
	}, []string{"rule"})
	routingPassSeconds = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem: "gridview_routing", Name: "pass_duration_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Time to read where every Service's nodes route and set the routing metrics.",
		Buckets: metrics.ExponentialBuckets(0.001, 4, 10),
	})
	routingLastPass = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: "gridview_routing", Name: "last_pass_timestamp_seconds", StabilityLevel: metrics.ALPHA,
		Help: "Unix time the routing metrics were last set.",
	})
)

var registerOnce sync.Once

// RegisterMetrics adds the store's metrics to the registry /metrics serves.
func RegisterMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(viewsChanged, recomputeSeconds, ownViewsWaitSeconds, eventsSent, watchersCurrent, logRevision, watchersCutOff, malformedAnnotations, malformedDefaults,
			routingNodes, nodesWithoutEndpoints, routingFallbacks, routingPassSeconds, routingLastPass)
	})
}

func updateMalformedGauge(services map[types.NamespacedName]serviceMeta) {
	count := 0
	for _, meta := range services {
		if meta.malformed != "" {
			count++
		}
	}
	malformedAnnotations.Set(float64(count))
}
