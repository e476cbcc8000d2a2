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
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var chartDir = filepath.Join("..", "..", "artifacts", "charts", "gridview")

// helmBinary is the helm `make tools` builds: another version may render
// the chart differently.
func helmBinary(t *testing.T) string {
	t.Helper()
	for _, binDir := range []string{os.Getenv("GRIDVIEW_BIN_DIR"), filepath.Join("..", "..", "_output", "bin")} {
		if binDir == "" {
			continue
		}
		if info, err := os.Stat(filepath.Join(binDir, "helm")); err == nil && info.Mode().IsRegular() {
			return filepath.Join(binDir, "helm")
		}
	}
	t.Fatal("rendering the chart needs helm in _output/bin: run `make tools`")
	return ""
}

// helmTemplate renders the chart as release "gridview" in namespace
// (artifacts/deploy's is gridview-system) with extra helm flags.
func helmTemplate(t *testing.T, namespace string, flags ...string) ([]manifest, error) {
	t.Helper()
	args := append([]string{"template", "gridview", chartDir, "--namespace", namespace}, flags...)
	var stderr bytes.Buffer
	cmd := exec.Command(helmBinary(t), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return decode("charts/gridview", out)
}

func TestChartRefusesWhatCannotWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  string
		// refusal is part of the message `fail` gives; empty: renders.
		refusal string
	}{
		{name: "two replicas of the embedded etcd", set: "replicas=2", refusal: "replicas is 2 but etcd.external.servers is empty"},
		{name: "no replica", set: "replicas=0", refusal: "replicas is 0, want at least 1"},
		{name: "etcd in plain text", set: "etcd.external.servers={http://etcd:2379},etcd.external.tlsSecretName=etcd-client", refusal: "want https:// URLs"},
		{name: "etcd without a client certificate", set: "etcd.external.servers={https://etcd:2379}", refusal: "etcd.external.tlsSecretName is empty"},
		{name: "two replicas on an external etcd", set: "replicas=2,etcd.external.servers={https://etcd:2379},etcd.external.tlsSecretName=etcd-client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmTemplate(t, "gridview-system", "--set", tc.set)
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.refusal)
			}
		})
	}
}

// The HA values run three replicas on an external etcd over TLS, and
// nothing of the embedded etcd remains.
func TestChartHAValues(t *testing.T) {
	rendered, err := helmTemplate(t, "edge-gridview", "-f", filepath.Join(chartDir, "ci", "ha-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var apiserver *appsv1.Deployment
	for _, m := range rendered {
		kinds[m.raw["kind"].(string)]++
		if d, ok := m.obj.(*appsv1.Deployment); ok {
			apiserver = d
		}
	}
	if apiserver == nil || kinds["PersistentVolumeClaim"] != 0 || kinds["PodDisruptionBudget"] != 1 || kinds["DaemonSet"] != 1 {
		t.Fatalf("rendered %v, want a Deployment, a PodDisruptionBudget, the wrapper's DaemonSet and no PersistentVolumeClaim", kinds)
	}
	pod := apiserver.Spec.Template.Spec
	if *apiserver.Spec.Replicas != 3 || apiserver.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || runsEmbeddedEtcd(pod) {
		t.Errorf("Deployment: %d replicas, strategy %s, embedded etcd %t; want 3 replicas rolled over an external etcd",
			*apiserver.Spec.Replicas, apiserver.Spec.Strategy.Type, runsEmbeddedEtcd(pod))
	}
	c := pod.Containers[0]
	// Every replica reads the input log from, and runs for leadership in,
	// that etcd: it is the only thing the replicas share.
	for flag, want := range map[string]string{
		"--etcd-servers":        "https://etcd-0.etcd.gridview-system.svc:2379,https://etcd-1.etcd.gridview-system.svc:2379,https://etcd-2.etcd.gridview-system.svc:2379",
		"--etcd-cafile":         "/var/run/gridview/etcd-client/ca.crt",
		"--etcd-certfile":       "/var/run/gridview/etcd-client/tls.crt",
		"--etcd-keyfile":        "/var/run/gridview/etcd-client/tls.key",
		"--serving-cert-secret": "edge-gridview/gridview-apiserver-serving-cert",
	} {
		if got, _ := flagValue(c, flag); got != want {
			t.Errorf("%s=%q, want %q", flag, got, want)
		}
	}
	for _, flag := range removedFlags {
		if value, ok := flagValue(c, flag); ok {
			t.Errorf("%s=%q is set: gridview-apiserver no longer has it and would not start", flag, value)
		}
	}
	if _, ok := flagValue(c, "--data-dir"); ok {
		t.Errorf("--data-dir is set with an external etcd: %v", c.Args)
	}
	if volume := dataVolume(pod, c, "/var/run/gridview/etcd-client"); volume == "" || !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.Name == volume && v.Secret != nil && v.Secret.SecretName == "gridview-etcd-client"
	}) {
		t.Errorf("the etcd client certificate is not mounted from Secret gridview-etcd-client: %+v", pod.Volumes)
	}
}

// Installed elsewhere than gridview-system, the chart names the release's
// namespace wherever artifacts/deploy names gridview-system: in subjects,
// the APIService's Service, the flags and the certificate's DNS names.
func TestChartInAnotherNamespace(t *testing.T) {
	for _, set := range []string{"wrapper.enabled=true", "servingCert.certManager=true"} {
		t.Run(set, func(t *testing.T) {
			rendered, err := helmTemplate(t, "edge-gridview", "--set", set)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range rendered {
				if text := fmt.Sprint(m.raw); strings.Contains(text, "gridview-system") {
					t.Errorf("%s names gridview-system: %s", m, text)
				}
			}
		})
	}
}

// The embedded etcd's claim holds every ServiceGrid: by default `helm
// uninstall` leaves it, as the chart's README and docs/install.md say, and
// deletes it only when asked.
func TestChartKeepsTheEtcdClaim(t *testing.T) {
	for _, tc := range []struct {
		set  string
		keep bool
	}{{set: "", keep: true}, {set: "etcd.persistence.keepOnUninstall=false", keep: false}} {
		t.Run(fmt.Sprintf("keep=%t", tc.keep), func(t *testing.T) {
			var flags []string
			if tc.set != "" {
				flags = []string{"--set", tc.set}
			}
			rendered, err := helmTemplate(t, "gridview-system", flags...)
			if err != nil {
				t.Fatal(err)
			}
			claims := 0
			for _, m := range rendered {
				pvc, ok := m.obj.(*corev1.PersistentVolumeClaim)
				if !ok {
					continue
				}
				claims++
				if policy := pvc.Annotations["helm.sh/resource-policy"]; (policy == "keep") != tc.keep {
					t.Errorf("PersistentVolumeClaim %s has helm.sh/resource-policy %q; want it kept on uninstall: %t", pvc.Name, policy, tc.keep)
				}
			}
			if claims != 1 {
				t.Errorf("rendered %d PersistentVolumeClaims, want the embedded etcd's one", claims)
			}
		})
	}
}

func TestChartFollowsVERSION(t *testing.T) {
	version, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(version))
	if chart.AppVersion != want || chart.Version != strings.TrimPrefix(want, "v") {
		t.Errorf("artifacts/charts/gridview/Chart.yaml has version %q and appVersion %q: set them to %q and %q, as VERSION says (the images are tagged %s)",
			chart.Version, chart.AppVersion, strings.TrimPrefix(want, "v"), want, want)
	}
}

// Every value of values.yaml has a row in the chart's README, itself or a
// map holding it (resources, nodeSelector: keys of the user's), and every row
// names a value.
func TestChartValuesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, row := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		rows[row[1]] = true
	}
	undocumented := undocumentedValues("", values, rows)
	if len(undocumented) > 0 {
		t.Errorf("values without a row in the chart's README: %v", undocumented)
	}
	for path := range rows {
		t.Errorf("the chart's README documents %s, which values.yaml does not have", path)
	}
}

// undocumentedValues walks values down to the rows that document them,
// deleting each row it reaches, and returns the values no row documents.
func undocumentedValues(prefix string, values map[string]any, rows map[string]bool) []string {
	var missing []string
	for key, value := range values {
		path := prefix + key
		if rows[path] {
			delete(rows, path)
			continue
		}
		if m, ok := value.(map[string]any); ok && len(m) > 0 {
			missing = append(missing, undocumentedValues(path+".", m, rows)...)
			continue
		}
		missing = append(missing, path)
	}
	sort.Strings(missing)
	return missing
}
