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
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

var superedgeGrids = schema.GroupVersionResource{Group: "superedge.io", Version: "v1", Resource: "servicegrids"}

// holdFinalizer keeps SuperEdge's ServiceGrid, being deleted, until the test
// takes it off.
const holdFinalizer = "e2e.gridview.io/hold"

// A SuperEdge ServiceGrid and the Service its application-grid-controller
// made are moved to gridview by `kubectl gridview migrate superedge`, run
// through kubectl's plugin mechanism: the dry run changes nothing, the
// migration keeps the Service's uid and clusterIP and its EndpointSlice, and
// a second run changes nothing.
func TestMigrateFromSuperEdge(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	superedge := installSuperEdgeCRD(t).Resource(superedgeGrids).Namespace(ns)

	grid, err := superedge.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "superedge.io/v1", "kind": "ServiceGrid",
		"metadata": map[string]any{"name": "echo", "labels": map[string]any{"app": "echo"}, "finalizers": []any{holdFinalizer}},
		"spec": map[string]any{"gridUniqKey": "superedge.io/nodeunit", "template": map[string]any{
			"selector": map[string]any{"app": "echo"},
			"ports":    []any{map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080)}},
		}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// As application-grid-controller makes it.
	svc, err := kubeClient.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "echo-svc",
			Labels: map[string]string{"app": "echo", "superedge.io/grid-selector": "echo", "team": "edge"},
			// What users put on SuperEdge's Service themselves, which the
			// adoption must keep.
			Annotations: map[string]string{"topologyKeys": `["superedge.io/nodeunit"]`, "service.beta.kubernetes.io/aws-load-balancer-internal": "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "superedge.io/v1", Kind: "ServiceGrid", Name: "echo", UID: grid.GetUID(),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "echo"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-edge", Labels: map[string]string{"superedge.io/nodeunit": ns + "-a"}}}
	if _, err := kubeClient.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deleteNamespaceAndWait(t, ns, 90*time.Second)
		_ = kubeClient.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
	})
	// The Service's Pod, which the EndpointSlice controller writes into
	// the Service's slice.
	address, slice := runEchoPod(t, ns, node.Name)

	out := mustKubectlGridview(t, "migrate", "superedge", "-n", ns)
	for _, want := range []string{"would create", "would hand Service " + ns + "/echo-svc", "would delete superedge.io/v1 ServiceGrid"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if after, err := superedge.Get(ctx, "echo", metav1.GetOptions{}); err != nil || after.GetResourceVersion() != grid.GetResourceVersion() {
		t.Errorf("the dry run changed SuperEdge's ServiceGrid: %v", err)
	}
	if after := mustService(t, ns, "echo-svc"); after.ResourceVersion != svc.ResourceVersion {
		t.Errorf("the dry run changed the Service: resourceVersion %s -> %s", svc.ResourceVersion, after.ResourceVersion)
	}
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, "echo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the dry run created gridview's ServiceGrid: %v", err)
	}

	gaps := watchRoutes(t, ns, node.Name, address)
	out = mustKubectlGridview(t, "migrate", "superedge", "-n", ns, "--apply")
	if gap := gaps(); gap != "" {
		t.Errorf("the node's route to the Service changed during the migration: %s", gap)
	}
	if !strings.Contains(out, "handed Service "+ns+"/echo-svc over") {
		t.Errorf("migration output:\n%s", out)
	}
	sg := framework.WaitServiceGridReady(t, gridview, ns, "echo", 5*time.Second)
	migrated := mustService(t, ns, "echo-svc")
	switch {
	case !metav1.IsControlledBy(migrated, sg) || len(migrated.OwnerReferences) != 1:
		t.Errorf("the Service's owners: %+v", migrated.OwnerReferences)
	case migrated.UID != svc.UID || migrated.Spec.ClusterIP != svc.Spec.ClusterIP:
		t.Errorf("the Service was replaced: uid %s -> %s, clusterIP %s -> %s", svc.UID, migrated.UID, svc.Spec.ClusterIP, migrated.Spec.ClusterIP)
	case sg.Spec.GridUniqKey != "superedge.io/nodeunit" || sg.Labels["app"] != "echo" || sg.Spec.Template.Ports[0].TargetPort.IntVal != 8080:
		t.Errorf("gridview's ServiceGrid: labels %v, spec %+v", sg.Labels, sg.Spec)
	case migrated.Labels["team"] != "edge" || migrated.Annotations["service.beta.kubernetes.io/aws-load-balancer-internal"] != "true":
		t.Errorf("the adoption dropped the Service's own metadata: labels %v, annotations %v", migrated.Labels, migrated.Annotations)
	}
	if after, err := kubeClient.DiscoveryV1().EndpointSlices(ns).Get(ctx, slice.Name, metav1.GetOptions{}); err != nil || after.ResourceVersion != slice.ResourceVersion {
		t.Errorf("the Service's EndpointSlice changed: %v", err)
	}

	// While SuperEdge's object is being deleted, a second run leaves it to
	// the garbage collector, which takes its orphan finalizer off once no
	// dependent references it; the test's own finalizer holds it meanwhile.
	// The collector finds a new CRD at its next discovery, every 30 s.
	localcluster.Eventually(t, 90*time.Second, "the garbage collector orphaning SuperEdge's ServiceGrid's dependents", func(ctx context.Context) error {
		grid, err := superedge.Get(ctx, "echo", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if grid.GetDeletionTimestamp() == nil || !slices.Equal(grid.GetFinalizers(), []string{holdFinalizer}) {
			return fmt.Errorf("deletion %v, finalizers %v", grid.GetDeletionTimestamp(), grid.GetFinalizers())
		}
		return nil
	})
	unchanged := snapshotMigration(t, ns)
	mustKubectlGridview(t, "migrate", "superedge", "-n", ns, "--apply")
	if again := snapshotMigration(t, ns); again != unchanged {
		t.Errorf("a second run changed something:\n%s\nwas\n%s", again, unchanged)
	}
	if _, err := superedge.Patch(ctx, "echo", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 10*time.Second, "SuperEdge's ServiceGrid gone", func(ctx context.Context) error {
		_, err := superedge.Get(ctx, "echo", metav1.GetOptions{})
		return framework.Gone(err)
	})
	unchanged = snapshotMigration(t, ns)
	out = mustKubectlGridview(t, "migrate", "superedge", "-n", ns, "--apply")
	if want := "No superedge.io/v1 ServiceGrids in namespace " + ns + ": nothing to do\n"; out != want {
		t.Errorf("a run after the migration printed %q, want %q", out, want)
	}
	if again := snapshotMigration(t, ns); again != unchanged {
		t.Errorf("a run after the migration changed something:\n%s\nwas\n%s", again, unchanged)
	}
}

// watchRoutes waits until node routes echo-svc to its one endpoint, then
// polls that route until the returned function is called, which says how
// the route changed meanwhile, if it did.
func watchRoutes(t *testing.T, ns, node, address string) func() string {
	t.Helper()
	want := "[" + address + "]"
	route := func(ctx context.Context) string {
		addresses, err := framework.ServiceAddresses(ctx, gridview, ns, node, "echo-svc")
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(addresses)
	}
	localcluster.Eventually(t, 10*time.Second, node+" routes echo-svc", func(ctx context.Context) error {
		if got := route(ctx); got != want {
			return fmt.Errorf("route %s", got)
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan string, 1)
	go func() {
		defer close(changed)
		for polls := 1; ; polls++ {
			if got := route(ctx); ctx.Err() != nil {
				t.Logf("%s routed echo-svc to %s in all of %d polls", node, want, polls-1)
				return
			} else if got != want {
				changed <- fmt.Sprintf("%s at poll %d", got, polls)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return func() string {
		cancel()
		return <-changed
	}
}

// installSuperEdgeCRD applies SuperEdge's ServiceGrid CRD until the test ends.
func installSuperEdgeCRD(t *testing.T) dynamic.Interface {
	t.Helper()
	crd := filepath.Join("testdata", "superedge-servicegrid-crd.yaml")
	mustKubectl(t, "apply", "-f", crd)
	// Its short name sg is gridview's too: later tests must not find two.
	t.Cleanup(func() {
		if out, err := kubectl(t, "delete", "-f", crd, "--timeout=60s"); err != nil {
			t.Errorf("deleting SuperEdge's CRD: %v\n%s", err, out)
		}
	})
	mustKubectl(t, "wait", "--for=condition=Established", "--timeout=30s", "crd/servicegrids.superedge.io")
	client, err := dynamic.NewForConfig(cluster.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// runEchoPod runs the Pod of Service echo-svc on node and returns its address
// and the EndpointSlice the EndpointSlice controller wrote it into.
func runEchoPod(t *testing.T, ns, node string) (string, *discoveryv1.EndpointSlice) {
	t.Helper()
	ctx := context.Background()
	if _, err := kubeClient.CoreV1().Pods(ns).Create(ctx, podOnNode("echo-0", "echo", node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var address string
	var slice *discoveryv1.EndpointSlice
	localcluster.Eventually(t, time.Minute, "the EndpointSlice controller writing echo-0 into echo-svc's slice", func(ctx context.Context) error {
		pod, err := kubeClient.CoreV1().Pods(ns).Get(ctx, "echo-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if address = pod.Status.PodIP; address == "" {
			return fmt.Errorf("echo-0 has no IP yet: %s", pod.Status.Phase)
		}
		list, err := kubeClient.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=echo-svc"})
		if err != nil {
			return err
		}
		for i := range list.Items {
			for _, ep := range list.Items[i].Endpoints {
				if list.Items[i].Labels[discoveryv1.LabelManagedBy] == "endpointslice-controller.k8s.io" &&
					ep.Addresses[0] == address && ptr.Deref(ep.Conditions.Ready, false) {
					slice = &list.Items[i]
					return nil
				}
			}
		}
		return fmt.Errorf("no ready endpoint %s in %d slices", address, len(list.Items))
	})
	return address, slice
}

// snapshotMigration tells the resourceVersions a run must not change.
func snapshotMigration(t *testing.T, ns string) string {
	t.Helper()
	ctx := context.Background()
	sg, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, "echo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(cluster.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	state := "superedge: gone"
	if grid, err := client.Resource(superedgeGrids).Namespace(ns).Get(ctx, "echo", metav1.GetOptions{}); err == nil {
		state = "superedge: being deleted " + grid.GetResourceVersion()
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return fmt.Sprintf("servicegrid %s, service %s, %s", sg.ResourceVersion, mustService(t, ns, "echo-svc").ResourceVersion, state)
}

// mustKubectlGridview runs `kubectl gridview` as a user would: kubectl finds
// the plugin kubectl-gridview on PATH.
func mustKubectlGridview(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(binDir, "kubectl-gridview")); err != nil {
		t.Fatalf("the plugin is missing, run `make build` (it builds %s/kubectl-gridview): %v", binDir, err)
	}
	cmd := exec.Command(filepath.Join(binDir, "kubectl"), append([]string{"gridview"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.AdminKubeconfig, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl gridview %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("kubectl gridview %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}
