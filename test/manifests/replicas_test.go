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
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// removedFlags are the flags of the replicas' former protocol (reads
// forwarded to the leader at its advertised address, a Lease electing it):
// gridview-apiserver no longer has them and refuses to start with them.
var removedFlags = []string{"--advertise-address", "--leader-election-namespace"}

// installs are the object sets a user may apply: each kustomization or
// plain manifest under artifacts/, and the chart rendered with the values
// that change what it grants or runs.
func installs(t *testing.T) map[string][]manifest {
	t.Helper()
	sets := map[string][]manifest{}
	for _, m := range manifests(t) {
		sets[m.source] = append(sets[m.source], m)
	}
	for _, tc := range []struct {
		namespace string
		flags     []string
	}{
		{namespace: "gridview-system"},
		{namespace: "edge-gridview", flags: []string{"--set", "servingCert.certManager=true"}},
		{namespace: "edge-gridview", flags: []string{"-f", filepath.Join(chartDir, "ci", "ha-values.yaml")}},
	} {
		rendered, err := helmTemplate(t, tc.namespace, tc.flags...)
		if err != nil {
			t.Fatal(err)
		}
		sets[strings.TrimSpace("chart in "+tc.namespace+" "+strings.Join(tc.flags, " "))] = rendered
	}
	return sets
}

// The replicas never talk to each other: they elect their leader in
// gridview's etcd and each reads the input log from there. No install
// keeps the former protocol's pieces: a Lease or the leader's
// /replication/inputs granted, a FlowSchema for reads forwarded to the
// leader, the flags that named the leader's address and the Lease's
// namespace, or the rights a replica needed to read NodeEndpoints from the
// leader and trust it by the APIService's caBundle.
func TestReplicasDoNotTalkToEachOther(t *testing.T) {
	sets := installs(t)
	apiservers := 0
	for _, name := range sortedKeys(sets) {
		objs := sets[name]
		var deployments []*appsv1.Deployment
		for _, m := range objs {
			if kind, _ := m.raw["kind"].(string); kind == "FlowSchema" || kind == "PriorityLevelConfiguration" {
				t.Errorf("%s: %s: the replicas forward no reads to each other, so no API Priority and Fairness object is needed", name, objectKey(m.raw))
			}
			for _, rule := range rulesOf(m) {
				for _, problem := range formerProtocolRights(rule) {
					t.Errorf("%s: %s %s: %+v", name, objectKey(m.raw), problem, rule)
				}
			}
			if d, ok := m.obj.(*appsv1.Deployment); ok {
				deployments = append(deployments, d)
			}
		}
		for _, d := range deployments {
			managesAPIService := false
			runsAPIServer := false
			for _, c := range d.Spec.Template.Spec.Containers {
				if !isGridviewAPIServer(c) {
					continue
				}
				runsAPIServer = true
				apiservers++
				for _, flag := range removedFlags {
					if value, ok := flagValue(c, flag); ok || slices.Contains(c.Args, flag) {
						t.Errorf("%s: Deployment %s passes %s=%s, a flag gridview-apiserver no longer has: it would not start", name, d.Name, flag, value)
					}
				}
				_, managesAPIService = flagValue(c, "--apiservice-name")
			}
			if !runsAPIServer {
				continue
			}
			sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: d.Namespace}
			for _, rule := range rulesBoundTo(objs, sa) {
				if grants(rule, "topology.gridview.io", "nodeendpoints") {
					t.Errorf("%s: gridview-apiserver's ServiceAccount may read NodeEndpoints, which only a replica reading them from the leader did: %+v", name, rule)
				}
				if grants(rule, "apiregistration.k8s.io", "apiservices") && !managesAPIService {
					t.Errorf("%s: gridview-apiserver's ServiceAccount may read its APIService without --apiservice-name: only replicas trusting each other by its caBundle did: %+v", name, rule)
				}
			}
		}
	}
	if apiservers < 4 {
		t.Fatalf("checked %d gridview-apiserver containers, want those of artifacts/deploy, artifacts/cert-manager and the chart's renderings", apiservers)
	}
}

// formerProtocolRights reports what a rule grants that only the replicas'
// former protocol used: Leases, and the leader's inputs.
func formerProtocolRights(rule rbacv1.PolicyRule) []string {
	var problems []string
	if grants(rule, "coordination.k8s.io", "leases") {
		problems = append(problems, "grants Leases, but leadership is elected in gridview's etcd")
	}
	for _, url := range rule.NonResourceURLs {
		if strings.HasPrefix(url, "/replication") {
			problems = append(problems, "grants "+url+", which no replica serves")
		}
	}
	return problems
}

func grants(rule rbacv1.PolicyRule, group, resource string) bool {
	return slices.Contains(rule.APIGroups, group) && slices.ContainsFunc(rule.Resources, func(r string) bool {
		return r == resource || strings.HasPrefix(r, resource+"/")
	})
}

func rulesOf(m manifest) []rbacv1.PolicyRule {
	switch obj := m.obj.(type) {
	case *rbacv1.ClusterRole:
		return obj.Rules
	case *rbacv1.Role:
		return obj.Rules
	}
	return nil
}

// rulesBoundTo returns the rules of the Roles and ClusterRoles of objs bound
// to subject by a binding of objs.
func rulesBoundTo(objs []manifest, subject rbacv1.Subject) []rbacv1.PolicyRule {
	type roleKey struct{ kind, namespace, name string }
	roles := map[roleKey][]rbacv1.PolicyRule{}
	for _, m := range objs {
		switch obj := m.obj.(type) {
		case *rbacv1.ClusterRole:
			roles[roleKey{"ClusterRole", "", obj.Name}] = obj.Rules
		case *rbacv1.Role:
			roles[roleKey{"Role", obj.Namespace, obj.Name}] = obj.Rules
		}
	}
	var rules []rbacv1.PolicyRule
	for _, m := range objs {
		var key roleKey
		var subjects []rbacv1.Subject
		switch obj := m.obj.(type) {
		case *rbacv1.ClusterRoleBinding:
			key, subjects = roleKey{obj.RoleRef.Kind, "", obj.RoleRef.Name}, obj.Subjects
		case *rbacv1.RoleBinding:
			key, subjects = roleKey{obj.RoleRef.Kind, "", obj.RoleRef.Name}, obj.Subjects
			if key.kind == "Role" {
				key.namespace = obj.Namespace
			}
		default:
			continue
		}
		if !slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == subject.Kind && s.Name == subject.Name && s.Namespace == subject.Namespace
		}) {
			continue
		}
		rules = append(rules, roles[key]...)
	}
	return rules
}
