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
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// helmMetadata are the labels of Helm's conventions on the chart's objects
// and pod templates, and the annotation that keeps the embedded etcd's claim
// on `helm uninstall` (kubectl delete -k deletes it only when asked to):
// Helm's bookkeeping, which artifacts/ does not carry.
var (
	helmLabels      = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}
	helmAnnotations = []string{"helm.sh/resource-policy"}
)

// leftToOperator is the one object the kustomize install has that the chart
// leaves to the operator: the release's namespace, which the chart's README
// says to create and label beforehand. Helm stores the release in that
// namespace before it creates any of the chart's objects (helm/helm#10976),
// so the chart's own Namespace could never be created in time; and as a
// release object `helm uninstall` would delete it, and with it the embedded
// etcd's claim that the chart keeps on uninstall.
const leftToOperator = "v1/Namespace/gridview-system"

// The chart renders what the kustomizations under artifacts/ do, object for
// object and field for field, apart from Helm's metadata and leftToOperator.
func TestChartMatchesKustomize(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name           string
		kustomizations []string
		set            string
	}{{
		name:           "defaults and artifacts/deploy",
		kustomizations: []string{"deploy"},
	}, {
		name:           "the wrapper and artifacts/deploy/wrapper",
		kustomizations: []string{"deploy", filepath.Join("deploy", "wrapper")},
		set:            "wrapper.enabled=true",
	}, {
		name:           "cert-manager and artifacts/cert-manager",
		kustomizations: []string{"cert-manager"},
		set:            "servingCert.certManager=true",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]map[string]any{}
			var namespace map[string]any
			for _, dir := range tc.kustomizations {
				data, err := kustomize(filepath.Join("..", "..", "artifacts", dir))
				if err != nil {
					t.Fatal(err)
				}
				decoded, err := decode(dir, data)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range decoded {
					if key := objectKey(m.raw); key == leftToOperator {
						namespace = m.raw
					} else {
						want[key] = m.raw
					}
				}
			}
			// Every kustomization here builds on artifacts/deploy, which
			// creates the namespace: the operator's commands in the chart's
			// README must create it with the same Pod Security labels.
			if namespace == nil {
				t.Fatalf("%s: kustomize no longer renders it; update leftToOperator and the chart's README", leftToOperator)
			}
			if command := "kubectl create namespace gridview-system"; !strings.Contains(string(readme), command) {
				t.Errorf("the chart's README does not tell the operator to create %s: `%s`", leftToOperator, command)
			}
			labels, _ := namespace["metadata"].(map[string]any)["labels"].(map[string]any)
			for label, value := range labels {
				command := fmt.Sprintf("kubectl label namespace gridview-system %s=%v", label, value)
				if strings.HasPrefix(label, "pod-security.kubernetes.io/") && !strings.Contains(string(readme), command) {
					t.Errorf("%s has the label %s=%v, which the chart's README does not tell the operator to set: `%s`", leftToOperator, label, value, command)
				}
			}
			flags := []string{}
			if tc.set != "" {
				flags = append(flags, "--set", tc.set)
			}
			rendered, err := helmTemplate(t, "gridview-system", flags...)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]map[string]any{}
			for _, m := range rendered {
				got[objectKey(m.raw)] = withoutHelmMetadata(t, m.raw)
			}
			for _, key := range sortedKeys(want, got) {
				switch {
				case key == leftToOperator || got[key]["kind"] == "Namespace":
					t.Errorf("%s: the chart renders a Namespace, which `helm install` cannot create before it stores the release there and `helm uninstall` would delete with the etcd claim", key)
				case got[key] == nil:
					t.Errorf("%s: kustomize renders it, the chart does not", key)
				case want[key] == nil:
					t.Errorf("%s: the chart renders it, kustomize does not", key)
				default:
					for _, d := range differences("", want[key], got[key]) {
						t.Errorf("%s: %s", key, d)
					}
				}
			}
		})
	}
}

// objectKey is apiVersion/kind/[namespace/]name.
func objectKey(raw map[string]any) string {
	metadata, _ := raw["metadata"].(map[string]any)
	key := fmt.Sprintf("%v/%v/", raw["apiVersion"], raw["kind"])
	if namespace, ok := metadata["namespace"].(string); ok {
		key += namespace + "/"
	}
	return key + fmt.Sprint(metadata["name"])
}

// withoutHelmMetadata removes helmLabels from the object's and its pod
// template's labels, and helmAnnotations, after checking that every object
// carries Helm's labels.
func withoutHelmMetadata(t *testing.T, raw map[string]any) map[string]any {
	t.Helper()
	metadata := raw["metadata"].(map[string]any)
	labels, _ := metadata["labels"].(map[string]any)
	for _, label := range helmLabels {
		if _, ok := labels[label]; !ok {
			t.Errorf("%s lacks Helm's label %s", objectKey(raw), label)
		}
	}
	strip(metadata, "labels", helmLabels)
	strip(metadata, "annotations", helmAnnotations)
	if spec, ok := raw["spec"].(map[string]any); ok {
		if template, ok := spec["template"].(map[string]any); ok {
			strip(template["metadata"].(map[string]any), "labels", helmLabels)
		}
	}
	return raw
}

// strip deletes keys from metadata[field], and the field once empty.
func strip(metadata map[string]any, field string, keys []string) {
	m, _ := metadata[field].(map[string]any)
	for _, key := range keys {
		delete(m, key)
	}
	if m != nil && len(m) == 0 {
		delete(metadata, field)
	}
}

func sortedKeys[V any](maps ...map[string]V) []string {
	var keys []string
	for _, m := range maps {
		for key := range m {
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// differences lists the field paths where the parsed objects want and got
// differ, so that a failure names the field rather than dumping both.
func differences(path string, want, got any) []string {
	wantMap, wantIsMap := want.(map[string]any)
	gotMap, gotIsMap := got.(map[string]any)
	wantList, wantIsList := want.([]any)
	gotList, gotIsList := got.([]any)
	switch {
	case wantIsMap && gotIsMap:
		var diffs []string
		for _, key := range sortedKeys(wantMap, gotMap) {
			diffs = append(diffs, differences(path+"."+key, wantMap[key], gotMap[key])...)
		}
		return diffs
	case wantIsList && gotIsList && len(wantList) == len(gotList):
		var diffs []string
		for i := range wantList {
			diffs = append(diffs, differences(fmt.Sprintf("%s[%d]", path, i), wantList[i], gotList[i])...)
		}
		return diffs
	case !reflect.DeepEqual(want, got):
		return []string{fmt.Sprintf("%s: kustomize has %v, the chart %v", path, want, got)}
	}
	return nil
}
