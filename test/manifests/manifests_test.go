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
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRBACIsLeastPrivilege(t *testing.T) {
	roles := 0
	for _, m := range manifests(t) {
		var rules []rbacv1.PolicyRule
		clusterWide := false
		switch obj := m.obj.(type) {
		case *rbacv1.ClusterRole:
			rules, clusterWide = obj.Rules, true
		case *rbacv1.Role:
			rules = obj.Rules
		default:
			continue
		}
		roles++
		for _, rule := range rules {
			for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.NonResourceURLs} {
				if slices.Contains(list, "*") {
					t.Errorf("%s grants a wildcard: %+v", m, rule)
				}
			}
			for _, problem := range namedOnlyProblems(rule, clusterWide) {
				t.Errorf("%s: %s: %+v", m, problem, rule)
			}
		}
	}
	if roles < 2 {
		t.Fatalf("found %d roles under artifacts, want gridview-apiserver's and the wrapper's", roles)
	}
}

// namedOnlyProblems reports rights on objects of other components that a
// rule grants: Secrets only in gridview's namespace and only those named
// (create, which RBAC cannot limit by name, aside); APIServices only by
// name; Leases never (TestReplicasDoNotTalkToEachOther: leadership is
// elected in gridview's etcd).
func namedOnlyProblems(rule rbacv1.PolicyRule, clusterWide bool) []string {
	var problems []string
	for _, group := range rule.APIGroups {
		for _, resource := range rule.Resources {
			switch group + "/" + resource {
			case "/secrets":
				if clusterWide {
					problems = append(problems, resource+" in a ClusterRole, which reaches every namespace")
				}
				if len(rule.ResourceNames) == 0 && slices.ContainsFunc(rule.Verbs, func(verb string) bool { return verb != "create" }) {
					problems = append(problems, resource+" beyond create without resourceNames")
				}
			case "apiregistration.k8s.io/apiservices":
				if len(rule.ResourceNames) == 0 || slices.Contains(rule.Verbs, "create") {
					problems = append(problems, "apiservices without resourceNames")
				}
			case "coordination.k8s.io/leases":
				problems = append(problems, "leases, which no gridview component uses")
			}
		}
	}
	return problems
}

func TestWorkloadsAreHardened(t *testing.T) {
	var apiserver *appsv1.Deployment
	var wrapper *appsv1.DaemonSet
	pods := map[string]corev1.PodSpec{}
	for _, m := range manifests(t) {
		switch obj := m.obj.(type) {
		case *appsv1.Deployment:
			pods[m.String()] = obj.Spec.Template.Spec
			if obj.Name == "gridview-apiserver" && m.source == "deploy" {
				apiserver = obj
			}
		case *appsv1.DaemonSet:
			pods[m.String()] = obj.Spec.Template.Spec
			if obj.Name == "gridview-wrapper" {
				wrapper = obj
			}
		case *appsv1.StatefulSet:
			pods[m.String()] = obj.Spec.Template.Spec
		}
	}
	if apiserver == nil || wrapper == nil {
		t.Fatalf("no Deployment gridview-apiserver in artifacts/deploy (%v) or no DaemonSet gridview-wrapper (%v)", apiserver, wrapper)
	}
	for name, pod := range pods {
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
