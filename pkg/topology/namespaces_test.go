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

package topology_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

// live follows an engine's changes into NodeEndpoints and checks them
// against the oracle after each.
type live struct {
	engine *topology.Engine
	model  *topologytest.Oracle
	state  map[topologytest.SliceKey]*topology.SliceView
}

func newLive(e *topology.Engine, o *topologytest.Oracle) *live {
	return &live{engine: e, model: o, state: o.AllSliceViews()}
}

// check applies changes and compares the NodeEndpoints with the oracle's; it
// returns the Services the changes touched.
func (l *live) check(t *testing.T, what string, changes []topology.SliceChange) []types.NamespacedName {
	t.Helper()
	if err := applyChanges(l.state, changes, l.engine.Nodes()); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if want := l.model.AllSliceViews(); !apiequality.Semantic.DeepEqual(l.state, want) {
		t.Fatalf("%s: NodeEndpoints after the changes\n got %v\nwant %v", what, describe(l.state), describe(want))
	}
	var touched []types.NamespacedName
	for _, key := range changedKeys(changes, l.engine.Nodes()) {
		if !slices.Contains(touched, key.Service) {
			touched = append(touched, key.Service)
		}
	}
	return touched
}

func TestNamespaceDefaultChangesLive(t *testing.T) {
	spread := []discoveryv1.Endpoint{endpoint("n1", "edge-1", true), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true)}
	e, o := ruleCluster(map[string]string{topology.AnnotationGridviewKeys: "unit,*"}, withAnnotations(nil), spread...)
	// A second Service, with a rule of its own.
	own := types.NamespacedName{Namespace: "demo", Name: "own"}
	svc := withTrafficDistribution("PreferSameZone", nil)
	svc.Namespace, svc.Name = own.Namespace, own.Name
	o.Services[own] = svc
	e.SetService(svc)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "own-1", Labels: map[string]string{discoveryv1.LabelServiceName: "own"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: spread,
	}
	o.Slices[types.NamespacedName{Namespace: "demo", Name: "own-1"}] = slice
	e.SetEndpointSlice(slice)
	l := newLive(e, o)

	steps := []struct {
		name        string
		annotations map[string]string
		wantTouched []types.NamespacedName
		wantError   bool
	}{
		{name: "another default", annotations: map[string]string{topology.AnnotationGridviewKeys: "topology.kubernetes.io/zone,*"}, wantTouched: []types.NamespacedName{echo}},
		{name: "another annotation", annotations: map[string]string{topology.AnnotationGridviewKeys: "topology.kubernetes.io/zone,*", "other": "x"}},
		{name: "malformed", annotations: map[string]string{topology.AnnotationGridviewKeys: "*,unit"}, wantTouched: []types.NamespacedName{echo}, wantError: true},
		{name: "a default again", annotations: map[string]string{topology.AnnotationGridviewKeys: "kubernetes.io/hostname"}, wantTouched: []types.NamespacedName{echo}},
		{name: "removed", wantTouched: []types.NamespacedName{echo}},
		{name: "still none"},
	}
	for _, step := range steps {
		o.Namespaces["demo"] = step.annotations
		touched := l.check(t, step.name, e.SetNamespace("demo", step.annotations))
		if !slices.Equal(touched, step.wantTouched) {
			t.Errorf("%s: the changes touched %v, want %v", step.name, touched, step.wantTouched)
		}
		if err := e.NamespaceMalformed("demo"); (err != nil) != step.wantError {
			t.Errorf("%s: NamespaceMalformed = %v", step.name, err)
		}
	}

	// A Service that drops its own rule follows the default at once, and
	// one that takes a rule stops following it.
	o.Namespaces["demo"] = map[string]string{topology.AnnotationGridviewKeys: "unit"}
	l.check(t, "set the default", e.SetNamespace("demo", o.Namespaces["demo"]))
	o.Services[own] = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "own"}}
	l.check(t, "drop the rule", e.SetService(o.Services[own]))
	o.Services[echo] = withAnnotations(map[string]string{corev1.AnnotationTopologyMode: "Auto"})
	o.Services[echo].Namespace, o.Services[echo].Name = echo.Namespace, echo.Name
	l.check(t, "take a rule", e.SetService(o.Services[echo]))
	o.Namespaces["demo"] = map[string]string{topology.AnnotationGridviewKeys: "topology.kubernetes.io/zone"}
	if touched := l.check(t, "change the default", e.SetNamespace("demo", o.Namespaces["demo"])); !slices.Equal(touched, []types.NamespacedName{own}) {
		t.Errorf("the default's change touched %v, want only %v", touched, own)
	}
	delete(o.Namespaces, "demo")
	l.check(t, "delete the namespace", e.DeleteNamespace("demo"))
}

// With min-ready, a node whose unit holds a ready endpoint may still choose
// "*": the changes of any endpoint reach it, though every node is in a unit
// and its unit has one. The hostname key keeps the nodes from sharing views
// by group, so that the engine looks for such nodes unit by unit.
func TestMinReadyChangesReachNodesShortOfReadyEndpoints(t *testing.T) {
	svc := withAnnotations(map[string]string{topology.AnnotationGridviewKeys: "kubernetes.io/hostname,unit,*", topology.AnnotationMinReady: "2"})
	e, o := ruleCluster(nil, svc, endpoint("n1", "edge-1", true), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true))
	o.Nodes["edge-5"] = map[string]string{"unit": "c"}
	l := newLive(e, o)
	l.check(t, "edge-5 joins unit c", e.SetNode("edge-5", o.Nodes["edge-5"]))

	for _, step := range []struct {
		name      string
		endpoints []discoveryv1.Endpoint
	}{
		{name: "a second ready endpoint in unit c", endpoints: []discoveryv1.Endpoint{endpoint("n1", "edge-1", true), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true), endpoint("n5", "edge-5", true)}},
		{name: "a ready endpoint in unit b", endpoints: []discoveryv1.Endpoint{endpoint("n1", "edge-1", true), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true), endpoint("n5", "edge-5", true), endpoint("n3b", "edge-3", true)}},
		{name: "unit a's endpoint is no longer ready", endpoints: []discoveryv1.Endpoint{endpoint("n1", "edge-1", false), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true), endpoint("n5", "edge-5", true), endpoint("n3b", "edge-3", true)}},
		{name: "unit c falls short", endpoints: []discoveryv1.Endpoint{endpoint("n1", "edge-1", false), endpoint("n3", "edge-3", true), endpoint("n4", "edge-4", true), endpoint("n3b", "edge-3", true)}},
	} {
		slice := o.Slices[echoSlice].DeepCopy()
		slice.Endpoints = step.endpoints
		o.Slices[echoSlice] = slice
		l.check(t, step.name, e.SetEndpointSlice(slice))
	}
}
