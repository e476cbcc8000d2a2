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
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// summariseAbove is how many groups a map draws one by one; above it, the
// groups that route as they should (local or all) are drawn as one cell
// per value of the rule's second key, while every group that falls back or
// has no endpoint is still drawn: those are what an operator looks for.
const summariseAbove = 200

// routeMap is what the svg, dot and html maps draw: sections of cells, one
// section per target the cells route to.
type routeMap struct {
	title    string
	subtitle string
	counts   []routeCount
	sections []section
}

// routeCount is how many groups and nodes take one route.
type routeCount struct {
	route         string
	groups, nodes int
}

// section is the cells that route to one target. Only a fallback section
// has a target, a tier of some other value that its cells' edges point to.
type section struct {
	title  string
	route  string
	target string
	cells  []cell
}

// cell is one group of nodes, or with groups > 1 the summary of several.
type cell struct {
	label  string
	detail string
	route  string
	nodes  int
	ready  int
	groups int
}

func newRouteMap(routes *v1alpha1.ServiceRoutes) routeMap {
	summarise := len(routes.Groups) > summariseAbove
	perKey := summaryKey(routes.Keys)
	sections := map[string]*section{}
	summaries := map[string]int{}
	counts := map[string]*routeCount{}
	for _, g := range sortedGroups(routes) {
		count := counts[g.Route]
		if count == nil {
			count = &routeCount{route: g.Route}
			counts[g.Route] = count
		}
		count.groups++
		count.nodes += int(g.Nodes)

		summarised := summarise && (g.Route == v1alpha1.RouteLocal || g.Route == v1alpha1.RouteAll)
		s := sectionOf(g, summarised, perKey)
		if sections[s.title] == nil {
			sections[s.title] = &s
		}
		if !summarised {
			sections[s.title].cells = append(sections[s.title].cells, groupCell(routes.Keys, g))
			continue
		}
		// Indexes, not pointers: appending to cells moves them.
		label, name := "all groups", "all groups"
		if perKey != "" {
			label = cmp.Or(g.Labels[perKey], "<none>")
			name = perKey + "=" + label
		}
		at, ok := summaries[s.title+"\x00"+label]
		if !ok {
			at = len(sections[s.title].cells)
			summaries[s.title+"\x00"+label] = at
			sections[s.title].cells = append(sections[s.title].cells, cell{label: label, route: g.Route})
		}
		sum := &sections[s.title].cells[at]
		sum.groups++
		sum.nodes += int(g.Nodes)
		sum.detail = fmt.Sprintf("%s: %s, %s, %s", name, plural(sum.groups, "group"), plural(sum.nodes, "node"), g.Route)
	}
	m := routeMap{title: fmt.Sprintf("Service %s/%s", routes.Namespace, routes.Name), subtitle: routesSummary(routes)}
	for _, count := range counts {
		m.counts = append(m.counts, *count)
	}
	slices.SortFunc(m.counts, func(a, b routeCount) int { return compareRoutes(a.route, b.route) })
	for _, s := range sections {
		m.sections = append(m.sections, *s)
	}
	slices.SortFunc(m.sections, func(a, b section) int {
		return cmp.Or(cmp.Compare(sectionRank(a.route), sectionRank(b.route)), compareRoutes(a.route, b.route), strings.Compare(a.title, b.title))
	})
	return m
}

func groupCell(keys []string, g v1alpha1.RouteGroup) cell {
	return cell{
		label:  groupValue(keys, g.Labels),
		detail: fmt.Sprintf("%s: %s (%s), %s, tier %s, %d ready", labelList(g.Labels, keys), plural(int(g.Nodes), "node"), sampleNodes(g), g.Route, chosenTier(g), g.ReadyEndpoints),
		route:  g.Route,
		nodes:  int(g.Nodes),
		ready:  int(g.ReadyEndpoints),
		groups: 1,
	}
}

// cellCounts is a cell's second line.
func cellCounts(c cell) string {
	if c.groups > 1 {
		return fmt.Sprintf("%d groups · %s", c.groups, plural(c.nodes, "node"))
	}
	return fmt.Sprintf("%s · %d ready", plural(c.nodes, "node"), c.ready)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// sectionOf is the empty section g's cell belongs in; a summarised one
// counts its groups per value of perKey.
func sectionOf(g v1alpha1.RouteGroup, summarised bool, perKey string) section {
	counted := ""
	if summarised {
		counted = ", counted per " + cmp.Or(perKey, "route")
	}
	switch g.Route {
	case v1alpha1.RouteNone:
		return section{title: "no endpoint", route: g.Route}
	case v1alpha1.RouteAll:
		return section{title: "all endpoints (not pruned)" + counted, route: g.Route}
	case v1alpha1.RouteLocal:
		return section{title: "local" + counted, route: g.Route}
	}
	target := chosenTier(g)
	return section{title: g.Route + " to " + target, route: g.Route, target: target}
}

// groupValue is a cell's short label: the group's value of the first key it
// has; the section and the tooltip name the keys.
func groupValue(keys []string, labels map[string]string) string {
	for _, key := range keys {
		if value, ok := labels[key]; ok {
			return value
		}
	}
	return "<none>"
}

// summaryKey is the key summary cells count groups by: the rule's second
// label key (a zone, say), or none when the rule has a single one.
func summaryKey(keys []string) string {
	var labelKeys []string
	for _, key := range keys {
		if key != "*" {
			labelKeys = append(labelKeys, key)
		}
	}
	if len(labelKeys) < 2 {
		return ""
	}
	return labelKeys[1]
}

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
