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
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gridview/gridview/apis/topology"
	topologyengine "github.com/gridview/gridview/pkg/topology"
)

// validateMinReady checks spec.minReady against the keys the grid routes by.
// The bounds are the annotation's: a count the engine would ignore is refused
// here, where the user sees it, rather than reported later on the Service.
func validateMinReady(spec *topology.ServiceGridSpec, path *field.Path) field.ErrorList {
	m := spec.MinReady
	if m == nil {
		return nil
	}
	var allErrs field.ErrorList
	// With None a node never leaves its grid unit, so no count could change
	// where it routes: a minReady there is a mistake, not a no-op.
	if spec.Fallback != topology.FallbackAny {
		allErrs = append(allErrs, field.Forbidden(path, "takes effect only with fallback Any: with None a node never routes outside its grid unit"))
	}
	if m.Default == nil && len(m.PerKey) == 0 {
		return append(allErrs, field.Required(path, "set default, perKey or both"))
	}
	if m.Default != nil {
		allErrs = append(allErrs, validateCount(*m.Default, path.Child("default"))...)
	}
	// The grid's Service lists gridUniqKey then "*", and "*" needs no count.
	gridKeys := []string{spec.GridUniqKey}
	seen := sets.New[string]()
	for i, entry := range m.PerKey {
		entryPath := path.Child("perKey").Index(i)
		keyPath := entryPath.Child("key")
		msgs := validation.IsQualifiedName(entry.Key)
		switch {
		case entry.Key == "":
			allErrs = append(allErrs, field.Required(keyPath, "the node label key of the tier"))
		case seen.Has(entry.Key):
			allErrs = append(allErrs, field.Duplicate(keyPath, entry.Key))
		case len(msgs) > 0:
			for _, msg := range msgs {
				allErrs = append(allErrs, field.Invalid(keyPath, entry.Key, msg))
			}
		case spec.GridUniqKey != "" && entry.Key != spec.GridUniqKey:
			allErrs = append(allErrs, field.NotSupported(keyPath, entry.Key, gridKeys))
		}
		seen.Insert(entry.Key)
		allErrs = append(allErrs, validateCount(entry.Count, entryPath.Child("count"))...)
	}
	return allErrs
}

func validateCount(n int32, path *field.Path) field.ErrorList {
	if n < topologyengine.MinReadyLowest || n > topologyengine.MinReadyHighest {
		return field.ErrorList{field.Invalid(path, n, validation.InclusiveRangeError(topologyengine.MinReadyLowest, topologyengine.MinReadyHighest))}
	}
	return nil
}
