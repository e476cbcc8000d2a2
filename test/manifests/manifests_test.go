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

// Package manifests checks the deploy manifests against the security
// measures docs/security.md relies on, without a cluster.
package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// deployObjects decodes every object of artifacts/deploy and its
// subdirectories.
func deployObjects(t *testing.T) map[string]runtime.Object {
	t.Helper()
	objects := map[string]runtime.Object{}
	root := filepath.Join("..", "..", "artifacts", "deploy")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || d.Name() == "kustomization.yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
			if err != nil {
				// Kinds client-go does not know, such as APIService.
				continue
			}
			name := obj.(interface{ GetName() string }).GetName()
			objects[gvk.Kind+"/"+name] = obj
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func TestRBACIsLeastPrivilege(t *testing.T) {
	objects := deployObjects(t)
	roles := 0
	for name, obj := range objects {
		var rules []rbacv1.PolicyRule
		switch obj := obj.(type) {
		case *rbacv1.ClusterRole:
			rules = obj.Rules
		case *rbacv1.Role:
			rules = obj.Rules
		default:
			continue
		}
		roles++
		for _, rule := range rules {
			for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.NonResourceURLs} {
				if slices.Contains(list, "*") {
					t.Errorf("%s grants a wildcard: %+v", name, rule)
				}
			}
			if slices.Contains(rule.Resources, "secrets") {
				t.Errorf("%s grants Secrets: %+v", name, rule)
			}
		}
	}
	if roles < 2 {
		t.Fatalf("found %d roles under artifacts/deploy, want gridview-apiserver's and the wrapper's", roles)
	}
}

func TestWorkloadsAreHardened(t *testing.T) {
	objects := deployObjects(t)
	apiserver, ok := objects["Deployment/gridview-apiserver"].(*appsv1.Deployment)
	if !ok {
		t.Fatal("no Deployment gridview-apiserver")
	}
	wrapper, ok := objects["DaemonSet/gridview-wrapper"].(*appsv1.DaemonSet)
	if !ok {
		t.Fatal("no DaemonSet gridview-wrapper")
	}
	for name, pod := range map[string]corev1.PodSpec{"gridview-apiserver": apiserver.Spec.Template.Spec, "gridview-wrapper": wrapper.Spec.Template.Spec} {
		for _, c := range pod.Containers {
			sc := c.SecurityContext
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				sc.Privileged != nil && *sc.Privileged ||
				sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
				t.Errorf("%s container %s: securityContext %+v, want a read-only root, no privilege escalation and every capability dropped", name, c.Name, sc)
			}
		}
	}
	if sc := apiserver.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("gridview-apiserver may run as root: %+v", sc)
	}
	if token := wrapper.Spec.Template.Spec.AutomountServiceAccountToken; token == nil || *token {
		t.Error("the wrapper mounts a ServiceAccount token it does not need: it authenticates as its node")
	}
	if args := wrapper.Spec.Template.Spec.Containers[0].Args; !slices.ContainsFunc(args, func(arg string) bool {
		return strings.HasPrefix(arg, "--listen=127.0.0.1:")
	}) {
		t.Errorf("the wrapper does not listen on loopback only: %v", args)
	}
}
