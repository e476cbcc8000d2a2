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
	// summaries indexes the summary cells by label; indexes, not pointers,
	// as appending to cells moves them.
	summaries map[string]int
}

// cell is one group of nodes, or a summary of groups.
type cell struct {
	label   string
	detail  string
	route   string
	nodes   int
	ready   int
	summary bool
	groups  int
}

func newRouteMap(routes *v1alpha1.ServiceRoutes) routeMap {
	summarise := len(routes.Groups) > summariseAbove
	perKey := summaryKey(routes.Keys)
	sections := map[string]*section{}
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
		if summarised {
			sections[s.title].count(g, perKey)
		} else {
			sections[s.title].cells = append(sections[s.title].cells, groupCell(routes.Keys, g))
		}
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

// count counts g in the summary cell of its value of perKey.
func (s *section) count(g v1alpha1.RouteGroup, perKey string) {
	label, name := "all groups", "all groups"
	if perKey != "" {
		label = cmp.Or(g.Labels[perKey], "<none>")
		name = perKey + "=" + label
	}
	at, ok := s.summaries[label]
	if !ok {
		if s.summaries == nil {
			s.summaries = map[string]int{}
		}
		at = len(s.cells)
		s.summaries[label] = at
		s.cells = append(s.cells, cell{label: label, route: g.Route, summary: true})
	}
	sum := &s.cells[at]
	sum.groups++
	sum.nodes += int(g.Nodes)
	sum.detail = fmt.Sprintf("%s: %s, %s, %s", name, plural(sum.groups, "group"), plural(sum.nodes, "node"), g.Route)
}

func groupCell(keys []string, g v1alpha1.RouteGroup) cell {
	return cell{
		label:  groupValue(keys, g.Labels),
		detail: fmt.Sprintf("%s: %s (%s), %s, tier %s, %d ready", labelList(g.Labels, keys), plural(int(g.Nodes), "node"), sampleNodes(g), g.Route, chosenTier(g), g.ReadyEndpoints),
		route:  g.Route,
		nodes:  int(g.Nodes),
		ready:  int(g.ReadyEndpoints),
	}
}

// cellCounts is a cell's second line.
func cellCounts(c cell) string {
	if c.summary {
		return fmt.Sprintf("%s · %s", plural(c.groups, "group"), plural(c.nodes, "node"))
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
