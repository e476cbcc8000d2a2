//go:build !gridview_engine_variant

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

import "github.com/gridview/gridview/pkg/topology"

// EngineGeneration is the generation of this build's engine: what it
// derives from the inputs, which its resourceVersions carry.
const EngineGeneration = releasedGeneration

// labelsOf are a view's labels, as the engine derived them.
func labelsOf(view *topology.SliceView) map[string]string { return view.Labels }
