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

// quietCollections counts the collection cycles run while the views were
// quiet (see collectWhileQuiet).
var quietCollections = metrics.NewCounter(&metrics.CounterOpts{
	Subsystem: "gridview_apiserver", Name: "quiet_collections_total", StabilityLevel: metrics.ALPHA,
	Help: "Garbage collection cycles run while no view changed, ahead of those the next changes would have started.",
})

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(quietCollections) })
}
