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
	"bytes"
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// xmlNode is any element of a parsed SVG.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xmlNode  `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n xmlNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// find lists the elements below n (n included) that match.
func (n xmlNode) find(match func(xmlNode) bool) []xmlNode {
	var found []xmlNode
	if match(n) {
		found = append(found, n)
	}
	for _, child := range n.Children {
		found = append(found, child.find(match)...)
	}
	return found
}

// text is every text below n, as a reader of the picture sees it.
func (n xmlNode) text() string {
	s := n.Text
	for _, child := range n.Children {
		s += child.text()
	}
	return s
}

func parseSVG(t *testing.T, svg []byte) xmlNode {
	t.Helper()
	var root xmlNode
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatalf("the svg does not parse: %v", err)
	}
	if root.XMLName.Local != "svg" {
		t.Fatalf("root element %q, want svg", root.XMLName.Local)
	}
	return root
}

func withClass(class string) func(xmlNode) bool {
	return func(n xmlNode) bool { return n.XMLName.Local == "g" && n.attr("class") == class }
}

// manyRoutes has n groups of 10 nodes in 20 zones: every fallbackEvery-th
// group falls back to its zone, every noneEvery-th has no endpoint, the
// others are local. The groups are shuffled, as a server may send them.
func manyRoutes(n, fallbackEvery, noneEvery int) *v1alpha1.ServiceRoutes {
	routes := &v1alpha1.ServiceRoutes{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "edge"},
		Rule:       "Gridview", Mode: v1alpha1.TopologyModeOrdered, Keys: []string{unitKey, zoneKey},
		Nodes: int32(10 * n),
	}
	for i := range n {
		zone := fmt.Sprintf("zone-%02d", i%20)
		g := v1alpha1.RouteGroup{
			Labels: map[string]string{unitKey: fmt.Sprintf("unit-%04d", i), zoneKey: zone}, Nodes: 10,
			SampleNodes: []string{fmt.Sprintf("node-%04d-0", i), fmt.Sprintf("node-%04d-1", i), fmt.Sprintf("node-%04d-2", i)},
			Route:       "local", ChosenKey: unitKey, ChosenValue: fmt.Sprintf("unit-%04d", i), ReadyEndpoints: 3,
		}
		switch {
		case i%noneEvery == 0:
			g.Route, g.ChosenKey, g.ChosenValue, g.ReadyEndpoints = "none", "", "", 0
		case i%fallbackEvery == 0:
			g.Route, g.ChosenKey, g.ChosenValue, g.ReadyEndpoints = "fallback-1", zoneKey, zone, 12
		}
		routes.Groups = append(routes.Groups, g)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { routes.Groups[i], routes.Groups[j] = routes.Groups[j], routes.Groups[i] })
	return routes
}

func renderSVG(t *testing.T, routes *v1alpha1.ServiceRoutes) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writeSVG(&b, newRouteMap(routes)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSVGStructure(t *testing.T) {
	hostile := orderedRoutes()
	hostile.Groups[2].Labels[unitKey] = `a<&"b'>`
	// 201 groups: 199 local in zone-a, one local alone in zone-b, one none.
	lone := manyRoutes(201, 1000, 1000)
	for i := range lone.Groups {
		lone.Groups[i].Labels[zoneKey] = "zone-a"
	}
	for i, g := range lone.Groups {
		if g.Route == v1alpha1.RouteLocal {
			lone.Groups[i].Labels[zoneKey] = "zone-b"
			break
		}
	}
	for name, tc := range map[string]struct {
		routes       *v1alpha1.ServiceRoutes
		wantCells    int // drawn one by one
		wantSummary  int
		wantEdges    int
		wantNone     int
		wantTargets  []string
		wantTextHas  string
		maxBytes     int
		wantSections []string
	}{
		"ordered fallback to zone": {routes: orderedRoutes(), wantCells: 5, wantEdges: 2, wantNone: 1,
			wantTargets:  []string{zoneKey + "=east-1", zoneKey + "=north-1"},
			wantSections: []string{"no endpoint (1)", "fallback-1 to " + zoneKey + "=east-1 (1)", "fallback-1 to " + zoneKey + "=north-1 (1)", "local (2)"}},
		"labels escaped": {routes: hostile, wantCells: 5, wantEdges: 2, wantNone: 1, wantTextHas: `a<&"b'>`,
			wantTargets: []string{zoneKey + "=east-1", zoneKey + "=north-1"}},
		"any-match falling on *": {routes: anyMatchRoutes(), wantCells: 2, wantEdges: 1, wantTargets: []string{"*"}},
		"all, not pruned":        {routes: unprunedRoutes(), wantCells: 1, wantSections: []string{"all endpoints (not pruned) (1)"}},
		"200 groups, each drawn": {routes: manyRoutes(200, 7, 50), wantCells: 200, wantEdges: 28, wantNone: 4, maxBytes: 1 << 20},
		// 1,000 groups: 40 fall back, 10 have none, the 950 local ones are
		// counted in one cell per zone they are in (19: zone-00's fall back).
		"1,000 groups, local summarised": {routes: manyRoutes(1000, 20, 100), wantCells: 50, wantSummary: 19, wantEdges: 40, wantNone: 10, maxBytes: 2 << 20},
		"a summary of one group": {routes: lone, wantCells: 1, wantSummary: 2, wantNone: 1, wantTextHas: "1 group · 10 nodes",
			wantSections: []string{"no endpoint (1)", "local, counted per " + zoneKey + " (2)"}},
		"no nodes": {routes: &v1alpha1.ServiceRoutes{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"}, Mode: v1alpha1.TopologyModeNone},
			wantTargets: []string{}, wantSections: []string{}},
		"1,000 groups, all fall back": {routes: manyRoutes(1000, 1, 2000), wantCells: 1000, wantEdges: 999, wantNone: 1, maxBytes: 2 << 20},
	} {
		t.Run(name, func(t *testing.T) {
			svg := renderSVG(t, tc.routes)
			root := parseSVG(t, svg)
			if tc.maxBytes > 0 && len(svg) > tc.maxBytes {
				t.Errorf("svg of %d bytes, want at most %d", len(svg), tc.maxBytes)
			}
			cells := root.find(withClass("cell"))
			if len(cells) != tc.wantCells {
				t.Errorf("%d cells, want %d", len(cells), tc.wantCells)
			}
			if summaries := root.find(withClass("cell summarised")); len(summaries) != tc.wantSummary {
				t.Errorf("%d summarised cells, want %d", len(summaries), tc.wantSummary)
			}
			edges := root.find(func(n xmlNode) bool { return n.XMLName.Local == "polyline" && n.attr("class") == "edge fallback" })
			if len(edges) != tc.wantEdges {
				t.Errorf("%d fallback edges, want %d", len(edges), tc.wantEdges)
			}
			for _, edge := range edges {
				if edge.attr("stroke-dasharray") == "" {
					t.Errorf("fallback edge %v is not dashed", edge.Attrs)
				}
			}
			var none int
			for _, c := range cells {
				rect := c.find(func(n xmlNode) bool { return n.XMLName.Local == "rect" })[0]
				red := rect.attr("fill") == routeColour(v1alpha1.RouteNone) && rect.attr("stroke") == noneStroke
				if c.attr("data-route") == v1alpha1.RouteNone {
					none++
				}
				if red != (c.attr("data-route") == v1alpha1.RouteNone) {
					t.Errorf("cell %q of route %s: red %v", c.text(), c.attr("data-route"), red)
				}
			}
			if none != tc.wantNone {
				t.Errorf("%d cells of route none, want %d", none, tc.wantNone)
			}
			var targets []string
			for _, target := range root.find(withClass("target")) {
				targets = append(targets, target.find(func(n xmlNode) bool { return n.XMLName.Local == "title" })[0].Text)
			}
			if tc.wantTargets != nil && strings.Join(targets, "|") != strings.Join(tc.wantTargets, "|") {
				t.Errorf("targets %q, want %q", targets, tc.wantTargets)
			}
			legend := root.find(withClass("legend"))
			if len(legend) != 1 || !strings.Contains(legend[0].text(), "falls back to") {
				t.Errorf("legend %v, want one with the dashed edge explained", legend)
			}
			if summary := root.find(withClass("summary")); len(summary) != 1 || !strings.Contains(summary[0].text(), "group") {
				t.Errorf("summary %v, want one counting groups", summary)
			}
			if tc.wantTextHas != "" && !strings.Contains(root.text(), tc.wantTextHas) {
				t.Errorf("the svg's text lacks %q", tc.wantTextHas)
			}
			var sections []string
			for _, s := range root.find(withClass("cluster")) {
				sections = append(sections, strings.TrimSpace(s.text()))
			}
			if tc.wantSections != nil && strings.Join(sections, "|") != strings.Join(tc.wantSections, "|") {
				t.Errorf("sections %q, want %q", sections, tc.wantSections)
			}
		})
	}
}

// TestSVGDeterministic: the README commits a map, so the same routes in
// another order draw the same bytes.
func TestSVGDeterministic(t *testing.T) {
	a, b := manyRoutes(300, 7, 50), manyRoutes(300, 7, 50)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(b.Groups), func(i, j int) { b.Groups[i], b.Groups[j] = b.Groups[j], b.Groups[i] })
	if !bytes.Equal(renderSVG(t, a), renderSVG(t, b)) {
		t.Error("the same groups in another order draw another svg")
	}
}
