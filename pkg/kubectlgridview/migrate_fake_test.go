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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	corefake "k8s.io/client-go/kubernetes/fake"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/generated/clientset/versioned/fake"
	"github.com/gridview/gridview/pkg/controller/servicegrid"
)

const adoptAnnotation = "topology.gridview.io/adopt-service-uid"

var servicesResource = corev1.SchemeGroupVersion.WithResource("services")

// fakeCluster holds SuperEdge's ServiceGrids (dynamic), Services (core) and
// gridview's ServiceGrids, whose writes play gridview-apiserver: admission
// checks the user's rights and records the orphan a write may adopt, and the
// controller adopts it, or creates the Service, and reports Ready.
type fakeCluster struct {
	superedge *dynamicfake.FakeDynamicClient
	core      *corefake.Clientset
	gridview  *fake.Clientset
	// denied holds what the user may not do, as "verb resource/name"; access
	// reviews, Service writes and gridview's admission all answer by it.
	denied map[string]bool
	// invalidTakeover names the Service kube-apiserver refuses as gridview
	// takes it over: a dry run of that, and gridview's admission of the adoption.
	invalidTakeover string
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
	c.core.PrependReactor("create", "selfsubjectaccessreviews", c.review)
	c.core.PrependReactor("update", "services", c.writeService)
	c.core.PrependReactor("patch", "services", c.writeService)
	return c
}

// deny takes a right from the user.
func (c *fakeCluster) deny(verb, resource, name string) {
	if c.denied == nil {
		c.denied = map[string]bool{}
	}
	c.denied[verb+" "+resource+"/"+name] = true
}

func (c *fakeCluster) denies(verb, resource, name string) bool {
	return c.denied[verb+" "+resource+"/"+name]
}

// review answers a SelfSubjectAccessReview.
func (c *fakeCluster) review(action clienttesting.Action) (bool, runtime.Object, error) {
	review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
	attributes := review.Spec.ResourceAttributes
	review.Status.Allowed = !c.denies(attributes.Verb, attributes.Resource, attributes.Name)
	return true, review, nil
}

// writeService refuses the Service writes the user may not make, and answers
// a dry run without storing it, as kube-apiserver would.
func (c *fakeCluster) writeService(action clienttesting.Action) (bool, runtime.Object, error) {
	var name string
	var dryRun []string
	var obj runtime.Object
	switch action := action.(type) {
	case clienttesting.UpdateActionImpl:
		obj = action.Object
		name, dryRun = obj.(*corev1.Service).Name, action.UpdateOptions.DryRun
	case clienttesting.PatchActionImpl:
		name, dryRun = action.Name, action.PatchOptions.DryRun
	}
	switch {
	case c.denies(action.GetVerb(), "services", name):
		return true, nil, apierrors.NewForbidden(corev1.Resource("services"), name, fmt.Errorf("may not %s services", action.GetVerb()))
	case len(dryRun) == 0:
		return false, nil, nil
	case name == c.invalidTakeover:
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, name, takeoverErrors)
	}
	return true, obj, nil
}

// takeoverErrors are kube-apiserver's on invalidTakeover.
var takeoverErrors = field.ErrorList{field.Invalid(field.NewPath("spec", "externalName"), "", "the test's kube-apiserver refuses the Service")}

// admit plays gridview-apiserver's admission of a write of sg: the user must
// be allowed to write sg, and the Service as gridview will: create it, or
// update and patch the one gridview controls or adopts; kube-apiserver must
// accept an adopted orphan taken over.
func (c *fakeCluster) admit(verb string, sg *v1alpha1.ServiceGrid, svc *corev1.Service) error {
	if c.denies(verb, "servicegrids", sg.Name) {
		return apierrors.NewForbidden(v1alpha1.Resource("servicegrids"), sg.Name, fmt.Errorf("may not %s servicegrids", verb))
	}
	adopting := svc != nil && metav1.GetControllerOf(svc) == nil && svc.Labels[labelGridSelector] == sg.Name
	verbs := []string{"create"}
	if adopting || svc != nil && metav1.IsControlledBy(svc, sg) {
		verbs = []string{"update", "patch"}
	}
	for _, verb := range verbs {
		if c.denies(verb, "services", sg.Name+serviceSuffix) {
			return apierrors.NewForbidden(v1alpha1.Resource("servicegrids"), sg.Name, fmt.Errorf("may not %s services", verb))
		}
	}
	if adopting && svc.Name == c.invalidTakeover {
		return apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.GroupName, Kind: "ServiceGrid"}, sg.Name, takeoverErrors)
	}
	return nil
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
	if err := c.admit(action.GetVerb(), sg, svc); err != nil {
		return true, nil, err
	}
	delete(sg.Annotations, adoptAnnotation)
	if svc != nil && metav1.GetControllerOf(svc) == nil && svc.Labels[labelGridSelector] == sg.Name {
		if sg.Annotations == nil {
			sg.Annotations = map[string]string{}
		}
		sg.Annotations[adoptAnnotation] = string(svc.UID)
	}
	// The Service as the controller writes it.
	switch {
	case svc == nil:
		if svc, err = servicegrid.DesiredServiceObject(sg); err == nil {
			svc.UID = "svc-uid-new"
			err = services.Create(servicesResource, svc, sg.Namespace)
		}
	case sg.Annotations[adoptAnnotation] == string(svc.UID):
		clusterIP := svc.Spec.ClusterIP
		if svc, err = servicegrid.Takeover(svc, sg); err == nil {
			svc.Spec.ClusterIP = clusterIP // kept by kube-apiserver
			err = services.Update(servicesResource, svc, sg.Namespace)
		}
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
		dynamic:       func() (dynamic.Interface, error) { return c.superedge, nil },
		authorization: func() (authorizationv1client.AuthorizationV1Interface, error) { return c.core.AuthorizationV1(), nil }}
	root := &cobra.Command{Use: "kubectl-gridview", SilenceErrors: true, SilenceUsage: true}
	o.configFlags.AddFlags(root.PersistentFlags())
	root.AddCommand(migrateCommand(m))
	root.SetArgs(append([]string{"--kubeconfig", kubeconfig, "migrate"}, args...))
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

// writes lists the actions of every fake that may change something: no
// reads, access reviews or dry runs.
func (c *fakeCluster) writes() []clienttesting.Action {
	var writes []clienttesting.Action
	for _, actions := range [][]clienttesting.Action{c.superedge.Actions(), c.core.Actions(), c.gridview.Actions()} {
		for _, action := range actions {
			if verb := action.GetVerb(); verb == "get" || verb == "list" || verb == "watch" ||
				action.GetResource().Resource == "selfsubjectaccessreviews" {
				continue
			}
			if update, ok := action.(clienttesting.UpdateActionImpl); ok && len(update.UpdateOptions.DryRun) > 0 {
				continue
			}
			writes = append(writes, action)
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

// echoTemplate is the template of the demo's ServiceGrid (docs/reference.md).
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

// linesOf returns the lines of out that start with prefix.
func linesOf(out, prefix string) []string {
	var lines []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, prefix) {
			lines = append(lines, strings.TrimSuffix(line, "\n"))
		}
	}
	return lines
}
