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

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/localcluster"
)

func TestKubectlDiscoversTheGroup(t *testing.T) {
	out := mustKubectl(t, "api-resources", "--api-group=topology.gridview.io")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^servicegrids\s+sg\s+topology.gridview.io/v1alpha1\s+true\s+ServiceGrid\s*$`),
		regexp.MustCompile(`(?m)^nodeendpoints\s+nep\s+topology.gridview.io/v1alpha1\s+true\s+NodeEndpoints\s*$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("kubectl api-resources output does not match %s:\n%s", want, out)
		}
	}
	wide := mustKubectl(t, "api-resources", "--api-group=topology.gridview.io", "-o", "wide")
	if !regexp.MustCompile(`(?m)^nodeendpoints\s.*\sget,list,watch\s+gridview\s*$`).MatchString(wide) {
		t.Errorf("nodeendpoints must be read-only (get, list, watch) in category gridview:\n%s", wide)
	}
}

func TestKubectlExplain(t *testing.T) {
	out := mustKubectl(t, "explain", "servicegrid.spec.gridUniqKey")
	for _, want := range []string{"KIND:", "ServiceGrid", "FIELD: gridUniqKey <string>", "node label key"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain output lacks %q:\n%s", want, out)
		}
	}
	out = mustKubectl(t, "explain", "nodeendpoints.topology")
	if !strings.Contains(out, "matchedKey") {
		t.Errorf("kubectl explain nodeendpoints.topology lacks matchedKey:\n%s", out)
	}
}

func TestKubectlAppliesTheExamples(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "artifacts", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, "apply", "-f", examples)
	t.Cleanup(func() {
		deleteNamespaceAndWait(t, "demo", 90*time.Second)
		_, _ = kubectl(t, "delete", "nodes", "edge-1", "edge-2", "edge-3", "edge-4", "edge-5")
	})
	// kube-scheduler places the Deployments' Pods, kwok runs them, and the
	// EndpointSlice controller writes them into their Services' slices.
	localcluster.Eventually(t, 2*time.Minute, "the demo's Pods in their Services' EndpointSlices", func(ctx context.Context) error {
		return localcluster.CheckWorkloads(ctx, kubeClient, "demo")
	})

	out := mustKubectl(t, "get", "sg", "-A")
	header := regexp.MustCompile(`(?m)^NAMESPACE\s+NAME\s+KEY\s+SERVICE\s+READY\s+AGE$`)
	row := regexp.MustCompile(`(?m)^demo\s+echo\s+superedge.io/nodeunit\s+\S+\s+\S+\s+\S+$`)
	if !header.MatchString(out) || !row.MatchString(out) {
		t.Errorf("kubectl get sg -A:\n%s", out)
	}
	wide := mustKubectl(t, "get", "sg", "-n", "demo", "-o", "wide")
	if !regexp.MustCompile(`(?m)^echo\s.*\sNone$`).MatchString(wide) {
		t.Errorf("kubectl get sg -o wide lacks the fallback column:\n%s", wide)
	}
	if out := mustKubectl(t, "get", "gridview", "-n", "demo"); !strings.Contains(out, "servicegrid.topology.gridview.io/echo") {
		t.Errorf("kubectl get gridview does not list the ServiceGrid:\n%s", out)
	}

	// The demo's pruning, as make run prints it: each view is named after
	// the node and the slice the EndpointSlice controller wrote.
	echoA, echoB, orderedA := demoAddresses(t, "echo", "unit-a"), demoAddresses(t, "echo", "unit-b"), demoAddresses(t, "ordered", "unit-a")
	plain := demoAddresses(t, "plain", "unit-a", "unit-b")
	for node, views := range map[string][]struct {
		service, topology string
		endpoints         sets.Set[string]
	}{
		"edge-1": {
			{"echo-svc", `AnyMatch\(superedge.io/nodeunit\)`, echoA},
			{"plain", `None`, plain},
			{"ordered", `Ordered\(superedge.io/nodeunit\)`, orderedA},
		},
		"edge-3": {
			{"echo-svc", `AnyMatch\(superedge.io/nodeunit\)`, echoB},
			{"ordered", `Ordered\(\*\)`, orderedA},
		},
	} {
		localcluster.Eventually(t, 10*time.Second, node+"'s pruned views", func(context.Context) error {
			out, err := kubectl(t, "get", "nep", "-A", "--field-selector", "nodeName="+node)
			if err != nil {
				return fmt.Errorf("%w: %s", err, out)
			}
			for _, view := range views {
				row := regexp.MustCompile(`(?m)^demo\s+` + node + `\.\.` + view.service + `-\S+\s+` + node + `\s+` + view.service + `\s+` + view.topology + `\s+(\S+)(?: \+ (\d+) more\.\.\.)?\s+\S+$`)
				match := row.FindStringSubmatch(out)
				if match == nil {
					return fmt.Errorf("no row for %s %s in\n%s", view.service, view.topology, out)
				}
				if err := endpointsColumn(match[1], match[2], view.endpoints); err != nil {
					return fmt.Errorf("%s: %w in\n%s", view.service, err, out)
				}
			}
			return nil
		})
	}
	expectDemoRoutingReported(t)
	expectPluginExplainsTheDemo(t)
}

// demoAddresses are the IPs of the demo Deployment app's Pods on the nodes of
// units.
func demoAddresses(t *testing.T, app string, units ...string) sets.Set[string] {
	t.Helper()
	ctx := context.Background()
	pods, err := kubeClient.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	out := sets.New[string]()
	for _, pod := range pods.Items {
		node, err := kubeClient.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(units, node.Labels["superedge.io/nodeunit"]) {
			out.Insert(pod.Status.PodIP)
		}
	}
	if out.Len() == 0 {
		t.Fatalf("no Pod of %s runs in %v", app, units)
	}
	return out
}

// endpointsColumn checks kubectl's ENDPOINTS column, "a:8080,b:8080" with
// " + N more..." past three, against the addresses want.
func endpointsColumn(listed, more string, want sets.Set[string]) error {
	got := sets.New[string]()
	for _, endpoint := range strings.Split(listed, ",") {
		got.Insert(strings.TrimSuffix(endpoint, ":8080"))
	}
	hidden := 0
	if more != "" {
		hidden, _ = strconv.Atoi(more)
	}
	if !want.IsSuperset(got) || got.Len()+hidden != want.Len() {
		return fmt.Errorf("endpoints %s + %d more, want %v", listed, hidden, sets.List(want))
	}
	return nil
}

func TestKubectlRefusesInvalidServiceGrid(t *testing.T) {
	ns := testNamespace(t)
	manifest := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: topology.gridview.io/v1alpha1
kind: ServiceGrid
metadata:
  name: bad
spec:
  gridUniqKey: ""
  fallback: Sometimes
  template:
    ports: [{port: 80}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := kubectl(t, "apply", "-n", ns, "-f", manifest)
	if err == nil {
		t.Fatalf("kubectl apply of an invalid ServiceGrid succeeded:\n%s", out)
	}
	for _, want := range []string{"is invalid", "spec.gridUniqKey: Required value", `spec.fallback: Unsupported value: "Sometimes"`} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl output lacks %q:\n%s", want, out)
		}
	}
}

// kubectl prints a view's ready endpoints, as kubectl get endpoints does,
// and counts the others in a wide column.
func TestKubectlShowsReadyEndpointsOnly(t *testing.T) {
	ns := testNamespace(t)
	node := ns + "-n1"
	if _, err := kubeClient.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kubeClient.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	manifest := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(manifest, []byte(fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-x, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{port: 8080}]
endpoints:
- {addresses: [10.9.0.1], nodeName: %[1]s, conditions: {ready: true}}
- {addresses: [10.9.0.2], nodeName: %[1]s, conditions: {ready: false}}
- {addresses: [10.9.0.3], nodeName: %[1]s, conditions: {ready: false, serving: true, terminating: true}}
- {addresses: [10.9.0.4], nodeName: %[1]s}
`, node)), 0o600); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, "apply", "-n", ns, "-f", manifest)

	name := topology.Name(node, "web-x")
	row := `(?m)^` + regexp.QuoteMeta(name) + `\s+` + regexp.QuoteMeta(node) + `\s+web\s+None\s+10\.9\.0\.1:8080,10\.9\.0\.4:8080\s+\S+`
	localcluster.Eventually(t, 10*time.Second, "the view's row", func(context.Context) error {
		out, err := kubectl(t, "get", "nep", "-n", ns, name, "-o", "wide")
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		if !regexp.MustCompile(`(?m)^NAME\s+NODE\s+SERVICE\s+TOPOLOGY\s+ENDPOINTS\s+AGE\s+NOT READY\s+SLICE$`).MatchString(out) ||
			!regexp.MustCompile(row+`\s+2\s+web-x$`).MatchString(out) {
			return fmt.Errorf("kubectl get nep -o wide: want the ready endpoints 10.9.0.1 and 10.9.0.4, and 2 not ready:\n%s", out)
		}
		return nil
	})
	out := mustKubectl(t, "get", "nep", "-n", ns, name)
	if !regexp.MustCompile(`(?m)^NAME\s+NODE\s+SERVICE\s+TOPOLOGY\s+ENDPOINTS\s+AGE$`).MatchString(out) || !regexp.MustCompile(row+`$`).MatchString(out) {
		t.Errorf("kubectl get nep: want the ready endpoints and no NOT READY column:\n%s", out)
	}
}

// kubectl get nep with a node and a Service shows one row per slice, as
// kubectl get endpointslices does, and the wide output names each row's
// source slice. The second slice is written by hand: the EndpointSlice
// controller gives a Service of a few Pods one slice.
func TestKubectlShowsOneRowPerSlice(t *testing.T) {
	s := newSite(t)
	s.writeNamedSlice(t, "grid", "grid-y", map[string]string{"10.1.1.1": "a1", "10.1.1.3": "b1"})
	gridX := s.controllerSlice(t, "grid")
	selector := []string{"-n", s.NS, "--field-selector", "nodeName=" + s.Node("a1") + ",serviceName=grid"}
	// A row's columns, its ENDPOINTS captured.
	rowOf := func(slice string) string {
		return `(?m)^` + regexp.QuoteMeta(topology.Name(s.Node("a1"), slice)) + `\s+` + regexp.QuoteMeta(s.Node("a1")) +
			`\s+grid\s+AnyMatch\(superedge\.io/nodeunit\)\s+(\S+)\s+\S+`
	}
	rows := map[string]sets.Set[string]{gridX: sets.New(s.podIPs(t, "grid", "a1", "a2")...), "grid-y": sets.New("10.1.1.1")}
	localcluster.Eventually(t, 10*time.Second, "a row per slice", func(context.Context) error {
		out, err := kubectl(t, append([]string{"get", "nep"}, selector...)...)
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !regexp.MustCompile(`^NAME\s+NODE\s+SERVICE\s+TOPOLOGY\s+ENDPOINTS\s+AGE$`).MatchString(lines[0]) {
			return fmt.Errorf("want a header and two rows:\n%s", out)
		}
		for slice, endpoints := range rows {
			row := regexp.MustCompile(rowOf(slice) + `$`).FindStringSubmatch(out)
			if row == nil {
				return fmt.Errorf("no row of %s in\n%s", slice, out)
			}
			if err := endpointsColumn(row[1], "", endpoints); err != nil {
				return fmt.Errorf("%s: %w in\n%s", slice, err, out)
			}
		}
		return nil
	})
	wide := mustKubectl(t, append([]string{"get", "nep", "-o", "wide"}, selector...)...)
	if !regexp.MustCompile(`(?m)^NAME\s+NODE\s+SERVICE\s+TOPOLOGY\s+ENDPOINTS\s+AGE\s+NOT READY\s+SLICE$`).MatchString(wide) {
		t.Errorf("kubectl get nep -o wide: no NOT READY and SLICE columns:\n%s", wide)
	}
	for slice := range rows {
		if !regexp.MustCompile(rowOf(slice) + `\s+0\s+` + regexp.QuoteMeta(slice) + `$`).MatchString(wide) {
			t.Errorf("kubectl get nep -o wide: no row of %s naming it:\n%s", slice, wide)
		}
	}
	// The same rows by the Service's label, in the order of their names.
	names := mustKubectl(t, "get", "nep", "-n", s.NS, "-l", "app=grid", "--field-selector", "nodeName="+s.Node("a1"), "-o", "name")
	want := slices.Sorted(slices.Values([]string{topology.Name(s.Node("a1"), gridX), topology.Name(s.Node("a1"), "grid-y")}))
	if wantNames := "nodeendpoints.topology.gridview.io/" + want[0] + "\n" + "nodeendpoints.topology.gridview.io/" + want[1] + "\n"; names != wantNames {
		t.Errorf("kubectl get nep -l app=grid -o name:\n%s\nwant\n%s", names, wantNames)
	}
}
