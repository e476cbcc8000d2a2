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
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// helmFieldManager owns the dry run's fields: force-applied over the
// suite's own gridview objects, they would otherwise conflict.
const helmFieldManager = "gridview-e2e-helm-dry-run"

// The chart's objects, with the default values and with the HA values, pass
// kube-apiserver's validation and admission in a server-side dry run on the
// suite's control plane, which already runs gridview and its APIService:
// nothing changes.
func TestHelmChartDryRun(t *testing.T) {
	helm := filepath.Join(binDir, "helm")
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("the chart's dry run needs helm in %s: run `make tools` (%v)", binDir, err)
	}
	chart, err := filepath.Abs(filepath.Join("..", "..", "artifacts", "charts", "gridview"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		values []string
	}{
		{name: "default values"},
		{name: "HA values", values: []string{"-f", filepath.Join(chart, "ci", "ha-values.yaml")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.Command(helm, append([]string{"template", "gridview", chart, "--namespace", "gridview-system"}, tc.values...)...)
			cmd.Stderr = &stderr
			rendered, err := cmd.Output()
			if err != nil {
				t.Fatalf("helm template: %v: %s", err, stderr.String())
			}
			file := filepath.Join(t.TempDir(), "gridview.yaml")
			if err := os.WriteFile(file, rendered, 0o600); err != nil {
				t.Fatal(err)
			}
			objects := len(regexp.MustCompile(`(?m)^kind: `).FindAll(rendered, -1))

			before := resourceVersions(t, file)
			out := mustKubectl(t, "apply", "--server-side", "--dry-run=server", "--force-conflicts",
				"--field-manager="+helmFieldManager, "-f", file)
			if applied := strings.Count(out, "serverside-applied (server dry run)"); applied != objects {
				t.Errorf("the dry run applied %d objects of the %d rendered:\n%s", applied, objects, out)
			}
			if after := resourceVersions(t, file); !maps.Equal(before, after) {
				t.Errorf("the dry run changed objects: resourceVersions before %v, after %v", before, after)
			}
			t.Logf("%d objects, %d of them already in the cluster, applied with a server-side dry run", objects, len(before))
		})
	}
}

// resourceVersions maps kind/namespace/name to the resourceVersion of those
// objects of file that exist.
func resourceVersions(t *testing.T, file string) map[string]string {
	t.Helper()
	out := mustKubectl(t, "get", "-f", file, "--ignore-not-found", "-o",
		`jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}={.metadata.resourceVersion}{"\n"}{end}`)
	versions := map[string]string{}
	for _, line := range strings.Fields(out) {
		object, version, _ := strings.Cut(line, "=")
		versions[object] = version
	}
	return versions
}
