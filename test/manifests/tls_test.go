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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// The aggregator verifies gridview-apiserver in every install: nothing
// skips verification, and every APIService gets its caBundle from somewhere.
func TestAggregatorVerifiesGridview(t *testing.T) {
	apiServices := 0
	for _, m := range manifests(t) {
		if path, ok := skipsVerification(m.raw, ""); ok {
			t.Errorf("%s sets %s: the aggregator would trust whoever answers for the Service", m, path)
		}
		if m.raw["kind"] != "APIService" {
			continue
		}
		apiServices++
		if !caBundleSource(t, m) {
			t.Errorf("%s has no caBundle, no cert-manager.io/inject-ca-from annotation, and no gridview-apiserver "+
				"beside it runs with --serving-cert-secret and --apiservice-name: the aggregator cannot verify it", m)
		}
	}
	if apiServices == 0 {
		t.Fatal("no APIService under artifacts")
	}
}

func skipsVerification(value any, path string) (string, bool) {
	switch value := value.(type) {
	case map[string]any:
		for key, v := range value {
			if key == "insecureSkipTLSVerify" && v == true {
				return path + "." + key, true
			}
			if p, ok := skipsVerification(v, path+"."+key); ok {
				return p, true
			}
		}
	case []any:
		for i, v := range value {
			if p, ok := skipsVerification(v, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
	}
	return "", false
}

func caBundleSource(t *testing.T, apiService manifest) bool {
	spec, _ := apiService.raw["spec"].(map[string]any)
	metadata, _ := apiService.raw["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	if spec["caBundle"] != nil || annotations["cert-manager.io/inject-ca-from"] != nil {
		return true
	}
	for _, m := range manifests(t) {
		deployment, ok := m.obj.(*appsv1.Deployment)
		if !ok || m.source != apiService.source {
			continue
		}
		for _, c := range deployment.Spec.Template.Spec.Containers {
			_, managed := flagValue(c, "--serving-cert-secret")
			if name, ok := flagValue(c, "--apiservice-name"); ok && managed && name == metadata["name"] {
				return true
			}
		}
	}
	return false
}
