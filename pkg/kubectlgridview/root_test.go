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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

func TestHelp(t *testing.T) {
	out, err := run(t, nil, nil, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"kubectl gridview [command]",
		"explain     Explain why a node routes",
		"routes      List where every group of nodes routes",
		"map         Draw where every group of nodes routes",
		"completion  Generate the autocompletion script",
		"they take no -A/--all-namespaces",
		"--kubeconfig string", "--context string", "-n, --namespace string",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

// TestNamespace: without -n, the namespace is the kubeconfig context's, as
// kubectl's; -n wins.
func TestNamespace(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: edge, context: {cluster: c, namespace: from-context}}]
current-context: edge
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"the context's":   {[]string{"routes", "web"}, "from-context"},
		"-n wins":         {[]string{"routes", "web", "-n", "demo"}, "demo"},
		"explain, too":    {[]string{"explain", "edge-1", "web"}, "from-context"},
		"map with -n too": {[]string{"map", "web", "--namespace", "demo"}, "demo"},
	} {
		t.Run(name, func(t *testing.T) {
			var asked string
			client := fakeTopology(func(action clienttesting.Action) (bool, runtime.Object, error) {
				asked = action.GetNamespace()
				if create, ok := action.(clienttesting.CreateAction); ok {
					return true, create.GetObject(), nil
				}
				return true, orderedRoutes(), nil
			})
			// run's own empty --kubeconfig comes first; this one wins.
			if _, err := run(t, client, nil, append(tc.args, "--kubeconfig", kubeconfig)...); err != nil {
				t.Fatal(err)
			}
			if asked != tc.want {
				t.Errorf("asked in namespace %q, want %q", asked, tc.want)
			}
		})
	}
}
