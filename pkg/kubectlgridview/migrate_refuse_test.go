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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// Each case holds a ServiceGrid "bad" that cannot be handed over next to
// "good": bad is refused with its reason and left as it was, good is
// migrated, and the run fails.
func TestMigrateRefuses(t *testing.T) {
	foreign := seService("bad", "10.96.0.20")
	foreign.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "deploy-uid", Controller: ptr.To(true)}}
	earlier := seService("bad", "10.96.0.20")
	earlier.OwnerReferences[0].UID = "se-uid-earlier"
	unlabelled := seService("bad", "10.96.0.20")
	unlabelled.OwnerReferences, unlabelled.Labels = nil, nil
	withTopologyKeys := echoTemplate()
	withTopologyKeys["topologyKeys"] = []any{"zone"}
	withClusterIP := echoTemplate()
	withClusterIP["clusterIP"] = "10.96.0.21"
	deleting := seGrid("bad", "zone", echoTemplate())
	deleting.SetDeletionTimestamp(ptr.To(metav1.Now()))
	gridview := func(key string, port int32) *v1alpha1.ServiceGrid {
		return &v1alpha1.ServiceGrid{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "demo", UID: "gv-uid-bad"},
			Spec: v1alpha1.ServiceGridSpec{GridUniqKey: key, Fallback: v1alpha1.FallbackNone, Template: corev1.ServiceSpec{
				Selector: map[string]string{"app": "echo"}, Ports: []corev1.ServicePort{{Name: "http", Port: port, Protocol: corev1.ProtocolTCP}}}}}
	}

	for _, tc := range []struct {
		name      string
		superedge *unstructured.Unstructured
		service   *corev1.Service
		gridview  *v1alpha1.ServiceGrid
		// refuseCreate has gridview-apiserver refuse the ServiceGrid.
		refuseCreate bool
		want         string
	}{
		{name: "Service controlled by something else", service: foreign,
			want: "Service demo/bad-svc is controlled by apps/v1 Deployment web (uid deploy-uid), neither this SuperEdge ServiceGrid nor gridview's"},
		{name: "Service controlled by an earlier SuperEdge ServiceGrid", service: earlier,
			want: "Service demo/bad-svc is controlled by superedge.io/v1 ServiceGrid bad (uid se-uid-earlier)"},
		{name: "orphan Service without the grid's label", service: unlabelled,
			want: "Service demo/bad-svc is an orphan without the label superedge.io/grid-selector=bad"},
		{name: "gridview ServiceGrid with another gridUniqKey", service: seService("bad", "10.96.0.20"), gridview: gridview("region", 80),
			want: `the topology.gridview.io/v1alpha1 ServiceGrid exists with gridUniqKey "region", not "zone"`},
		{name: "gridview ServiceGrid with another template", service: seService("bad", "10.96.0.20"), gridview: gridview("zone", 81),
			want: "the topology.gridview.io/v1alpha1 ServiceGrid exists with another template"},
		{name: "template with topologyKeys", superedge: seGrid("bad", "zone", withTopologyKeys), service: seService("bad", "10.96.0.20"),
			want: `spec.template is not a core/v1 ServiceSpec of today's Kubernetes: json: unknown field "topologyKeys"`},
		{name: "template with another clusterIP", superedge: seGrid("bad", "zone", withClusterIP), service: seService("bad", "10.96.0.20"),
			want: "spec.template.clusterIP 10.96.0.21 is not Service demo/bad-svc's clusterIP 10.96.0.20, which cannot change"},
		{name: "no gridUniqKey", superedge: seGrid("bad", "", echoTemplate()), service: seService("bad", "10.96.0.20"),
			want: "spec.gridUniqKey is empty"},
		{name: "SuperEdge's ServiceGrid being deleted with its Service", superedge: deleting, service: seService("bad", "10.96.0.20"),
			want: "it is being deleted while its Service is not gridview's"},
		{name: "gridview-apiserver refuses the ServiceGrid", service: seService("bad", "10.96.0.20"), refuseCreate: true,
			want: "gridview-apiserver refused the topology.gridview.io/v1alpha1 ServiceGrid: servicegrids.topology.gridview.io \"bad\" is forbidden: may not create services"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.superedge == nil {
				tc.superedge = seGrid("bad", "zone", echoTemplate())
			}
			var grids []runtime.Object
			if tc.gridview != nil {
				grids = append(grids, tc.gridview)
			}
			c := newFakeCluster([]runtime.Object{seGrid("good", "zone", echoTemplate()), tc.superedge},
				[]runtime.Object{seService("good", "10.96.0.10"), tc.service}, grids...)
			if tc.refuseCreate {
				c.gridview.PrependReactor("create", "servicegrids", func(action clienttesting.Action) (bool, runtime.Object, error) {
					sg := action.(clienttesting.CreateAction).GetObject().(*v1alpha1.ServiceGrid)
					if sg.Name != "bad" {
						return false, nil, nil
					}
					return true, nil, apierrors.NewForbidden(v1alpha1.Resource("servicegrids"), sg.Name, errors.New("may not create services"))
				})
			}
			before := tc.service.DeepCopy()

			out, err := c.run(t, "superedge", "-n", "demo", "--apply")
			if err == nil || !strings.Contains(err.Error(), "1 of 2 SuperEdge ServiceGrids not migrated: [demo/bad]") {
				t.Errorf("error %v, want 1 of 2 not migrated", err)
			}
			if !strings.Contains(out, "demo/bad: refused: "+tc.want) {
				t.Errorf("no refusal %q in\n%s", tc.want, out)
			}
			if after := c.service(t, "bad-svc"); !apiequality.Semantic.DeepEqual(before, after) {
				t.Errorf("the refused Service changed: owners %+v, labels %v", after.OwnerReferences, after.Labels)
			}
			if !c.superedgeGridExists(t, "bad") {
				t.Error("the refused SuperEdge ServiceGrid was deleted")
			}
			if c.superedgeGridExists(t, "good") || !strings.Contains(out, "demo/good: handed Service demo/good-svc over") {
				t.Errorf("the other ServiceGrid was not migrated:\n%s", out)
			}
			for _, action := range c.gridview.Actions() {
				if create, ok := action.(clienttesting.CreateAction); ok && create.GetObject().(*v1alpha1.ServiceGrid).Name == "bad" && !tc.refuseCreate {
					t.Errorf("a gridview ServiceGrid was created for the refused one")
				}
			}
		})
	}
}

// A handover that gridview does not complete stops with what it saw, and the
// next ServiceGrid is still tried.
func TestMigrateStopsAHandoverGridviewDoesNotComplete(t *testing.T) {
	for _, tc := range []struct {
		name string
		// interfere runs after each patch of a Service, as another controller would.
		interfere func(c *fakeCluster, svc *corev1.Service)
		// noAdoption has gridview-apiserver record no adoption.
		noAdoption bool
		want       string
	}{{
		name: "application-grid-controller still runs",
		interfere: func(c *fakeCluster, svc *corev1.Service) {
			svc.OwnerReferences = seService(svc.Labels["app"], "").OwnerReferences
			if err := c.core.Tracker().Update(servicesResource, svc, svc.Namespace); err != nil {
				t.Fatal(err)
			}
		},
		want: "demo/echo: failed: waiting for gridview to adopt Service demo/echo-svc: " + errTakenBack.Error(),
	}, {
		name:       "gridview does not adopt",
		noAdoption: true,
		want:       "demo/echo: failed: gridview did not adopt Service demo/echo-svc within 50ms (Ready=False, ServiceConflict: ); run again to resume",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := demoCluster()
			if tc.interfere != nil {
				c.core.PrependReactor("patch", "services", func(action clienttesting.Action) (bool, runtime.Object, error) {
					patch := action.(clienttesting.PatchActionImpl)
					obj, err := c.core.Tracker().Get(servicesResource, patch.Namespace, patch.Name)
					if err != nil {
						return true, nil, err
					}
					svc := obj.(*corev1.Service)
					svc.OwnerReferences = nil
					tc.interfere(c, svc)
					return true, svc, nil
				})
			}
			if tc.noAdoption {
				c.gridview.PrependReactor("update", "servicegrids", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, nil
				})
			}
			out, err := c.run(t, "superedge", "-n", "demo", "--apply", "--timeout=50ms")
			if err == nil || !strings.Contains(out, tc.want+"\n") || !strings.Contains(out, "demo/plain: deleted") {
				t.Errorf("error %v, output\n%s\nwant a line %q and plain migrated", err, out, tc.want)
			}
			if !c.superedgeGridExists(t, "echo") {
				t.Error("SuperEdge's ServiceGrid was deleted although its Service was not handed over")
			}
		})
	}
}
