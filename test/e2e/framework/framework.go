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

// Package framework holds what the end-to-end suites (test/e2e and
// test/e2e/ha) do alike against a running cluster.
package framework

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/test/localcluster"
)

// Namespace creates a namespace with a generated name for one test and
// deletes it afterwards.
func Namespace(t testing.TB, client kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a test namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// Site is a namespace of one test's own and the Nodes it creates, named
// after it: node "a1" is the Node <ns>-a1, and label values are prefixed the
// same way (Unit), so that tests running at once never share a Node or a
// unit.
type Site struct {
	NS string
}

// Node is the name of the site's node name.
func (s Site) Node(name string) string { return s.NS + "-" + name }

// Unit is the label value a site's node carries for the value name.
func (s Site) Unit(name string) string { return s.NS + "-" + name }

// CreateNodes creates the site's Nodes, by name with their labels, each
// value prefixed (Unit), deleted when the test ends; it returns the labels
// as created. Objects on the Nodes (Pods) must be deleted first: register
// their cleanup after this call.
func (s Site) CreateNodes(t testing.TB, client kubernetes.Interface, nodes map[string]map[string]string) map[string]map[string]string {
	t.Helper()
	created := map[string]map[string]string{}
	for name, labels := range nodes {
		created[name] = map[string]string{}
		for key, value := range labels {
			created[name][key] = s.Unit(value)
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Node(name), Labels: created[name]}}
		if _, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
		})
	}
	return created
}

// SiteNodes are the nodes of the suites' small site, by name with their
// labels: a1 and a2 in unit a, b1 in unit b. A new map each call: tests
// relabel their copy.
func SiteNodes() map[string]map[string]string {
	return map[string]map[string]string{"a1": {UnitKey: "a"}, "a2": {UnitKey: "a"}, "b1": {UnitKey: "b"}}
}

// NewServiceGrid is a ServiceGrid of port 80 on the unit label, selecting
// app=<name>.
func NewServiceGrid(name string) *topologyv1alpha1.ServiceGrid {
	return &topologyv1alpha1.ServiceGrid{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: topologyv1alpha1.ServiceGridSpec{
			GridUniqKey: UnitKey,
			Template: corev1.ServiceSpec{
				Selector: map[string]string{"app": name},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
			},
		},
	}
}

// UnitKey is the label of a node's grid unit, SuperEdge's.
const UnitKey = "superedge.io/nodeunit"

// WaitServiceGridReady waits until the ServiceGrid's status says its Service
// <name>-svc matches its current generation, and returns it.
func WaitServiceGridReady(t testing.TB, client versioned.Interface, ns, name string, timeout time.Duration) *topologyv1alpha1.ServiceGrid {
	t.Helper()
	var sg *topologyv1alpha1.ServiceGrid
	localcluster.Eventually(t, timeout, "ServiceGrid "+name+" Ready", func(ctx context.Context) error {
		var err error
		if sg, err = client.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(sg.Status.Conditions, "Ready")
		if sg.Status.ServiceName != name+"-svc" || sg.Status.ObservedGeneration != sg.Generation || cond == nil ||
			cond.Status != metav1.ConditionTrue || cond.Reason != "ServiceSynced" {
			return fmt.Errorf("status %+v", sg.Status)
		}
		return nil
	})
	return sg
}

// Gone turns a Get's error into a wait's condition: nil once the object is
// gone, an error while it is there or cannot be read.
func Gone(err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err == nil:
		return errors.New("still there")
	}
	return err
}

// SliceName is the name of the one EndpointSlice WriteEndpointSlice writes
// for a Service.
func SliceName(service string) string { return service + "-x" }

// WriteEndpointSlice creates or replaces the one EndpointSlice of a Service
// in ns, SliceName(service), with ready endpoints by address on nodes, for
// a Service without a selector: a shape or an address no Pod would give.
func WriteEndpointSlice(t testing.TB, client kubernetes.Interface, ns, service string, endpoints map[string]string) {
	t.Helper()
	WriteNamedEndpointSlice(t, client, ns, service, SliceName(service), endpoints)
}

// WriteNamedEndpointSlice creates or replaces the EndpointSlice name of a
// Service in ns, with ready endpoints by address on nodes.
func WriteNamedEndpointSlice(t testing.TB, client kubernetes.Interface, ns, service, name string, endpoints map[string]string) {
	t.Helper()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
	}
	for _, address := range slices.Sorted(maps.Keys(endpoints)) {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{address}, NodeName: ptr.To(endpoints[address]),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}
	ctx := context.Background()
	slices := client.DiscoveryV1().EndpointSlices(ns)
	_, err := slices.Create(ctx, slice, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var current *discoveryv1.EndpointSlice
		if current, err = slices.Get(ctx, slice.Name, metav1.GetOptions{}); err == nil {
			slice.ResourceVersion = current.ResourceVersion
			_, err = slices.Update(ctx, slice, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		t.Fatalf("writing the EndpointSlice %s of %s/%s: %v", name, ns, service, err)
	}
}

// Addresses lists the endpoint addresses of views, sorted: what a node
// routes to of a Service is the union of its NodeEndpoints of the Service's
// slices.
func Addresses(views ...*topologyv1alpha1.NodeEndpoints) []string {
	var out []string
	for _, view := range views {
		for _, ep := range view.Slice.Endpoints {
			out = append(out, ep.Addresses...)
		}
	}
	slices.Sort(out)
	return out
}

// ServiceViews lists a node's NodeEndpoints of a Service, one per slice it
// routes to, with the field selectors a wrapper would use.
func ServiceViews(ctx context.Context, client versioned.Interface, ns, node, service string) ([]topologyv1alpha1.NodeEndpoints, error) {
	list, err := client.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"nodeName": node, "serviceName": service}.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s's views of %s/%s: %w", node, ns, service, err)
	}
	return list.Items, nil
}

// ServiceAddresses lists the addresses a node routes to of a Service, sorted;
// none when the node has no view of it.
func ServiceAddresses(ctx context.Context, client versioned.Interface, ns, node, service string) ([]string, error) {
	views, err := ServiceViews(ctx, client, ns, node, service)
	if err != nil {
		return nil, err
	}
	return Addresses(Pointers(views)...), nil
}

// Pointers points at each item of a list, for Addresses.
func Pointers(items []topologyv1alpha1.NodeEndpoints) []*topologyv1alpha1.NodeEndpoints {
	out := make([]*topologyv1alpha1.NodeEndpoints, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
