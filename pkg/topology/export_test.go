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

package topology

import (
	"fmt"
	"reflect"
	"slices"
)

// Test-only exports for the external tests of package topology_test, which
// cannot be internal tests: they use topologytest, which imports topology.

var CompareServices = compareServices

// CheckIndexes compares what e derived incrementally with what fresh, an
// engine loaded from scratch with the same objects, derived: it returns the
// first index that differs.
func CheckIndexes(e, fresh *Engine) error {
	for name, pair := range map[string][2]any{
		"byLabel":      {e.byLabel, fresh.byLabel},
		"groupings":    {groupsOf(e), groupsOf(fresh)},
		"keyServices":  {e.keyServices, fresh.keyServices},
		"tiers":        {e.tiers, fresh.tiers},
		"tierServices": {e.tierServices, fresh.tierServices},
		"nodeServices": {e.nodeServices, fresh.nodeServices},
		"serviceNodes": {e.serviceNodes, fresh.serviceNodes},
		"inheriting":   {e.inheriting, fresh.inheriting},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			return fmt.Errorf("%s\n got %+v\nwant %+v", name, pair[0], pair[1])
		}
	}
	return nil
}

// groupsOf is what the groupings hold, without how many Services use them
// (deleted Services leave none behind) or the capacity of their lists.
func groupsOf(e *Engine) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for id, g := range e.groupings {
		groups := map[string][]string{}
		for values, nodes := range g.groups {
			groups[values] = slices.Clip(nodes)
		}
		out[id] = groups
	}
	return out
}
