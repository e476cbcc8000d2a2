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
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// echoCluster holds SuperEdge's echo ServiceGrid and its Service svc.
func echoCluster(svc *corev1.Service) *fakeCluster {
	return newFakeCluster([]runtime.Object{seGrid("echo", "superedge.io/nodeunit", echoTemplate())}, []runtime.Object{svc})
}

// The dry run asks what the adoption will: it says that a run with --apply
// would be refused rather than that it would hand the Service over.
func TestMigrateDryRunPredictsARefusedAdoption(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse func(c *fakeCluster)
		want   string
	}{{
		name:   "the user may not update the Service",
		refuse: func(c *fakeCluster) { c.deny("update", "services", "echo-svc") },
		want:   "demo/echo: refused: you may not update services demo/echo-svc: gridview-apiserver admits the adoption",
	}, {
		name:   "kube-apiserver refuses the Service as gridview takes it over",
		refuse: func(c *fakeCluster) { c.invalidTakeover = "echo-svc" },
		want:   `demo/echo: refused: gridview-apiserver would refuse the adoption: kube-apiserver refuses Service demo/echo-svc as gridview would take it over (a server-side dry run): Service "echo-svc" is invalid`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := echoCluster(seService("echo", "10.96.196.73"))
			tc.refuse(c)
			out, err := c.run(t, "superedge", "-n", "demo")
			if err == nil {
				t.Error("the dry run of a refused migration succeeded")
			}
			if lines := linesOf(out, "demo/echo: "); len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) {
				t.Errorf("want the one line %q, got\n%s", tc.want, out)
			}
			if writes := c.writes(); len(writes) != 0 {
				t.Errorf("the dry run wrote: %v", writes)
			}
		})
	}
}

// A rewrite that fails although it was found admissible (the user's rights
// changed meanwhile, say) after the Service was orphaned puts SuperEdge's
// controller reference back; a run once the cause is gone migrates.
func TestMigratePutsSuperEdgesReferenceBackWhenTheAdoptionFails(t *testing.T) {
	unlabelled := seService("echo", "10.96.196.73")
	delete(unlabelled.Labels, labelGridSelector)
	const (
		created  = "demo/echo: created topology.gridview.io/v1alpha1 ServiceGrid (gridUniqKey superedge.io/nodeunit, fallback None)\n"
		orphaned = "demo/echo: orphaned Service demo/echo-svc for gridview to adopt it: SuperEdge's controller reference removed, label superedge.io/grid-selector=echo set\n"
		restored = "demo/echo: put SuperEdge's controller reference back on Service demo/echo-svc: it stays SuperEdge's, and the topology.gridview.io/v1alpha1 ServiceGrid waits for a later run\n"
	)
	forbidden := apierrors.NewForbidden(v1alpha1.Resource("servicegrids"), "echo", errors.New("may not update services"))

	for _, tc := range []struct {
		name    string
		service *corev1.Service
		// rewrite is gridview-apiserver's answer to the rewrite.
		rewrite error
		// restoreConflicts has someone change the Service before the restore.
		restoreConflicts bool
		want             string
	}{{
		name:    "403",
		service: seService("echo", "10.96.196.73"),
		rewrite: forbidden,
		want: created + orphaned + restored +
			`demo/echo: refused: gridview-apiserver refused the adoption: servicegrids.topology.gridview.io "echo" is forbidden: may not update services` + "\n",
	}, {
		name:    "422",
		service: seService("echo", "10.96.196.73"),
		rewrite: apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.GroupName, Kind: "ServiceGrid"}, "echo", takeoverErrors),
		want: created + orphaned + restored +
			`demo/echo: refused: gridview-apiserver refused the adoption: ServiceGrid.topology.gridview.io "echo" is invalid: spec.externalName: Invalid value: "": the test's kube-apiserver refuses the Service` + "\n",
	}, {
		name:    "unavailable",
		service: seService("echo", "10.96.196.73"),
		rewrite: apierrors.NewServiceUnavailable("etcd is down"),
		want: created + orphaned + restored +
			"demo/echo: failed: writing the topology.gridview.io/v1alpha1 ServiceGrid for the adoption: etcd is down\n",
	}, {
		name:    "the label the orphan step added goes again",
		service: unlabelled,
		rewrite: forbidden,
		want: created + orphaned + restored +
			`demo/echo: refused: gridview-apiserver refused the adoption: servicegrids.topology.gridview.io "echo" is forbidden: may not update services` + "\n",
	}, {
		name:             "the restore fails",
		service:          seService("echo", "10.96.196.73"),
		rewrite:          forbidden,
		restoreConflicts: true,
		want: created + orphaned +
			`demo/echo: could not put SuperEdge's controller reference back on Service demo/echo-svc: Operation cannot be fulfilled on services "echo-svc": changed meanwhile` + "\n" +
			`demo/echo: Service demo/echo-svc is left without a controller, with the label superedge.io/grid-selector="echo": it keeps serving, and gridview adopts it once a write of the topology.gridview.io/v1alpha1 ServiceGrid is admitted; fix the cause, then run this migration again to resume` + "\n" +
			`demo/echo: failed: gridview-apiserver refused the adoption: servicegrids.topology.gridview.io "echo" is forbidden: may not update services; ` +
			`and putting SuperEdge's controller reference back on Service demo/echo-svc failed: Operation cannot be fulfilled on services "echo-svc": changed meanwhile` + "\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := echoCluster(tc.service)
			before := tc.service.DeepCopy()
			failing := true
			c.gridview.PrependReactor("update", "servicegrids", func(clienttesting.Action) (bool, runtime.Object, error) {
				return failing, nil, tc.rewrite
			})
			var patches []string
			c.core.PrependReactor("patch", "services", func(action clienttesting.Action) (bool, runtime.Object, error) {
				patch := string(action.(clienttesting.PatchActionImpl).Patch)
				patches = append(patches, patch)
				if failing && tc.restoreConflicts && strings.Contains(patch, "se-uid-echo") {
					return true, nil, apierrors.NewConflict(corev1.Resource("services"), "echo-svc", errors.New("changed meanwhile"))
				}
				return false, nil, nil
			})

			out, err := c.run(t, "superedge", "-n", "demo", "--apply")
			if err == nil || out != tc.want {
				t.Errorf("run: %v\n--- got\n%s--- want\n%s", err, out, tc.want)
			}
			after := c.service(t, "echo-svc")
			if tc.restoreConflicts {
				if metav1.GetControllerOf(after) != nil || after.Labels[labelGridSelector] != "echo" {
					t.Errorf("the Service is not as the output says: owners %+v, labels %v", after.OwnerReferences, after.Labels)
				}
			} else if !apiequality.Semantic.DeepEqual(before, after) {
				t.Errorf("the Service is not SuperEdge's as before: owners %+v, labels %v", after.OwnerReferences, after.Labels)
			}
			if len(patches) != 2 || !strings.Contains(patches[1], `"resourceVersion":"7"`) {
				t.Errorf("want the orphan step and a restore on the orphan's resourceVersion, patches %q", patches)
			}
			if !c.superedgeGridExists(t, "echo") {
				t.Error("SuperEdge's ServiceGrid was deleted")
			}

			failing = false
			out, err = c.run(t, "superedge", "-n", "demo", "--apply")
			gv, getErr := c.gridview.TopologyV1alpha1().ServiceGrids("demo").Get(t.Context(), "echo", metav1.GetOptions{})
			if err != nil || getErr != nil || !metav1.IsControlledBy(c.service(t, "echo-svc"), gv) || c.superedgeGridExists(t, "echo") {
				t.Errorf("the run after the failure did not migrate: %v, %v\n%s", err, getErr, out)
			}
		})
	}
}
