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

package e2e

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
)

// demoMapSVG is the README's picture: `kubectl gridview map ordered -n demo
// -o svg` on the demo, which this test keeps in step with the plugin.
// GRIDVIEW_UPDATE_DEMO_MAP=1 rewrites it.
var demoMapSVG = filepath.Join("..", "..", "docs", "images", "demo-ordered-map.svg")

// kubectlGridview runs `kubectl gridview` through kubectl's plugin
// mechanism: kubectl finds kubectl-gridview on PATH, as a user's would.
func kubectlGridview(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(binDir, "kubectl-gridview")); err != nil {
		t.Fatalf("kubectl-gridview is not in %s: run `make build`", binDir)
	}
	cmd := exec.Command(filepath.Join(binDir, "kubectl"), append([]string{"gridview"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.AdminKubeconfig, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl gridview %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// expectPluginExplainsTheDemo runs the commands make run prints against the
// demo and checks what they say.
func expectPluginExplainsTheDemo(t *testing.T) {
	t.Helper()
	for _, tc := range []struct {
		args []string
		want []string
		// addresses, when set, are those the Addresses line lists.
		addresses sets.Set[string]
	}{
		{args: []string{"explain", "edge-1", "ordered", "-n", "demo"}, want: []string{
			`(?m)^Tiers:\s+superedge.io/nodeunit=unit-a\s+2/2 ready\s+needs 1\s+← chosen$`, `(?m)^Route:\s+local$`,
		}, addresses: demoAddresses(t, "ordered", "unit-a")},
		{args: []string{"explain", "edge-3", "ordered", "-n", "demo"}, want: []string{
			`(?m)^\s+\*\s+2/2 ready\s+needs 1\s+← chosen$`, `(?m)^Route:\s+fallback-1$`,
			`(?m)^Reason:\s+superedge.io/nodeunit=unit-b has 0 ready endpoints of 0; fell back to every endpoint`,
		}},
		{args: []string{"explain", "edge-5", "echo-svc", "-n", "demo"}, want: []string{
			`(?m)^Route:\s+none$`, `(?m)^Addresses:\s+<none>$`, `the node routes nowhere`,
		}},
		{args: []string{"explain", "edge-5", "echo-svc", "-n", "demo", "--label", "superedge.io/nodeunit=unit-a"}, want: []string{
			`(?m)^What if:\s+labels superedge.io/nodeunit=unit-a$`, `(?m)^Route:\s+local$`,
		}, addresses: demoAddresses(t, "echo", "unit-a")},
		{args: []string{"routes", "echo-svc", "-n", "demo", "-o", "wide"}, want: []string{
			`(?m)^GROUP\s+NODES\s+ROUTE\s+TIER\s+READY\s+SAMPLE NODES$`,
			`(?m)^superedge.io/nodeunit=unit-a\s+2\s+local\s+superedge.io/nodeunit=unit-a\s+2\s+edge-1,edge-2$`,
			`(?m)^superedge.io/nodeunit=unit-c\s+1\s+none\s+-\s+0\s+edge-5$`,
		}},
		{args: []string{"routes", "ordered", "-n", "demo"}, want: []string{
			`(?m)^superedge.io/nodeunit=unit-b\s+2\s+fallback-1\s+\*\s+2$`,
			`(?m)^superedge.io/nodeunit=unit-c\s+1\s+fallback-1\s+\*\s+2$`,
		}},
	} {
		out := kubectlGridview(t, tc.args...)
		for _, want := range tc.want {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("kubectl gridview %s: no match for %s in\n%s", strings.Join(tc.args, " "), want, out)
			}
		}
		if tc.addresses != nil {
			line := regexp.MustCompile(`(?m)^Addresses:\s+(.*)$`).FindStringSubmatch(out)
			if line == nil || !sets.New(strings.Split(line[1], ", ")...).Equal(tc.addresses) {
				t.Errorf("kubectl gridview %s: addresses %q, want %v", strings.Join(tc.args, " "), line, sets.List(tc.addresses))
			}
		}
	}

	svg := kubectlGridview(t, "map", "ordered", "-n", "demo", "-o", "svg")
	if err := checkDemoMap(svg); err != nil {
		t.Errorf("kubectl gridview map ordered -o svg: %v\n%s", err, svg)
	}
	if os.Getenv("GRIDVIEW_UPDATE_DEMO_MAP") != "" {
		if err := os.WriteFile(demoMapSVG, []byte(svg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(demoMapSVG)
	if err != nil || string(committed) != svg {
		t.Errorf("%s is not what the plugin draws of the demo (%v): rerun with GRIDVIEW_UPDATE_DEMO_MAP=1", demoMapSVG, err)
	}
}

// checkDemoMap checks that the map is XML with an <svg> root that names the
// three units and draws unit-b's and unit-c's fallback dashed.
func checkDemoMap(svg string) error {
	decoder := xml.NewDecoder(strings.NewReader(svg))
	var root string
	texts, dashed := "", 0
	for {
		token, err := decoder.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("not XML: %w", err)
		}
		switch el := token.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
			}
			for _, attr := range el.Attr {
				if attr.Name.Local == "stroke-dasharray" {
					dashed++
				}
			}
		case xml.CharData:
			texts += string(bytes.TrimSpace(el)) + "\n"
		}
	}
	switch {
	case root != "svg":
		return fmt.Errorf("the root is <%s>, not <svg>", root)
	case !strings.Contains(texts, "unit-a") || !strings.Contains(texts, "unit-b") || !strings.Contains(texts, "unit-c"):
		return fmt.Errorf("the map does not name the three units")
	case dashed < 3:
		return fmt.Errorf("%d dashed elements, want the legend's and unit-b's and unit-c's fallback edges", dashed)
	}
	return nil
}
