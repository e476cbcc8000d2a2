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

package inputlog

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	leading = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: "gridview_apiserver", Name: "leading", StabilityLevel: metrics.ALPHA,
		Help: "1 while this replica writes gridview's input log and reconciles ServiceGrids on informer events, else 0.",
	})
	supersededGauge = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem: "gridview_apiserver", Name: "engine_superseded", StabilityLevel: metrics.ALPHA,
		Help: "1 while another engine generation than this replica's serves the views (a rolling update between gridview versions): the replica does not serve them, else 0.",
	})
	registerOnce sync.Once
)

// RegisterMetrics registers the log's metrics with the legacy registry.
func RegisterMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(leading, supersededGauge) })
}
