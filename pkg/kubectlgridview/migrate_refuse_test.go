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
	// lbService carries what users put on SuperEdge's Services themselves.
	lbService := seService("bad", "10.96.0.20")
	lbService.Labels["team"] = "edge"
	lbService.Annotations["service.beta.kubernetes.io/aws-load-balancer-internal"] = "true"
	gridviewKeyed := seService("bad", "10.96.0.20")
	gridviewKeyed.Annotations["topology.gridview.io/keys"] = "superedge.io/nodeunit,*"
	minReadied := seService("bad", "10.96.0.20")
	minReadied.Annotations["topology.gridview.io/min-ready"] = "2"
	// gridview is the ServiceGrid migrate would create for bad, changed.
	gridview := func(change func(*v1alpha1.ServiceGrid)) *v1alpha1.ServiceGrid {
		sg := desiredServiceGrid(readSuperEdgeGrid(seGrid("bad", "zone", echoTemplate())), nil)
		sg.UID = "gv-uid-bad"
		change(sg)
		return sg
	}

	for _, tc := range []struct {
		name      string
		superedge *unstructured.Unstructured
		service   *corev1.Service
		gridview  *v1alpha1.ServiceGrid
		// deny holds what the user may not do, as verb, resource and name.
		deny [][3]string
		// invalidTakeover has kube-apiserver refuse bad-svc taken over.
		invalidTakeover bool
		want            string
	}{
		{name: "Service controlled by something else", service: foreign,
			want: "Service demo/bad-svc is controlled by apps/v1 Deployment web (uid deploy-uid), neither this SuperEdge ServiceGrid nor gridview's"},
		{name: "Service controlled by an earlier SuperEdge ServiceGrid", service: earlier,
			want: "Service demo/bad-svc is controlled by superedge.io/v1 ServiceGrid bad (uid se-uid-earlier)"},
		{name: "orphan Service without the grid's label", service: unlabelled,
			want: "Service demo/bad-svc is an orphan without the label superedge.io/grid-selector=bad"},
		{name: "gridview ServiceGrid with another gridUniqKey", service: seService("bad", "10.96.0.20"),
			gridview: gridview(func(sg *v1alpha1.ServiceGrid) { sg.Spec.GridUniqKey = "region" }),
			want:     `the topology.gridview.io/v1alpha1 ServiceGrid exists with spec.gridUniqKey "region", where migrating SuperEdge's ServiceGrid makes "zone"`},
		{name: "gridview ServiceGrid with another template", service: seService("bad", "10.96.0.20"),
			gridview: gridview(func(sg *v1alpha1.ServiceGrid) { sg.Spec.Template.Ports[0].Port = 81 }),
			want:     "the topology.gridview.io/v1alpha1 ServiceGrid exists with spec.template.ports[0].port 81, where migrating SuperEdge's ServiceGrid makes 80"},
		{name: "gridview ServiceGrid with another fallback", service: seService("bad", "10.96.0.20"),
			gridview: gridview(func(sg *v1alpha1.ServiceGrid) { sg.Spec.Fallback = v1alpha1.FallbackAny }),
			want:     `the topology.gridview.io/v1alpha1 ServiceGrid exists with spec.fallback "Any", where migrating SuperEdge's ServiceGrid makes "None"`},
		{name: "gridview ServiceGrid with a minReady", service: seService("bad", "10.96.0.20"),
			gridview: gridview(func(sg *v1alpha1.ServiceGrid) { sg.Spec.MinReady = &v1alpha1.MinReady{Default: ptr.To[int32](2)} }),
			want:     `the topology.gridview.io/v1alpha1 ServiceGrid exists with spec.minReady {"default":2}, where migrating SuperEdge's ServiceGrid makes unset`},
		{name: "template with topologyKeys", superedge: seGrid("bad", "zone", withTopologyKeys), service: seService("bad", "10.96.0.20"),
			want: `spec.template is not a core/v1 ServiceSpec of today's Kubernetes: json: unknown field "topologyKeys"`},
		{name: "template with another clusterIP", superedge: seGrid("bad", "zone", withClusterIP), service: seService("bad", "10.96.0.20"),
			want: "spec.template.clusterIP 10.96.0.21 is not Service demo/bad-svc's clusterIP 10.96.0.20, which cannot change"},
		{name: "no gridUniqKey", superedge: seGrid("bad", "", echoTemplate()), service: seService("bad", "10.96.0.20"),
			want: "spec.gridUniqKey is empty"},
		{name: "SuperEdge's ServiceGrid being deleted with its Service", superedge: deleting, service: seService("bad", "10.96.0.20"),
			want: "it is being deleted while its Service is not gridview's"},
		{name: "gridview-apiserver refuses the ServiceGrid", service: seService("bad", "10.96.0.20"), deny: [][3]string{{"create", "services", "bad-svc"}},
			want: "gridview-apiserver refused the topology.gridview.io/v1alpha1 ServiceGrid: servicegrids.topology.gridview.io \"bad\" is forbidden: may not create services"},
		// gridview-apiserver would refuse these adoptions only once the Service
		// is an orphan: they are asked for before.
		{name: "the user may not update the Service", service: seService("bad", "10.96.0.20"), deny: [][3]string{{"update", "services", "bad-svc"}},
			want: "you may not update services demo/bad-svc: gridview-apiserver admits the adoption of Service demo/bad-svc only from a user who may update the ServiceGrid and update and patch the Service"},
		{name: "the user may not patch the Service", service: seService("bad", "10.96.0.20"), deny: [][3]string{{"patch", "services", "bad-svc"}},
			want: "you may not patch services demo/bad-svc: gridview-apiserver admits"},
		{name: "the user may not update the gridview ServiceGrid", service: seService("bad", "10.96.0.20"),
			gridview: gridview(func(*v1alpha1.ServiceGrid) {}), deny: [][3]string{{"update", "servicegrids", "bad"}},
			want: "you may not update servicegrids.topology.gridview.io demo/bad: gridview-apiserver admits"},
		{name: "gridview ServiceGrid without the Service's own annotation and label", service: lbService,
			gridview: gridview(func(*v1alpha1.ServiceGrid) {}),
			want: "the adoption would take annotation service.beta.kubernetes.io/aws-load-balancer-internal, label team off Service demo/bad-svc: " +
				"gridview writes a Service's labels and annotations from its ServiceGrid; put them on the topology.gridview.io/v1alpha1 ServiceGrid demo/bad"},
		{name: "gridview ServiceGrid with another value of the Service's label", service: seService("bad", "10.96.0.20"),
			gridview: gridview(func(sg *v1alpha1.ServiceGrid) { sg.Labels["app"] = "web" }),
			want:     `the adoption would take label app ("bad" would become "web") off Service demo/bad-svc`},
		{name: "Service routed by gridview's own keys", service: gridviewKeyed,
			want: `Service demo/bad-svc carries annotation topology.gridview.io/keys="superedge.io/nodeunit,*", which routes otherwise than SuperEdge`},
		{name: "Service with gridview's min-ready", service: minReadied,
			want: `Service demo/bad-svc carries annotation topology.gridview.io/min-ready="2", which routes otherwise than SuperEdge`},
		{name: "gridview ServiceGrid routed by gridview's own keys", service: seService("bad", "10.96.0.20"),
			gridview: gridview(func(sg *v1alpha1.ServiceGrid) {
				sg.Annotations = map[string]string{"topology.gridview.io/keys": "zone,*"}
			}),
			want: `the topology.gridview.io/v1alpha1 ServiceGrid carries annotation topology.gridview.io/keys="zone,*", which routes otherwise than SuperEdge`},
		{name: "kube-apiserver refuses the Service as gridview takes it over", service: seService("bad", "10.96.0.20"), invalidTakeover: true,
			want: `gridview-apiserver would refuse the adoption: kube-apiserver refuses Service demo/bad-svc as gridview would take it over (a server-side dry run): Service "bad-svc" is invalid: spec.externalName: Invalid value: "": the test's kube-apiserver refuses the Service`},
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
			for _, deny := range tc.deny {
				c.deny(deny[0], deny[1], deny[2])
			}
			if tc.invalidTakeover {
				c.invalidTakeover = "bad-svc"
			}
			before := tc.service.DeepCopy()

			out, err := c.run(t, "superedge", "-n", "demo", "--apply")
			if err == nil || !strings.Contains(err.Error(), "1 of 2 SuperEdge ServiceGrids not migrated: [demo/bad]") {
				t.Errorf("error %v, want 1 of 2 not migrated", err)
			}
			// The refusal is bad's only line: no step was taken before it.
			if lines := linesOf(out, "demo/bad: "); len(lines) != 1 || !strings.HasPrefix(lines[0], "demo/bad: refused: "+tc.want) {
				t.Errorf("want the one line %q, got\n%s", "demo/bad: refused: "+tc.want, out)
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
			for _, action := range c.writes() {
				if update, ok := action.(clienttesting.UpdateActionImpl); ok && update.Resource.Resource == "servicegrids" &&
					update.Object.(*v1alpha1.ServiceGrid).Name == "bad" {
					t.Errorf("the gridview ServiceGrid of the refused one was written")
				}
			}
			if after, err := c.gridview.Tracker().Get(v1alpha1.SchemeGroupVersion.WithResource("servicegrids"), "demo", "bad"); tc.gridview == nil && !apierrors.IsNotFound(err) {
				t.Errorf("a gridview ServiceGrid was created for the refused one: %v", after)
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
