//go:build gridview_engine_variant

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
	"maps"

	"github.com/gridview/gridview/pkg/topology"
)

// A build with the tag gridview_engine_variant (make build's
// gridview-apiserver-engine-variant) is the next engine generation, one that
// derives every view differently: with one more label. The HA suite rolls
// replicas to it and back to show that clients cross between engines with
// one list each and never meet two contents under one resourceVersion.
const EngineGeneration = releasedGeneration + 1

// VariantLabel is the label the variant engine adds to every view.
const VariantLabel = "gridview.io/engine-variant"

func labelsOf(view *topology.SliceView) map[string]string {
	labels := maps.Clone(view.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[VariantLabel] = "true"
	return labels
}
