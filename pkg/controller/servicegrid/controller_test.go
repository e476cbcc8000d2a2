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

package servicegrid

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	gridviewfake "github.com/gridview/gridview/generated/clientset/versioned/fake"
	topologyinformers "github.com/gridview/gridview/generated/informers/externalversions"
	"github.com/gridview/gridview/pkg/topology"
)

func service(name string, mutate func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", UID: "svc-uid-" + k8stypes.UID(name)},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	mutate(svc)
	return svc
}

func ownedBy(sg *v1alpha1.ServiceGrid) func(*corev1.Service) {
	return func(svc *corev1.Service) {
		svc.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(sg, v1alpha1.SchemeGroupVersion.WithKind("ServiceGrid"))}
	}
}

func TestSync(t *testing.T) {
	grid := echoGrid()
	grid.Generation = 2
	recreated := grid.DeepCopy()
	recreated.UID = "uid-2"
	tests := []struct {
		name         string
		grid         *v1alpha1.ServiceGrid // nil: not found
		seenDeleted  []*v1alpha1.ServiceGrid
		services     []*corev1.Service
		wantServices map[string]func(*testing.T, *corev1.Service) // nil func: must be gone
		wantReason   string
		wantEvent    string
	}{
		{
			name:         "creates the Service",
			grid:         grid,
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": expectControlledBy(grid)},
			wantReason:   ReasonServiceSynced,
			wantEvent:    "Normal ServiceCreated",
		},
		{
			name:     "leaves a foreign Service alone",
			grid:     grid,
			services: []*corev1.Service{service("echo-svc", func(svc *corev1.Service) { svc.Labels = map[string]string{"owner": "other"} })},
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": func(t *testing.T, svc *corev1.Service) {
				if len(svc.OwnerReferences) != 0 || svc.Labels[LabelGridSelector] != "" {
					t.Errorf("foreign Service changed: %+v", svc.ObjectMeta)
				}
			}},
			wantReason: ReasonServiceConflict,
			wantEvent:  "Warning ServiceConflict",
		},
		{
			name: "adopts an orphan that carries its label, keeping nothing planted on it",
			grid: admittedToAdopt(grid, "svc-uid-echo-svc"),
			services: []*corev1.Service{service("echo-svc", func(svc *corev1.Service) {
				svc.Labels = map[string]string{LabelGridSelector: "echo", "service.kubernetes.io/service-proxy-name": "elsewhere"}
				svc.Annotations = map[string]string{"planted": "yes"}
				svc.Spec.ExternalIPs = []string{"203.0.113.7"}
				svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			})},
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": func(t *testing.T, svc *corev1.Service) {
				expectControlledBy(grid)(t, svc)
				if len(svc.Spec.ExternalIPs) != 0 || svc.Spec.SessionAffinity != "" || svc.Labels["service.kubernetes.io/service-proxy-name"] != "" ||
					svc.Annotations["planted"] != "" || svc.Annotations[AnnotationAdoptServiceUID] != "" {
					t.Errorf("adopted Service kept planted fields: %+v %+v", svc.ObjectMeta, svc.Spec)
				}
				for _, entry := range svc.ManagedFields {
					if entry.Manager != FieldManager || entry.Operation != metav1.ManagedFieldsOperationApply {
						t.Errorf("managedFields entry %s/%s left after the adoption, want gridview's apply alone", entry.Manager, entry.Operation)
					}
				}
			}},
			wantReason: ReasonServiceSynced,
			wantEvent:  "Normal ServiceAdopted",
		},
		{
			// Admission asked only to create a Service: the orphan came later,
			// e.g. SuperEdge's ServiceGrid deleted with --cascade=orphan.
			name:         "leaves alone an orphan that carries its label but no write of the ServiceGrid was admitted against",
			grid:         grid,
			services:     []*corev1.Service{labelledOrphan()},
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": expectUntouchedOrphan},
			wantReason:   ReasonAdoptionNotAuthorized,
			wantEvent:    "Warning AdoptionNotAuthorized",
		},
		{
			// The orphan admitted was deleted and another planted in its place.
			name:         "leaves alone an orphan other than the one admitted",
			grid:         admittedToAdopt(grid, "svc-uid-deleted-since"),
			services:     []*corev1.Service{labelledOrphan()},
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": expectUntouchedOrphan},
			wantReason:   ReasonAdoptionNotAuthorized,
			wantEvent:    "Warning AdoptionNotAuthorized",
		},
		{
			name: "deletes Services it controls under another name",
			grid: grid,
			services: []*corev1.Service{
				service("echo-svc", ownedBy(grid)),
				service("echo-old", ownedBy(grid)),
				service("unrelated", func(*corev1.Service) {}),
			},
			wantServices: map[string]func(*testing.T, *corev1.Service){
				"echo-svc": expectControlledBy(grid), "echo-old": nil, "unrelated": func(*testing.T, *corev1.Service) {},
			},
			wantReason: ReasonServiceSynced,
		},
		{
			name:         "a ServiceGrid being deleted takes its Service along",
			grid:         deleting(grid, metav1.FinalizerDeleteDependents),
			services:     []*corev1.Service{service("echo-svc", ownedBy(grid))},
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": nil},
		},
		{
			// kubectl delete --cascade=orphan: the garbage collector takes the
			// controller reference off while the ServiceGrid waits for it.
			name:     "a ServiceGrid deleted with propagationPolicy=Orphan leaves its Service as it is",
			grid:     deleting(grid, metav1.FinalizerOrphanDependents),
			services: []*corev1.Service{service("echo-svc", ownedBy(grid))},
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": func(t *testing.T, svc *corev1.Service) {
				expectOwnerUID("uid-1")(t, svc)
				if len(svc.Labels) != 0 || len(svc.Annotations) != 0 {
					t.Errorf("Service applied to while its ServiceGrid orphans it: %+v", svc.ObjectMeta)
				}
			}},
		},
		{
			name:         "a deleted ServiceGrid takes its Service along",
			seenDeleted:  []*v1alpha1.ServiceGrid{grid},
			services:     []*corev1.Service{service("echo-svc", ownedBy(grid)), service("unrelated", func(*corev1.Service) {})},
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": nil, "unrelated": func(*testing.T, *corev1.Service) {}},
		},
		{
			// An emptied or replaced store: nothing says the ServiceGrid was deleted.
			name:         "a ServiceGrid not found but not seen deleted keeps its Service",
			services:     []*corev1.Service{service("echo-svc", ownedBy(grid))},
			wantServices: map[string]func(*testing.T, *corev1.Service){"echo-svc": expectOwnerUID("uid-1")},
		},
		{
			// A replica that saw the deletion meets the recreated ServiceGrid's Service.
			name:        "a deletion removes the Services of that UID only, not those of the ServiceGrid recreated under its name",
			seenDeleted: []*v1alpha1.ServiceGrid{grid},
			services:    []*corev1.Service{service("echo-svc", ownedBy(recreated)), service("echo-old", ownedBy(grid))},
			wantServices: map[string]func(*testing.T, *corev1.Service){
				"echo-svc": expectOwnerUID("uid-2"), "echo-old": nil,
			},
		},
		{
			name:        "a recreated ServiceGrid keeps its Service while the old one's goes",
			grid:        recreated,
			seenDeleted: []*v1alpha1.ServiceGrid{grid},
			services:    []*corev1.Service{service("echo-svc", ownedBy(recreated)), service("echo-old", ownedBy(grid))},
			wantServices: map[string]func(*testing.T, *corev1.Service){
				"echo-svc": expectControlledBy(recreated), "echo-old": nil,
			},
			wantReason: ReasonServiceSynced,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var kubeObjects, gridObjects []runtime.Object
			for _, svc := range tc.services {
				kubeObjects = append(kubeObjects, svc)
			}
			if tc.grid != nil {
				gridObjects = append(gridObjects, tc.grid.DeepCopy())
			}
			kube := kubefake.NewClientset(kubeObjects...)
			gridview := gridviewfake.NewSimpleClientset(gridObjects...)
			kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
			gridFactory := topologyinformers.NewSharedInformerFactory(gridview, 0)
			recorder := record.NewFakeRecorder(10)
			c, err := NewController(kube, gridview, gridFactory.Topology().V1alpha1().ServiceGrids(), kubeFactory.Core().V1().Services(), recorder)
			if err != nil {
				t.Fatal(err)
			}
			for _, svc := range tc.services {
				mustAdd(t, kubeFactory.Core().V1().Services().Informer().GetIndexer(), svc)
			}
			for _, sg := range gridObjects {
				mustAdd(t, gridFactory.Topology().V1alpha1().ServiceGrids().Informer().GetIndexer(), sg)
			}
			for _, sg := range tc.seenDeleted {
				c.serviceGridDeleted(sg)
			}

			if err := c.sync(ctx, cache.ObjectName{Namespace: "demo", Name: "echo"}); err != nil {
				t.Fatalf("sync: %v", err)
			}

			for name, check := range tc.wantServices {
				svc, err := kube.CoreV1().Services("demo").Get(ctx, name, metav1.GetOptions{})
				if check == nil {
					if !apierrors.IsNotFound(err) {
						t.Errorf("Service %s: %v, want it deleted", name, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Service %s: %v", name, err)
				}
				check(t, svc)
			}
			if tc.wantReason != "" {
				stored, err := gridview.TopologyV1alpha1().ServiceGrids("demo").Get(ctx, "echo", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				cond := meta.FindStatusCondition(stored.Status.Conditions, v1alpha1.ServiceGridConditionReady)
				if cond == nil || cond.Reason != tc.wantReason || stored.Status.ObservedGeneration != 2 || stored.UID != tc.grid.UID {
					t.Errorf("status = %+v, want Ready with reason %s at generation 2", stored.Status, tc.wantReason)
				}
			}
			if tc.wantEvent != "" {
				select {
				case ev := <-recorder.Events:
					if !strings.HasPrefix(ev, tc.wantEvent) {
						t.Errorf("event %q, want %q", ev, tc.wantEvent)
					}
				default:
					t.Errorf("no event, want %q", tc.wantEvent)
				}
			}
		})
	}
}

// A delete names the Service's UID and resourceVersion: the copy the cache
// showed controlled by the deleted ServiceGrid, not whatever took its name
// or its controller reference since.
func TestDeletesAreConditional(t *testing.T) {
	ctx := context.Background()
	grid := echoGrid()
	svc := service("echo-svc", ownedBy(grid))
	svc.ResourceVersion = "7"
	kube := kubefake.NewClientset(svc)
	c, services := newTestController(t, kube, gridviewfake.NewSimpleClientset())
	mustAdd(t, services, svc)
	c.serviceGridDeleted(grid)
	if err := c.sync(ctx, cache.ObjectName{Namespace: "demo", Name: "echo"}); err != nil {
		t.Fatalf("sync: %v", err)
	}

	var deletes []clienttesting.DeleteActionImpl
	for _, action := range kube.Actions() {
		if del, ok := action.(clienttesting.DeleteActionImpl); ok {
			deletes = append(deletes, del)
		}
	}
	if len(deletes) != 1 {
		t.Fatalf("deletes = %+v, want one", deletes)
	}
	pre := deletes[0].DeleteOptions.Preconditions
	if pre == nil || pre.UID == nil || *pre.UID != svc.UID || pre.ResourceVersion == nil || *pre.ResourceVersion != "7" {
		t.Errorf("delete preconditions = %+v, want uid %s and resourceVersion 7", pre, svc.UID)
	}
}

// admittedToAdopt returns sg as admission leaves it once a user who may
// update and patch the orphan of that UID wrote it.
func admittedToAdopt(sg *v1alpha1.ServiceGrid, uid k8stypes.UID) *v1alpha1.ServiceGrid {
	admitted := sg.DeepCopy()
	admitted.Annotations[AnnotationAdoptServiceUID] = string(uid)
	return admitted
}

// labelledOrphan is a Service without a controller that carries the grid
// label of ServiceGrid echo, as SuperEdge's orphaned Service does.
func labelledOrphan() *corev1.Service {
	return service("echo-svc", func(svc *corev1.Service) {
		svc.Labels = map[string]string{LabelGridSelector: "echo"}
		svc.Spec.Selector = map[string]string{"app": "superedge-echo"}
	})
}

func expectUntouchedOrphan(t *testing.T, svc *corev1.Service) {
	if len(svc.OwnerReferences) != 0 || svc.Spec.Selector["app"] != "superedge-echo" || svc.Annotations[topology.AnnotationTopologyKeys] != "" {
		t.Errorf("orphan changed without an admitted adoption: %+v %+v", svc.ObjectMeta, svc.Spec)
	}
}

// deleting returns sg as a deletion with that finalizer leaves it stored.
func deleting(sg *v1alpha1.ServiceGrid, finalizer string) *v1alpha1.ServiceGrid {
	deleted := sg.DeepCopy()
	deleted.DeletionTimestamp = &metav1.Time{}
	deleted.Finalizers = []string{finalizer}
	return deleted
}

// The deletion may be seen before the Service informer has seen the Service
// gridview applied just before it: the Service goes all the same, at once and
// not only once the informer catches up, since the UID is forgotten then.
func TestDeletionDoesNotWaitForTheServiceCache(t *testing.T) {
	grid := echoGrid()
	tests := []struct {
		name        string
		grid        *v1alpha1.ServiceGrid // nil: not found
		seenDeleted *v1alpha1.ServiceGrid
	}{
		{name: "a ServiceGrid seen deleted", seenDeleted: grid},
		{name: "a ServiceGrid being deleted in the foreground", grid: deleting(grid, metav1.FinalizerDeleteDependents)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var grids []runtime.Object
			if tc.grid != nil {
				grids = append(grids, tc.grid)
			}
			kube := kubefake.NewClientset(service("echo-svc", ownedBy(grid)))
			c, _ := newTestController(t, kube, gridviewfake.NewSimpleClientset(grids...))
			if tc.seenDeleted != nil {
				c.serviceGridDeleted(tc.seenDeleted)
			}

			// The Service informer has not seen the Service.
			if err := c.sync(ctx, cache.ObjectName{Namespace: "demo", Name: "echo"}); err != nil {
				t.Fatalf("sync: %v", err)
			}

			if _, err := kube.CoreV1().Services("demo").Get(ctx, "echo-svc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("Service echo-svc: %v, want it deleted with its ServiceGrid", err)
			}
		})
	}
}

func expectOwnerUID(uid k8stypes.UID) func(*testing.T, *corev1.Service) {
	return func(t *testing.T, svc *corev1.Service) {
		if ref := metav1.GetControllerOf(svc); ref == nil || ref.UID != uid {
			t.Errorf("Service %s owners = %+v, want the ServiceGrid of uid %s", svc.Name, svc.OwnerReferences, uid)
		}
	}
}

func expectControlledBy(sg *v1alpha1.ServiceGrid) func(*testing.T, *corev1.Service) {
	return func(t *testing.T, svc *corev1.Service) {
		if !metav1.IsControlledBy(svc, sg) {
			t.Errorf("Service %s owners = %+v, want controlled by the ServiceGrid", svc.Name, svc.OwnerReferences)
		}
		if svc.Labels[LabelGridSelector] != sg.Name || svc.Annotations[topology.AnnotationTopologyKeys] != `["superedge.io/nodeunit"]` {
			t.Errorf("Service %s metadata = %+v", svc.Name, svc.ObjectMeta)
		}
	}
}

// newTestController is a controller on fake clients whose informers are
// never started, and the indexer of its Service informer: sync reads the
// ServiceGrid and its Service live, and lists Services from the cache.
func newTestController(t *testing.T, kube kubernetes.Interface, gridview versioned.Interface) (*Controller, cache.Indexer) {
	t.Helper()
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	gridFactory := topologyinformers.NewSharedInformerFactory(gridview, 0)
	c, err := NewController(kube, gridview, gridFactory.Topology().V1alpha1().ServiceGrids(), kubeFactory.Core().V1().Services(), record.NewFakeRecorder(10))
	if err != nil {
		t.Fatal(err)
	}
	return c, kubeFactory.Core().V1().Services().Informer().GetIndexer()
}

func mustAdd(t *testing.T, indexer cache.Indexer, obj interface{}) {
	t.Helper()
	if err := indexer.Add(obj); err != nil {
		t.Fatal(err)
	}
}
