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

package validation

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology"
)

func TestValidateMinReady(t *testing.T) {
	const unit = "superedge.io/nodeunit"
	perKey := func(key string, count int32) []topology.KeyMinReady {
		return []topology.KeyMinReady{{Key: key, Count: count}}
	}
	tests := []struct {
		name     string
		fallback topology.FallbackPolicy
		minReady *topology.MinReady
		wantErrs []string
	}{
		{name: "unset", fallback: topology.FallbackNone},
		{name: "default", fallback: topology.FallbackAny, minReady: &topology.MinReady{Default: ptr.To[int32](2)}},
		{name: "the lowest and the highest count", fallback: topology.FallbackAny,
			minReady: &topology.MinReady{Default: ptr.To[int32](1), PerKey: perKey(unit, 10000)}},
		{name: "per key", fallback: topology.FallbackAny, minReady: &topology.MinReady{PerKey: perKey(unit, 3)}},
		{name: "with fallback None", fallback: topology.FallbackNone, minReady: &topology.MinReady{Default: ptr.To[int32](2)},
			wantErrs: []string{"FieldValueForbidden spec.minReady"}},
		{name: "empty", fallback: topology.FallbackAny, minReady: &topology.MinReady{},
			wantErrs: []string{"FieldValueRequired spec.minReady"}},
		{name: "default of zero", fallback: topology.FallbackAny, minReady: &topology.MinReady{Default: ptr.To[int32](0)},
			wantErrs: []string{"FieldValueInvalid spec.minReady.default"}},
		{name: "default above 10000", fallback: topology.FallbackAny, minReady: &topology.MinReady{Default: ptr.To[int32](10001)},
			wantErrs: []string{"FieldValueInvalid spec.minReady.default"}},
		{name: "negative count", fallback: topology.FallbackAny, minReady: &topology.MinReady{PerKey: perKey(unit, -1)},
			wantErrs: []string{"FieldValueInvalid spec.minReady.perKey[0].count"}},
		{name: "unset count", fallback: topology.FallbackAny, minReady: &topology.MinReady{PerKey: perKey(unit, 0)},
			wantErrs: []string{"FieldValueInvalid spec.minReady.perKey[0].count"}},
		{name: "empty key", fallback: topology.FallbackAny, minReady: &topology.MinReady{PerKey: perKey("", 2)},
			wantErrs: []string{"FieldValueRequired spec.minReady.perKey[0].key"}},
		{name: "key that is no qualified name", fallback: topology.FallbackAny, minReady: &topology.MinReady{PerKey: perKey("node unit", 2)},
			wantErrs: []string{"FieldValueInvalid spec.minReady.perKey[0].key"}},
		{name: "the last resort", fallback: topology.FallbackAny, minReady: &topology.MinReady{PerKey: perKey("*", 2)},
			wantErrs: []string{"FieldValueInvalid spec.minReady.perKey[0].key"}},
		{name: "key the grid does not route by", fallback: topology.FallbackAny,
			minReady: &topology.MinReady{PerKey: perKey("topology.kubernetes.io/zone", 2)},
			wantErrs: []string{"FieldValueNotSupported spec.minReady.perKey[0].key"}},
		{name: "key named twice", fallback: topology.FallbackAny,
			minReady: &topology.MinReady{PerKey: []topology.KeyMinReady{{Key: unit, Count: 2}, {Key: unit, Count: 3}}},
			wantErrs: []string{"FieldValueDuplicate spec.minReady.perKey[1].key"}},
		{name: "every error at once", fallback: topology.FallbackNone,
			minReady: &topology.MinReady{Default: ptr.To[int32](0), PerKey: []topology.KeyMinReady{{Key: "zone", Count: 20000}}},
			wantErrs: []string{
				"FieldValueForbidden spec.minReady",
				"FieldValueInvalid spec.minReady.default",
				"FieldValueNotSupported spec.minReady.perKey[0].key",
				"FieldValueInvalid spec.minReady.perKey[0].count",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sg := validServiceGrid()
			sg.Spec.Fallback = tc.fallback
			sg.Spec.MinReady = tc.minReady
			assertErrors(t, ValidateServiceGrid(sg), tc.wantErrs)
			assertErrors(t, ValidateServiceGridUpdate(sg, validServiceGrid()), tc.wantErrs)
		})
	}
}

// A grid without a key reports that key once: its minReady
// entries are not refused for naming the key the user meant.
func TestValidateMinReadyWithoutGridUniqKey(t *testing.T) {
	sg := validServiceGrid()
	sg.Spec.Fallback = topology.FallbackAny
	sg.Spec.GridUniqKey = ""
	sg.Spec.MinReady = &topology.MinReady{PerKey: []topology.KeyMinReady{{Key: "superedge.io/nodeunit", Count: 2}}}
	assertErrors(t, ValidateServiceGrid(sg), []string{"FieldValueRequired spec.gridUniqKey"})
}
