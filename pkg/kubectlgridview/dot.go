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
	"fmt"
	"io"
	"strings"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// writeDOT writes m as a Graphviz digraph: a cluster per section, a node
// per cell, and a dashed edge from each fallback cell to its target.
func writeDOT(w io.Writer, m routeMap) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(m.title))
	fmt.Fprintf(&b, "  graph [rankdir=LR, labelloc=t, fontname=\"sans-serif\", label=%s];\n", dotQuote(m.title+"\n"+m.subtitle+"\n"+countsLine(m.counts)))
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"sans-serif\", fontsize=10];\n")
	for i, s := range m.sections {
		fmt.Fprintf(&b, "  subgraph \"cluster_%d\" {\n    label=%s;\n", i, dotQuote(fmt.Sprintf("%s (%d)", s.title, len(s.cells))))
		for j, c := range s.cells {
			attrs := fmt.Sprintf("label=%s, tooltip=%s, fillcolor=%s", dotQuote(c.label+"\n"+cellCounts(c)), dotQuote(c.detail), dotQuote(routeColour(c.route)))
			if c.route == v1alpha1.RouteNone {
				attrs += fmt.Sprintf(", color=%s, penwidth=2", dotQuote(noneStroke))
			}
			fmt.Fprintf(&b, "    \"c%d_%d\" [%s];\n", i, j, attrs)
		}
		b.WriteString("  }\n")
		if s.target == "" {
			continue
		}
		fmt.Fprintf(&b, "  \"t%d\" [label=%s, style=bold, color=%s];\n", i, dotQuote(s.target), dotQuote(edgeColour))
		for j := range s.cells {
			fmt.Fprintf(&b, "  \"c%d_%d\" -> \"t%d\" [style=dashed, color=%s];\n", i, j, i, dotQuote(edgeColour))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// dotQuote is s as a DOT quoted string: a backslash and a quote are
// escaped, a newline becomes DOT's \n.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
