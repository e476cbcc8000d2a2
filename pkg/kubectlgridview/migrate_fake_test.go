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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	corefake "k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/generated/clientset/versioned/fake"
)

const adoptAnnotation = "topology.gridview.io/adopt-service-uid"

var servicesResource = corev1.SchemeGroupVersion.WithResource("services")

// fakeCluster holds SuperEdge's ServiceGrids (dynamic), Services (core) and
// gridview's ServiceGrids, whose writes play gridview-apiserver: admission
// records the orphan a write may adopt, and the controller adopts it, or
// creates the Service, and reports Ready.
type fakeCluster struct {
	superedge *dynamicfake.FakeDynamicClient
	core      *corefake.Clientset
	gridview  *fake.Clientset
}

func newFakeCluster(superedge []runtime.Object, services []runtime.Object, grids ...runtime.Object) *fakeCluster {
	c := &fakeCluster{
		superedge: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{superedgeResource: "ServiceGridList"}, superedge...),
		core:     corefake.NewClientset(services...),
		gridview: fake.NewSimpleClientset(grids...), // NewClientset needs an apply schema the generated fake lacks
	}
	c.gridview.PrependReactor("create", "servicegrids", c.write)
	c.gridview.PrependReactor("update", "servicegrids", c.write)
	return c
}

// write stores a ServiceGrid as gridview-apiserver would, then reconciles it
// at once; the Services are changed on the tracker, so that the core fake's
// actions are the plugin's alone.
func (c *fakeCluster) write(action clienttesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "" {
		return false, nil, nil
	}
	sg := action.(interface{ GetObject() runtime.Object }).GetObject().(*v1alpha1.ServiceGrid).DeepCopy()
	if sg.UID == "" {
		sg.UID = types.UID("gv-uid-" + sg.Name)
	}
	v1alpha1.SetObjectDefaults_ServiceGrid(sg)
	services := c.core.Tracker()
	obj, err := services.Get(servicesResource, sg.Namespace, sg.Name+serviceSuffix)
	var svc *corev1.Service
	if err == nil {
		svc = obj.(*corev1.Service)
	}
	delete(sg.Annotations, adoptAnnotation)
	if svc != nil && metav1.GetControllerOf(svc) == nil && svc.Labels[labelGridSelector] == sg.Name {
		sg.Annotations = map[string]string{adoptAnnotation: string(svc.UID)}
	}
	ref := metav1.OwnerReference{APIVersion: "topology.gridview.io/v1alpha1", Kind: "ServiceGrid", Name: sg.Name, UID: sg.UID, Controller: ptr.To(true)}
	switch {
	case svc == nil:
		svc = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: sg.Name + serviceSuffix, Namespace: sg.Namespace, UID: "svc-uid-new",
			OwnerReferences: []metav1.OwnerReference{ref}}, Spec: sg.Spec.Template}
		err = services.Create(servicesResource, svc, sg.Namespace)
	case sg.Annotations[adoptAnnotation] == string(svc.UID):
		svc.OwnerReferences = []metav1.OwnerReference{ref}
		err = services.Update(servicesResource, svc, sg.Namespace)
	}
	if err != nil {
		return true, nil, err
	}
	ready := metav1.Condition{Type: v1alpha1.ServiceGridConditionReady, Status: metav1.ConditionTrue, Reason: "ServiceSynced"}
	if !metav1.IsControlledBy(svc, sg) {
		ready.Status, ready.Reason = metav1.ConditionFalse, "ServiceConflict"
	}
	meta.SetStatusCondition(&sg.Status.Conditions, ready)
	grids := c.gridview.Tracker()
	gvr := v1alpha1.SchemeGroupVersion.WithResource("servicegrids")
	if action.GetVerb() == "create" {
		err = grids.Create(gvr, sg, sg.Namespace)
	} else {
		err = grids.Update(gvr, sg, sg.Namespace)
	}
	return true, sg, err
}

// run runs `migrate args...` on the cluster, with an empty kubeconfig whose
// namespace is "default" unless -n says otherwise.
func (c *fakeCluster) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &options{
		configFlags: genericclioptions.NewConfigFlags(true),
		streams:     streams,
		topology:    func() (versioned.Interface, error) { return c.gridview, nil },
		core:        func() (corev1client.CoreV1Interface, error) { return c.core.CoreV1(), nil },
	}
	m := &migrateOptions{options: o, poll: time.Millisecond,
		dynamic: func() (dynamic.Interface, error) { return c.superedge, nil }}
	root := &cobra.Command{Use: "kubectl-gridview", SilenceErrors: true, SilenceUsage: true}
	o.configFlags.AddFlags(root.PersistentFlags())
	root.AddCommand(migrateCommand(m))
	root.SetArgs(append([]string{"--kubeconfig", kubeconfig, "migrate"}, args...))
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

// writes lists the actions of every fake that are not reads.
func (c *fakeCluster) writes() []clienttesting.Action {
	var writes []clienttesting.Action
	for _, actions := range [][]clienttesting.Action{c.superedge.Actions(), c.core.Actions(), c.gridview.Actions()} {
		for _, action := range actions {
			if verb := action.GetVerb(); verb != "get" && verb != "list" && verb != "watch" {
				writes = append(writes, action)
			}
		}
	}
	return writes
}

func (c *fakeCluster) clearActions() {
	c.superedge.ClearActions()
	c.core.ClearActions()
	c.gridview.ClearActions()
}

// service returns the Service, failing the test when it is missing.
func (c *fakeCluster) service(t *testing.T, name string) *corev1.Service {
	t.Helper()
	obj, err := c.core.Tracker().Get(servicesResource, "demo", name)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.Service)
}

// superedgeGridExists tells whether SuperEdge's ServiceGrid is still there.
func (c *fakeCluster) superedgeGridExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := c.superedge.Tracker().Get(superedgeResource, "demo", name)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// seGrid is a SuperEdge ServiceGrid as its CRD stores it, uid se-uid-<name>.
func seGrid(name, key string, template map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"template": template}
	if key != "" {
		spec["gridUniqKey"] = key
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": superedgeVersion, "kind": "ServiceGrid",
		"metadata": map[string]any{"name": name, "namespace": "demo", "uid": "se-uid-" + name, "labels": map[string]any{"app": name}},
		"spec":     spec,
	}}
	return obj
}

// echoTemplate is the template of the README's demo.
func echoTemplate() map[string]any {
	return map[string]any{
		"selector": map[string]any{"app": "echo"},
		"ports":    []any{map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080)}},
	}
}

// seService is the Service application-grid-controller makes for grid.
func seService(name string, clusterIP string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: name + serviceSuffix, Namespace: "demo", UID: types.UID("svc-uid-" + name), ResourceVersion: "7",
			Labels:          map[string]string{"app": name, labelGridSelector: name},
			Annotations:     map[string]string{"topologyKeys": `["superedge.io/nodeunit"]`},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: superedgeVersion, Kind: "ServiceGrid", Name: name, UID: types.UID("se-uid-" + name), Controller: ptr.To(true)}},
		},
		Spec: corev1.ServiceSpec{ClusterIP: clusterIP, Selector: map[string]string{"app": "echo"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}
