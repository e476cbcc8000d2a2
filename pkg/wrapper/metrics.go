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
	"io"
	"net/http"
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const subsystem = "gridview_wrapper"

var (
	upstreamConnected = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: subsystem, Name: "upstream_connected", StabilityLevel: metrics.ALPHA,
		Help: "1 while the upstream API server answers, 0 while the wrapper serves its last state.",
	})
	objectsServed = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem: subsystem, Name: "objects_served", StabilityLevel: metrics.ALPHA,
		Help: "Objects served to kube-proxy, by resource.",
	}, []string{"resource"})
	watchersOpen = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: subsystem, Name: "watchers", StabilityLevel: metrics.ALPHA,
		Help: "Watches kube-proxy has open on the wrapper.",
	})
	watchEventsSent = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "watch_events_sent_total", StabilityLevel: metrics.ALPHA,
		Help: "Watch events sent to kube-proxy, bookmarks excluded.",
	})
	watchersCutOff = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "watchers_cut_off_total", StabilityLevel: metrics.ALPHA,
		Help: "Watches cut off because kube-proxy fell too far behind, or took nothing for 15 s while an event waited.",
	})
	bytesReceived = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "upstream_received_bytes_total", StabilityLevel: metrics.ALPHA,
		Help: "Bytes of responses received from the upstream API server.",
	})
	localEndpointsInvalid = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "local_endpoint_invalid_total", StabilityLevel: metrics.ALPHA,
		Help: "Distinct bad values of the superedge.io/local-endpoint and local-port annotations, ignored.",
	})
	rejectedViews = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "rejected_views_total", StabilityLevel: metrics.ALPHA,
		Help: "NodeEndpoints received from upstream and neither served nor cached, by reason (foreign_node: another node's view; misnamed: not named <node>..<slice>).",
	}, []string{"reason"})
	cacheRejected = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "cache_rejected_total", StabilityLevel: metrics.ALPHA,
		Help: "Cached states found at start and not served, by reason (unreadable: torn, altered or undecodable; foreign_node: saved for another node or for none).",
	}, []string{"reason"})
	cacheWrittenBytes = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "cache_written_bytes_total", StabilityLevel: metrics.ALPHA,
		Help: "Bytes of the cache files written.",
	})
	cacheSaveErrors = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "cache_save_errors_total", StabilityLevel: metrics.ALPHA,
		Help: "Saves of the cache that failed (a full or read-only disk), each tried again after a second, then twice as long each time up to five minutes.",
	})
	upstreamLists = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "upstream_lists_total", StabilityLevel: metrics.ALPHA,
		Help: "Lists of upstream resources started, failed ones and streaming ones (watches sending initial events) included, by resource: each after the first is a relist.",
	}, []string{"resource"})
	upstreamWatches = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "upstream_watches_total", StabilityLevel: metrics.ALPHA,
		Help: "Watches of upstream resources started, streaming lists included, by resource: each after the first resumes where one ended, or follows a list.",
	}, []string{"resource"})
	bytesSent = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem: subsystem, Name: "sent_bytes_total", StabilityLevel: metrics.ALPHA,
		Help: "Bytes of responses sent to kube-proxy.",
	})
)

var registerOnce sync.Once

// RegisterMetrics adds the wrapper's metrics to the registry /metrics serves.
func RegisterMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(upstreamConnected, objectsServed, watchersOpen, watchEventsSent, watchersCutOff, bytesReceived, bytesSent, localEndpointsInvalid, rejectedViews, cacheRejected, cacheWrittenBytes, cacheSaveErrors, upstreamLists, upstreamWatches)
	})
}

// countReceivedBytes counts the bytes of upstream responses: the WAN traffic
// the wrapper causes.
func countReceivedBytes(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if resp != nil && resp.Body != nil {
			resp.Body = countingBody{ReadCloser: resp.Body}
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

type countingBody struct{ io.ReadCloser }

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	bytesReceived.Add(float64(n))
	return n, err
}
