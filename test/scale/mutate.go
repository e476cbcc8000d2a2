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

import "math/rand/v2"

// The changes the harness measures. Each changes the model and returns what
// it touched; the caller writes the new state of that object.

// FlipEndpoint flips the readiness of a random endpoint of svc and returns
// it and its slice.
func (m *Model) FlipEndpoint(svc *Service, rng *rand.Rand) (*Slice, *Endpoint) {
	sl := svc.Slices[rng.IntN(len(svc.Slices))]
	ep := &sl.Endpoints[rng.IntN(len(sl.Endpoints))]
	ep.Ready = !ep.Ready
	return sl, ep
}

// MoveNode moves node to another unit, chosen at random, with that unit's
// zone, and returns the unit it left.
func (m *Model) MoveNode(node int, rng *rand.Rand) (from int) {
	from = m.Nodes[node].Unit
	to := rng.IntN(m.Units() - 1)
	if to >= from {
		to++
	}
	m.Nodes[node].Unit = to
	return from
}

// SetMode changes the topology annotation of svc.
func (m *Model) SetMode(svc *Service, mode Mode) {
	svc.Mode = mode
}

// ModePatch is the JSON merge patch that gives a Service the annotations of
// mode and removes those of the other modes.
func ModePatch(mode Mode) map[string]any {
	annotations := map[string]any{}
	for _, other := range []Mode{ModeAnyMatch, ModeOrdered} {
		for key := range ModeAnnotations(other) {
			annotations[key] = nil
		}
	}
	for key, value := range ModeAnnotations(mode) {
		annotations[key] = value
	}
	return map[string]any{"metadata": map[string]any{"annotations": annotations}}
}
