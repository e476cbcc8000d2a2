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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

func TestMapCommand(t *testing.T) {
	hostile := orderedRoutes()
	hostile.Groups[2].Labels[unitKey] = `a"b\c`
	for name, tc := range map[string]struct {
		routes   *v1alpha1.ServiceRoutes
		args     []string
		wantGold string
	}{
		"dot, ordered fallback to zone": {orderedRoutes(), []string{"map", "web", "-n", "demo", "-o", "dot"}, "map-ordered.dot.golden"},
		"dot, any-match falling on *":   {anyMatchRoutes(), []string{"map", "echo", "-n", "demo", "-o", "dot"}, "map-anymatch.dot.golden"},
		"dot, quotes escaped":           {hostile, []string{"map", "web", "-n", "demo", "-o", "dot"}, "map-escaped.dot.golden"},
		"svg by default":                {orderedRoutes(), []string{"map", "web", "-n", "demo"}, "map-ordered.svg.golden"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := run(t, fakeTopology(returning(tc.routes, nil)), nil, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.wantGold, []byte(out))
		})
	}
}

// TestMapHTML: the page embeds the svg and fetches nothing.
func TestMapHTML(t *testing.T) {
	file := filepath.Join(t.TempDir(), "map.html")
	out, err := run(t, fakeTopology(returning(manyRoutes(300, 7, 50), nil)), nil, "map", "web", "-n", "edge", "-o", "html", "--output-file", file)
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing with --output-file", out)
	}
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	start, end := strings.Index(string(page), "<svg"), strings.Index(string(page), "</svg>")
	if !strings.HasPrefix(string(page), "<!DOCTYPE html>") || start < 0 || end < start {
		t.Fatalf("not an html page embedding an svg:\n%.300s", page)
	}
	parseSVG(t, page[start:end+len("</svg>")])
	if external := regexp.MustCompile(`(?i)(src=|href=|<script|<link|url\()`).FindAllString(string(page), -1); len(external) > 0 {
		t.Errorf("the page refers outside itself: %q", external)
	}
}

func TestMapUnknownOutput(t *testing.T) {
	_, err := run(t, fakeTopology(returning(orderedRoutes(), nil)), nil, "map", "web", "-o", "png")
	if want := `unsupported output "png": map draws svg, dot or html`; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
