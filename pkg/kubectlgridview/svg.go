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
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// The map's geometry, in pixels: sections of cells in a grid, and to the
// right of a fallback section the box of the tier its cells fall back to.
const (
	margin      = 20
	columns     = 8
	cellWidth   = 132
	cellHeight  = 36
	cellGap     = 8
	headerSize  = 24
	sectionGap  = 16
	edgeRun     = 80
	targetWidth = 220
	minWidth    = 760
	labelRunes  = 20
	targetRunes = 34
	legendY     = 92
	legendItem  = 128
	firstY      = 130
)

// Colours by route; noneStroke outlines the groups with no endpoint.
const (
	noneStroke = "#b00020"
	edgeColour = "#9a5b00"
)

func routeColour(route string) string {
	if level, ok := fallbackLevel(route); ok {
		return []string{"#ffd166", "#f6a04d", "#e8743b"}[min(level, 3)-1]
	}
	switch route {
	case v1alpha1.RouteLocal:
		return "#7ccf8a"
	case v1alpha1.RouteAll:
		return "#a9bccf"
	case v1alpha1.RouteNone:
		return "#e05252"
	}
	return "#cccccc"
}

// writeSVG draws m: title, route counts and legend, then the sections.
// Edges are drawn before the cells so that the opaque cells hide where
// the edges of one row pass under the next cells.
func writeSVG(w io.Writer, m routeMap) error {
	doc := svgDoc{Xmlns: "http://www.w3.org/2000/svg", Font: "sans-serif", Title: m.title}
	doc.Elements = append(doc.Elements,
		svgText{X: margin, Y: 30, Size: 18, Weight: "bold", Text: m.title},
		svgText{X: margin, Y: 52, Size: 12, Text: m.subtitle},
		svgGroup{Class: "summary", Elements: []any{svgText{X: margin, Y: 72, Size: 12, Text: countsLine(m.counts)}}},
		legend(m.counts))
	// Targets stand right of the widest section, not of a full row that a
	// small map does not have.
	used := 1
	for _, s := range m.sections {
		used = max(used, min(columns, len(s.cells)))
	}
	targetX := margin + used*(cellWidth+cellGap) + edgeRun
	var edges, cells []any
	y := firstY
	for _, s := range m.sections {
		var sectionEdges, sectionCells []any
		sectionCells, sectionEdges, y = drawSection(s, y, targetX)
		edges = append(edges, sectionEdges...)
		cells = append(cells, sectionCells...)
	}
	doc.Elements = append(doc.Elements, svgGroup{Class: "edges", Elements: edges}, svgGroup{Class: "sections", Elements: cells})
	doc.Width, doc.Height = max(minWidth, targetX+targetWidth+margin), y+margin
	doc.ViewBox = fmt.Sprintf("0 0 %d %d", doc.Width, doc.Height)
	enc := xml.NewEncoder(w)
	enc.Indent("", " ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing the svg: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// drawSection draws s from y down, its target at targetX, and returns its
// elements, its edges and where the next section starts.
func drawSection(s section, y, targetX int) (elements, edges []any, next int) {
	elements = append(elements, svgGroup{Class: "cluster", Route: s.route, Elements: []any{
		svgText{X: margin, Y: y + 16, Size: 13, Weight: "bold", Text: fmt.Sprintf("%s (%d)", s.title, len(s.cells))},
	}})
	top := y + headerSize
	rows := (len(s.cells) + columns - 1) / columns
	targetY := top + (rows*(cellHeight+cellGap)-cellGap-cellHeight)/2
	if s.target != "" {
		// The key on one line and the value on the next, as a zone's key
		// alone may fill the box.
		key, value, found := strings.Cut(s.target, "=")
		if !found {
			key, value = "every endpoint", s.target
		}
		elements = append(elements, svgGroup{Class: "target", Route: s.route, Title: s.target, Elements: []any{
			svgRect{X: targetX, Y: targetY, Width: targetWidth, Height: cellHeight, Rx: 4, Fill: "#ffffff", Stroke: edgeColour, StrokeWidth: 2},
			svgText{X: targetX + 8, Y: targetY + 14, Size: 10, Text: truncate(key, targetRunes)},
			svgText{X: targetX + 8, Y: targetY + 29, Size: 12, Weight: "bold", Text: truncate(value, targetRunes)},
		}})
	}
	for i, c := range s.cells {
		x := margin + i%columns*(cellWidth+cellGap)
		cy := top + i/columns*(cellHeight+cellGap)
		if s.target != "" {
			edges = append(edges, fallbackEdge(x, cy, targetX, targetY))
		}
		elements = append(elements, drawCell(c, x, cy))
	}
	return elements, edges, top + rows*(cellHeight+cellGap) + sectionGap
}

// fallbackEdge runs from the bottom of the cell at x, y down into the gap
// below its row, along the gap to a trunk left of the target, and to the
// target at targetX, targetY: every edge stays visible, where straight ones
// would pass under the cells of their row.
func fallbackEdge(x, y, targetX, targetY int) svgPolyline {
	bus, trunk := y+cellHeight+cellGap/2, targetX-edgeRun/2
	return svgPolyline{Class: "edge fallback", Fill: "none", Stroke: edgeColour, Dash: "6 4",
		Points: fmt.Sprintf("%d,%d %d,%d %d,%d %d,%d %d,%d", x+cellWidth/2, y+cellHeight, x+cellWidth/2, bus,
			trunk, bus, trunk, targetY+cellHeight/2, targetX, targetY+cellHeight/2)}
}

func drawCell(c cell, x, y int) svgGroup {
	stroke, width := "#555555", 1
	if c.route == v1alpha1.RouteNone {
		stroke, width = noneStroke, 2
	}
	class := "cell"
	if c.summary {
		class = "cell summarised"
	}
	return svgGroup{Class: class, Route: c.route, Title: c.detail, Elements: []any{
		svgRect{X: x, Y: y, Width: cellWidth, Height: cellHeight, Rx: 3, Fill: routeColour(c.route), Stroke: stroke, StrokeWidth: width},
		svgText{X: x + 6, Y: y + 15, Size: 11, Weight: "bold", Text: truncate(c.label, labelRunes)},
		svgText{X: x + 6, Y: y + 29, Size: 10, Text: cellCounts(c)},
	}}
}

// legend shows a swatch per route in the map and what a dashed edge means.
func legend(counts []routeCount) svgGroup {
	g := svgGroup{Class: "legend"}
	x := margin
	for _, count := range counts {
		g.Elements = append(g.Elements,
			svgRect{X: x, Y: legendY, Width: 14, Height: 14, Rx: 2, Fill: routeColour(count.route), Stroke: "#555555", StrokeWidth: 1},
			svgText{X: x + 20, Y: legendY + 12, Size: 12, Text: count.route})
		x += legendItem
	}
	g.Elements = append(g.Elements,
		svgPolyline{Class: "legend-edge", Fill: "none", Stroke: edgeColour, Dash: "6 4", Points: fmt.Sprintf("%d,%d %d,%d", x, legendY+7, x+40, legendY+7)},
		svgText{X: x + 48, Y: legendY + 12, Size: 12, Text: "falls back to"})
	return g
}

// countsLine is the groups and nodes of each route, in legend order.
func countsLine(counts []routeCount) string {
	if len(counts) == 0 {
		return "no groups: the cluster has no nodes"
	}
	parts := make([]string, 0, len(counts))
	for _, count := range counts {
		parts = append(parts, fmt.Sprintf("%s: %s, %s", count.route, plural(count.groups, "group"), plural(count.nodes, "node")))
	}
	return strings.Join(parts, " · ")
}

func truncate(s string, runes int) string {
	if r := []rune(s); len(r) > runes {
		return string(r[:runes-1]) + "…"
	}
	return s
}
