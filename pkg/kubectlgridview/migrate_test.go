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

package kubectlgridview

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// demoCluster holds SuperEdge's echo ServiceGrid with its Service, and plain,
// whose Service is missing.
func demoCluster() *fakeCluster {
	return newFakeCluster(
		[]runtime.Object{seGrid("echo", "superedge.io/nodeunit", echoTemplate()), seGrid("plain", "zone", echoTemplate())},
		[]runtime.Object{seService("echo", "10.96.196.73")})
}

func TestMigrateDryRunChangesNothing(t *testing.T) {
	for _, scope := range [][]string{{"-n", "demo"}, {"--all-namespaces"}} {
		t.Run(scope[0], func(t *testing.T) {
			c := demoCluster()
			out, err := c.run(t, append([]string{"superedge"}, scope...)...)
			if err != nil {
				t.Fatalf("dry run: %v\n%s", err, out)
			}
			checkGolden(t, "migrate-dryrun.golden", []byte(out))
			if writes := c.writes(); len(writes) != 0 {
				t.Errorf("the dry run wrote: %v", writes)
			}
		})
	}
}

func TestMigrateApplyHandsTheServiceOverAndASecondRunDoesNothing(t *testing.T) {
	c := demoCluster()
	before := c.service(t, "echo-svc")
	out, err := c.run(t, "superedge", "-n", "demo", "--apply")
	if err != nil {
		t.Fatalf("migration: %v\n%s", err, out)
	}
	checkGolden(t, "migrate-apply.golden", []byte(out))

	gv, err := c.gridview.TopologyV1alpha1().ServiceGrids("demo").Get(t.Context(), "echo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gv.Spec.GridUniqKey != "superedge.io/nodeunit" || gv.Spec.Fallback != v1alpha1.FallbackNone || gv.Labels["app"] != "echo" ||
		gv.Spec.Template.Selector["app"] != "echo" || len(gv.Spec.Template.Ports) != 1 || gv.Spec.Template.Ports[0].TargetPort.IntVal != 8080 {
		t.Errorf("gridview's ServiceGrid: labels %v, spec %+v", gv.Labels, gv.Spec)
	}
	after := c.service(t, "echo-svc")
	if !metav1.IsControlledBy(after, gv) || after.UID != before.UID || after.Spec.ClusterIP != before.Spec.ClusterIP {
		t.Errorf("Service after the handover: uid %s, clusterIP %s, owners %+v", after.UID, after.Spec.ClusterIP, after.OwnerReferences)
	}
	for _, name := range []string{"echo", "plain"} {
		if c.superedgeGridExists(t, name) {
			t.Errorf("SuperEdge's ServiceGrid %s is still there", name)
		}
	}
	for _, action := range c.superedge.Actions() {
		if action.GetVerb() != "delete" {
			continue
		}
		opts := action.(clienttesting.DeleteActionImpl).DeleteOptions
		if opts.PropagationPolicy == nil || *opts.PropagationPolicy != metav1.DeletePropagationOrphan ||
			opts.Preconditions == nil || opts.Preconditions.UID == nil || string(*opts.Preconditions.UID) != "se-uid-"+action.(clienttesting.DeleteActionImpl).Name {
			t.Errorf("delete of %s without orphaning or without its UID as precondition: %+v", action.(clienttesting.DeleteActionImpl).Name, opts)
		}
	}
	for _, action := range c.core.Actions() {
		if patch, ok := action.(clienttesting.PatchActionImpl); ok && !strings.Contains(string(patch.Patch), `"resourceVersion":"7"`) {
			t.Errorf("the Service was patched without its resourceVersion as precondition: %s", patch.Patch)
		}
	}

	c.clearActions()
	out, err = c.run(t, "superedge", "-n", "demo", "--apply")
	if err != nil || out != "No superedge.io/v1 ServiceGrids in namespace demo: nothing to do\n" {
		t.Errorf("second run: %v\n%s", err, out)
	}
	if writes := c.writes(); len(writes) != 0 {
		t.Errorf("the second run wrote: %v", writes)
	}
}

// gridview renders the Service's labels and annotations from its ServiceGrid:
// what users put on SuperEdge's Service, which SuperEdge left alone, moves to
// the ServiceGrid so that the adoption keeps it; SuperEdge's marks and
// kubectl's record of an apply of the Service do not.
func TestMigrateKeepsTheServicesOwnLabelsAndAnnotations(t *testing.T) {
	svc := seService("echo", "10.96.196.73")
	svc.Labels["app"] = "echo-live" // the grid says echo: the Service's readers select echo-live
	svc.Labels["team"] = "edge"
	svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-internal"] = "true"
	svc.Annotations[corev1.LastAppliedConfigAnnotation] = `{"kind":"Service"}`
	c := newFakeCluster([]runtime.Object{seGrid("echo", "superedge.io/nodeunit", echoTemplate())}, []runtime.Object{svc})
	if out, err := c.run(t, "superedge", "-n", "demo", "--apply"); err != nil {
		t.Fatalf("migration: %v\n%s", err, out)
	}
	gv, err := c.gridview.TopologyV1alpha1().ServiceGrids("demo").Get(t.Context(), "echo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantGrid := map[string]string{"app": "echo-live", "team": "edge", "service.beta.kubernetes.io/aws-load-balancer-internal": "true"}
	for _, kept := range []map[string]string{gv.Labels, gv.Annotations} {
		for key := range kept {
			if _, ok := wantGrid[key]; !ok && key != adoptAnnotation {
				t.Errorf("gridview's ServiceGrid carries %s, which is SuperEdge's or kubectl's", key)
			}
		}
	}
	if gv.Labels["team"] != "edge" || gv.Labels["app"] != "echo-live" || gv.Annotations["service.beta.kubernetes.io/aws-load-balancer-internal"] != "true" {
		t.Errorf("gridview's ServiceGrid: labels %v, annotations %v", gv.Labels, gv.Annotations)
	}
	after := c.service(t, "echo-svc")
	if !metav1.IsControlledBy(after, gv) || after.Labels["team"] != "edge" || after.Labels["app"] != "echo-live" ||
		after.Annotations["service.beta.kubernetes.io/aws-load-balancer-internal"] != "true" {
		t.Errorf("the adopted Service: owners %+v, labels %v, annotations %v", after.OwnerReferences, after.Labels, after.Annotations)
	}
}

func TestMigrateResumesAfterEachStep(t *testing.T) {
	created := desiredServiceGrid(readSuperEdgeGrid(seGrid("echo", "superedge.io/nodeunit", echoTemplate())), seService("echo", "10.96.196.73"))
	created.UID = "gv-uid-echo"
	orphaned := seService("echo", "10.96.196.73")
	orphaned.OwnerReferences = nil
	adopted := seService("echo", "10.96.196.73")
	adopted.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(created, v1alpha1.SchemeGroupVersion.WithKind("ServiceGrid"))}
	deleting := seGrid("echo", "superedge.io/nodeunit", echoTemplate())
	deleting.SetDeletionTimestamp(ptr.To(metav1.Now()))
	deleting.SetFinalizers([]string{metav1.FinalizerOrphanDependents})

	for _, tc := range []struct {
		name      string
		superedge runtime.Object
		service   *corev1.Service
		want      string
	}{{
		name:      "gridview's ServiceGrid created",
		superedge: seGrid("echo", "superedge.io/nodeunit", echoTemplate()),
		service:   seService("echo", "10.96.196.73"),
		want: `demo/echo: topology.gridview.io/v1alpha1 ServiceGrid exists (gridUniqKey superedge.io/nodeunit, fallback None)
demo/echo: orphaned Service demo/echo-svc for gridview to adopt it: SuperEdge's controller reference removed, label superedge.io/grid-selector=echo set
demo/echo: handed Service demo/echo-svc over to gridview's ServiceGrid (uid svc-uid-echo, clusterIP 10.96.196.73 kept)
demo/echo: deleted superedge.io/v1 ServiceGrid (uid se-uid-echo) with propagationPolicy=Orphan
`,
	}, {
		name:      "Service orphaned",
		superedge: seGrid("echo", "superedge.io/nodeunit", echoTemplate()),
		service:   orphaned,
		want: `demo/echo: topology.gridview.io/v1alpha1 ServiceGrid exists (gridUniqKey superedge.io/nodeunit, fallback None)
demo/echo: handed Service demo/echo-svc over to gridview's ServiceGrid (uid svc-uid-echo, clusterIP 10.96.196.73 kept)
demo/echo: deleted superedge.io/v1 ServiceGrid (uid se-uid-echo) with propagationPolicy=Orphan
`,
	}, {
		name:      "Service adopted",
		superedge: seGrid("echo", "superedge.io/nodeunit", echoTemplate()),
		service:   adopted,
		want: `demo/echo: topology.gridview.io/v1alpha1 ServiceGrid exists (gridUniqKey superedge.io/nodeunit, fallback None)
demo/echo: Service demo/echo-svc is gridview's already (uid svc-uid-echo, clusterIP 10.96.196.73)
demo/echo: deleted superedge.io/v1 ServiceGrid (uid se-uid-echo) with propagationPolicy=Orphan
`,
	}, {
		name:      "SuperEdge's ServiceGrid deleted, the garbage collector not done",
		superedge: deleting,
		service:   adopted,
		want: `demo/echo: topology.gridview.io/v1alpha1 ServiceGrid exists (gridUniqKey superedge.io/nodeunit, fallback None)
demo/echo: Service demo/echo-svc is gridview's already (uid svc-uid-echo, clusterIP 10.96.196.73)
demo/echo: superedge.io/v1 ServiceGrid (uid se-uid-echo) is being deleted: the garbage collector finishes it
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeCluster([]runtime.Object{tc.superedge}, []runtime.Object{tc.service}, created.DeepCopy())
			out, err := c.run(t, "superedge", "-n", "demo", "--apply")
			if err != nil || out != tc.want {
				t.Errorf("resumed run: %v\n--- got\n%s--- want\n%s", err, out, tc.want)
			}
			svc := c.service(t, "echo-svc")
			if !metav1.IsControlledBy(svc, created) || svc.UID != "svc-uid-echo" || svc.Spec.ClusterIP != "10.96.196.73" {
				t.Errorf("Service: uid %s, clusterIP %s, owners %+v", svc.UID, svc.Spec.ClusterIP, svc.OwnerReferences)
			}
			if gone := !c.superedgeGridExists(t, "echo"); gone == (tc.superedge == deleting) {
				t.Errorf("SuperEdge's ServiceGrid gone: %t", gone)
			}
		})
	}
}
