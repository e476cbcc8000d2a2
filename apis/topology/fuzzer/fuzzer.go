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

// Package fuzzer fills topology.gridview.io objects with random values that
// survive a round trip through every version.
package fuzzer

import (
	corev1 "k8s.io/api/core/v1"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	"github.com/gridview/gridview/apis/topology"
)

// Funcs returns the fuzzer functions of the topology.gridview.io group.
var Funcs = func(runtimeserializer.CodecFactory) []interface{} {
	return []interface{}{
		func(spec *topology.ServiceGridSpec, c randfill.Continue) {
			c.FillNoCustom(spec)
			// An empty fallback is defaulted on decoding, so it never round-trips.
			if spec.Fallback == "" {
				spec.Fallback = topology.FallbackNone
			}
		},
		// The +default markers of core/v1 apply inside the template too.
		func(port *corev1.ServicePort, c randfill.Continue) {
			c.FillNoCustom(port)
			if port.Protocol == "" {
				port.Protocol = corev1.ProtocolTCP
			}
		},
		// Only one arm of an IntOrString is serialized.
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31())
			} else {
				*v = intstr.FromString(c.String(0))
			}
		},
	}
}
