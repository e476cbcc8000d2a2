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

package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// builtImages are the images make images builds (hack/images).
var builtImages = []string{"gridview-apiserver", "gridview-wrapper", "kubectl-gridview"}

// TestImagesAreTheBuiltOnes checks every gridview image the manifests run is
// one that make images builds, tagged with VERSION as make images tags it:
// never :latest, which nothing builds.
func TestImagesAreTheBuiltOnes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(data))
	checked := map[string]bool{}
	for _, m := range manifests(t) {
		var pod corev1.PodSpec
		switch obj := m.obj.(type) {
		case *appsv1.Deployment:
			pod = obj.Spec.Template.Spec
		case *appsv1.DaemonSet:
			pod = obj.Spec.Template.Spec
		case *appsv1.StatefulSet:
			pod = obj.Spec.Template.Spec
		default:
			continue
		}
		for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
			repository, tag, _ := strings.Cut(c.Image, ":")
			name, ours := strings.CutPrefix(repository, "ghcr.io/gridview/")
			if !ours {
				continue
			}
			if !slices.Contains(builtImages, name) || tag != version {
				t.Errorf("%s container %s runs %s, want one of ghcr.io/gridview/{%s}:%s", m, c.Name, c.Image, strings.Join(builtImages, ","), version)
			}
			checked[name] = true
		}
	}
	for _, name := range []string{"gridview-apiserver", "gridview-wrapper"} {
		if !checked[name] {
			t.Errorf("no manifest runs ghcr.io/gridview/%s", name)
		}
	}
}
