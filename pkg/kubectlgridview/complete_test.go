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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corefake "k8s.io/client-go/kubernetes/fake"
)

func TestCompletion(t *testing.T) {
	core := corefake.NewClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo-svc", Namespace: "demo"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ordered", Namespace: "demo"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "other"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "edge-2"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cloud-1"}},
	).CoreV1()
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"routes: the namespace's Services":      {[]string{"__complete", "routes", "-n", "demo", ""}, "echo-svc\nordered\n:4\n"},
		"map: Services by prefix":               {[]string{"__complete", "map", "-n", "demo", "o"}, "ordered\n:4\n"},
		"explain: nodes first":                  {[]string{"__complete", "explain", "edge"}, "edge-1\nedge-2\n:4\n"},
		"explain: then Services":                {[]string{"__complete", "explain", "edge-1", "-n", "other", ""}, "elsewhere\n:4\n"},
		"explain: nothing after the Service":    {[]string{"__complete", "explain", "edge-1", "ordered", ""}, ":4\n"},
		"routes' outputs":                       {[]string{"__complete", "routes", "web", "-o", ""}, "wide\njson\nyaml\n:4\n"},
		"map's outputs":                         {[]string{"__complete", "map", "web", "--output", ""}, "svg\ndot\nhtml\n:4\n"},
		"explain's outputs":                     {[]string{"__complete", "explain", "-o", ""}, "yaml\njson\n:4\n"},
		"routes: nothing after the Service too": {[]string{"__complete", "routes", "ordered", ""}, ":4\n"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := run(t, nil, core, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.want {
				t.Errorf("completions %q, want %q", out, tc.want)
			}
			// kubectl runs kubectl_complete-gridview with the words alone.
			out, err = run(t, nil, core, Args("/usr/local/bin/kubectl_complete-gridview", tc.args[1:])...)
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.want {
				t.Errorf("completions %q, want %q", out, tc.want)
			}
		})
	}
}
