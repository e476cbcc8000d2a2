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

package kubectlgridview

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// fallbackLevel is N of "fallback-N".
func fallbackLevel(route string) (int, bool) {
	n, found := strings.CutPrefix(route, "fallback-")
	if !found {
		return 0, false
	}
	level, err := strconv.Atoi(n)
	return level, err == nil
}

// compareRoutes orders routes as the legend lists them: local, fallback-1,
// fallback-2, ..., all, none, then any other.
func compareRoutes(a, b string) int {
	rankA, levelA := legendRank(a)
	rankB, levelB := legendRank(b)
	return cmp.Or(cmp.Compare(rankA, rankB), cmp.Compare(levelA, levelB), strings.Compare(a, b))
}

func legendRank(route string) (rank, level int) {
	if level, ok := fallbackLevel(route); ok {
		return 1, level
	}
	switch route {
	case v1alpha1.RouteLocal:
		return 0, 0
	case v1alpha1.RouteAll:
		return 2, 0
	case v1alpha1.RouteNone:
		return 3, 0
	}
	return 4, 0
}

// sectionRank puts the sections an operator looks for first: no endpoint,
// then fallbacks, then local, then all.
func sectionRank(route string) int {
	if _, ok := fallbackLevel(route); ok {
		return 1
	}
	switch route {
	case v1alpha1.RouteNone:
		return 0
	case v1alpha1.RouteLocal:
		return 2
	case v1alpha1.RouteAll:
		return 3
	}
	return 4
}
