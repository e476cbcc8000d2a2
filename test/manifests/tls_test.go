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
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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
	// Empty strings count as none: the aggregator cannot verify against "".
	if caBundle, _ := spec["caBundle"].(string); caBundle != "" {
		return true
	}
	if from, _ := annotations["cert-manager.io/inject-ca-from"].(string); from != "" {
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

// A gridview-apiserver that manages its serving certificate can do so with
// the rights its install grants: --serving-cert-secret and
// --apiservice-name name the Secret and the APIService its ServiceAccount
// may write, and an APIService of that install pointing at the Service the
// certificate is issued for.
func TestManagedServingCertHasItsRights(t *testing.T) {
	managed := 0
	for _, m := range manifests(t) {
		deployment, ok := m.obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		for _, c := range deployment.Spec.Template.Spec.Containers {
			secret, ok := flagValue(c, "--serving-cert-secret")
			if !ok {
				continue
			}
			managed++
			name := fmt.Sprintf("%s container %s", m, c.Name)
			namespace, secretName, _ := strings.Cut(secret, "/")
			sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: deployment.Spec.Template.Spec.ServiceAccountName, Namespace: deployment.Namespace}
			for _, verb := range []string{"get", "update"} {
				if !granted(t, m.source, sa, namespace, "", "secrets", secretName, verb) {
					t.Errorf("%s: --serving-cert-secret=%s but its ServiceAccount may not %s that Secret", name, secret, verb)
				}
			}
			if !granted(t, m.source, sa, namespace, "", "secrets", "", "create") {
				t.Errorf("%s: --serving-cert-secret=%s but its ServiceAccount may not create Secrets in %s", name, secret, namespace)
			}
			apiService, ok := flagValue(c, "--apiservice-name")
			if !ok {
				continue
			}
			for _, verb := range []string{"get", "patch"} {
				if !granted(t, m.source, sa, "", "apiregistration.k8s.io", "apiservices", apiService, verb) {
					t.Errorf("%s: --apiservice-name=%s but its ServiceAccount may not %s that APIService", name, apiService, verb)
				}
			}
			if !slices.ContainsFunc(manifests(t), func(o manifest) bool {
				metadata, _ := o.raw["metadata"].(map[string]any)
				spec, _ := o.raw["spec"].(map[string]any)
				service, _ := spec["service"].(map[string]any)
				return o.source == m.source && o.raw["kind"] == "APIService" && metadata["name"] == apiService &&
					service["name"] == "gridview-apiserver" && service["namespace"] == namespace
			}) {
				t.Errorf("%s: --apiservice-name=%s names no APIService of %s for the Service gridview-apiserver in %s, "+
					"the one its certificate is issued for", name, apiService, m.source, namespace)
			}
		}
	}
	if managed == 0 {
		t.Fatal("no gridview-apiserver under artifacts manages its serving certificate")
	}
}

// granted reports whether the Roles and ClusterRoles bound to sa in source
// allow verb on the object name (empty: any) of resource in namespace
// (empty: cluster-scoped).
func granted(t *testing.T, source string, sa rbacv1.Subject, namespace, group, resource, name, verb string) bool {
	t.Helper()
	roles := map[rbacv1.RoleRef][]rbacv1.PolicyRule{}
	for _, m := range manifests(t) {
		if m.source != source {
			continue
		}
		switch obj := m.obj.(type) {
		case *rbacv1.Role:
			if obj.Namespace == namespace && namespace != "" {
				roles[rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: obj.Name}] = obj.Rules
			}
		case *rbacv1.ClusterRole:
			roles[rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: obj.Name}] = obj.Rules
		}
	}
	for _, m := range manifests(t) {
		var ref rbacv1.RoleRef
		var subjects []rbacv1.Subject
		switch obj := m.obj.(type) {
		case *rbacv1.RoleBinding:
			if obj.Namespace != namespace || namespace == "" {
				continue
			}
			ref, subjects = obj.RoleRef, obj.Subjects
		case *rbacv1.ClusterRoleBinding:
			ref, subjects = obj.RoleRef, obj.Subjects
		default:
			continue
		}
		if m.source != source || !slices.Contains(subjects, sa) {
			continue
		}
		for _, rule := range roles[ref] {
			if slices.Contains(rule.APIGroups, group) && slices.Contains(rule.Resources, resource) && slices.Contains(rule.Verbs, verb) &&
				(len(rule.ResourceNames) == 0 || name != "" && slices.Contains(rule.ResourceNames, name)) {
				return true
			}
		}
	}
	return false
}

// A CA that cert-manager renews keeps its key: the caBundle cainjector
// publishes then still verifies the leaves signed before, which a new key
// would invalidate together with the bundle.
func TestCertManagerCAKeepsItsKey(t *testing.T) {
	cas := 0
	for _, m := range manifests(t) {
		spec, _ := m.raw["spec"].(map[string]any)
		if m.raw["kind"] != "Certificate" || spec["isCA"] != true {
			continue
		}
		cas++
		privateKey, _ := spec["privateKey"].(map[string]any)
		if policy := privateKey["rotationPolicy"]; policy != "Never" {
			t.Errorf("%s: privateKey.rotationPolicy %v, want Never", m, policy)
		}
	}
	if cas == 0 {
		t.Fatal("no cert-manager CA Certificate under artifacts")
	}
}
