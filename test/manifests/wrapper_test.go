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
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gridview/gridview/pkg/wrapper"
)

// In every install, kube-proxy's kubeconfig reaches the wrapper over TLS,
// trusts the certificate it serves and presents the token it accepts, both
// in the DaemonSet's --client-credentials-dir on the node's disk (a
// hostPath), so that kube-proxy's Pod can mount them.
func TestKubeProxyPresentsTheWrappersToken(t *testing.T) {
	checked := 0
	for source, objs := range installs(t) {
		var wrappers []*appsv1.DaemonSet
		var kubeconfigs []*corev1.ConfigMap
		for _, m := range objs {
			switch obj := m.obj.(type) {
			case *appsv1.DaemonSet:
				if obj.Name == "gridview-wrapper" {
					wrappers = append(wrappers, obj)
				}
			case *corev1.ConfigMap:
				if _, ok := obj.Data["kubeconfig"]; ok {
					kubeconfigs = append(kubeconfigs, obj)
				}
			}
		}
		if len(wrappers) == 0 && len(kubeconfigs) == 0 {
			continue
		}
		if len(wrappers) != 1 || len(kubeconfigs) != 1 {
			t.Errorf("%s: %d wrapper DaemonSets and %d kube-proxy kubeconfigs, want one of each", source, len(wrappers), len(kubeconfigs))
			continue
		}
		pod := wrappers[0].Spec.Template.Spec
		dir, ok := flagValue(pod.Containers[0], "--client-credentials-dir")
		if !ok {
			t.Errorf("%s: the wrapper has no --client-credentials-dir", source)
			continue
		}
		config, err := clientcmd.Load([]byte(kubeconfigs[0].Data["kubeconfig"]))
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		context := config.Contexts[config.CurrentContext]
		user, server := config.AuthInfos[context.AuthInfo], config.Clusters[context.Cluster]
		if user == nil || user.TokenFile != wrapper.ClientTokenFile(dir) {
			t.Errorf("%s: kube-proxy's kubeconfig presents %+v, want the tokenFile %s the wrapper accepts", source, user, wrapper.ClientTokenFile(dir))
		}
		if server == nil || !strings.HasPrefix(server.Server, "https://127.0.0.1:") || server.CertificateAuthority != wrapper.ServingCertFile(dir) {
			t.Errorf("%s: kube-proxy's kubeconfig reaches %+v, want https on loopback trusting %s", source, server, wrapper.ServingCertFile(dir))
		}
		for _, probe := range []*corev1.Probe{pod.Containers[0].LivenessProbe, pod.Containers[0].ReadinessProbe} {
			if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
				t.Errorf("%s: the wrapper's probe %+v, want an HTTPS GET: it serves TLS only", source, probe)
			}
		}
		volume := dataVolume(pod, pod.Containers[0], dir)
		hostPath := false
		for _, v := range pod.Volumes {
			hostPath = hostPath || v.Name == volume && v.HostPath != nil
		}
		if !hostPath {
			t.Errorf("%s: the wrapper's credentials %s are not on a hostPath (volume %q), which kube-proxy could mount", source, dir, volume)
		}
		checked++
	}
	if checked < 2 {
		t.Errorf("checked %d installs with the wrapper, want the kustomization and the chart at least", checked)
	}
}

// docs/security.md names every resource the wrapper's roles grant (a
// security review found it naming NodeEndpoints and ServiceCIDRs only).
func TestSecurityDocNamesTheWrappersRights(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, "| Over-broad permissions |") {
			row = strings.ToLower(line)
		}
	}
	if row == "" {
		t.Fatal("docs/security.md has no row \"Over-broad permissions\"")
	}
	granted := 0
	for _, m := range manifests(t) {
		var rules []rbacv1.PolicyRule
		switch obj := m.obj.(type) {
		case *rbacv1.ClusterRole:
			rules = obj.Rules
		case *rbacv1.Role:
			rules = obj.Rules
		}
		if !strings.HasPrefix(m.source, "deploy/wrapper") {
			continue
		}
		for _, rule := range rules {
			for _, resource := range rule.Resources {
				granted++
				if singular := strings.TrimSuffix(resource, "s"); !strings.Contains(row, singular) {
					t.Errorf("%s grants %v on %s, which docs/security.md's row \"Over-broad permissions\" does not name", m, rule.Verbs, resource)
				}
			}
		}
	}
	if granted == 0 {
		t.Fatal("found no rule of the wrapper's roles under artifacts/deploy/wrapper")
	}
}
