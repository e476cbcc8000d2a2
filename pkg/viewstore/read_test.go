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

package viewstore

import (
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

func node(name, unit string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"unit": unit}}}
}

func service(namespace, name string, labels, annotations map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels, Annotations: annotations}}
}

func slice(namespace, service string, nodes ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: namespace, Name: service + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for i, n := range nodes {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0." + string(rune('1'+i))}, NodeName: ptr.To(n)})
	}
	return s
}

var anyMatchUnit = map[string]string{topology.AnnotationTopologyKeys: `["unit"]`}

// newTestStore holds three nodes in two units, and three Services in two
// namespaces, each with one slice: demo/echo pruned by unit, demo/plain and
// other/echo not.
func newTestStore(t *testing.T, options Options) *Store {
	t.Helper()
	s := New(options)
	s.Load(
		[]*corev1.Node{node("edge-1", "a"), node("edge-2", "a"), node("edge-3", "b")},
		[]*corev1.Service{
			service("demo", "echo", map[string]string{"app": "echo"}, anyMatchUnit),
			service("demo", "plain", map[string]string{"app": "plain"}, nil),
			service("other", "echo", nil, nil),
		},
		[]*discoveryv1.EndpointSlice{slice("demo", "echo", "edge-1", "edge-3"), slice("demo", "plain", "edge-1", "edge-3"), slice("other", "echo", "edge-2")},
	)
	return s
}

var testOptions = Options{HistorySize: 50, WatcherBuffer: 20, BookmarkInterval: time.Minute}

func names(list *topologyapi.NodeEndpointsList) []string {
	var out []string
	for _, item := range list.Items {
		out = append(out, item.Namespace+"/"+item.Name)
	}
	return out
}

func TestListSelects(t *testing.T) {
	s := newTestStore(t, testOptions)
	for _, tc := range []struct {
		name   string
		filter Filter
		want   []string
	}{
		{name: "one namespace", filter: Filter{Namespace: "other"},
			want: []string{"other/edge-1..echo-x", "other/edge-2..echo-x", "other/edge-3..echo-x"}},
		{name: "nodeName", filter: Filter{Fields: fields.OneTermEqualSelector(FieldNodeName, "edge-2")},
			want: []string{"demo/edge-2..echo-x", "demo/edge-2..plain-x", "other/edge-2..echo-x"}},
		{name: "serviceName in a namespace", filter: Filter{Namespace: "demo", Fields: fields.OneTermEqualSelector(FieldServiceName, "echo")},
			want: []string{"demo/edge-1..echo-x", "demo/edge-2..echo-x", "demo/edge-3..echo-x"}},
		{name: "metadata.name", filter: Filter{Fields: fields.OneTermEqualSelector("metadata.name", "edge-3..plain-x")},
			want: []string{"demo/edge-3..plain-x"}},
		{name: "metadata.namespace", filter: Filter{Fields: fields.ParseSelectorOrDie("metadata.namespace=other,nodeName=edge-1")},
			want: []string{"other/edge-1..echo-x"}},
		{name: "not equal", filter: Filter{Namespace: "demo", Fields: fields.ParseSelectorOrDie("nodeName!=edge-1,nodeName!=edge-2")},
			want: []string{"demo/edge-3..echo-x", "demo/edge-3..plain-x"}},
		{name: "labels of the Service", filter: Filter{Labels: labels.SelectorFromSet(labels.Set{"app": "plain"})},
			want: []string{"demo/edge-1..plain-x", "demo/edge-2..plain-x", "demo/edge-3..plain-x"}},
		{name: "unknown node", filter: Filter{Fields: fields.OneTermEqualSelector(FieldNodeName, "edge-9")}},
		{name: "a name that is not <node>..<endpointslice>", filter: Filter{Fields: fields.OneTermEqualSelector("metadata.name", "edge-1.echo-x")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := s.List(tc.filter, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(list); !slices.Equal(got, tc.want) {
				t.Errorf("list = %v, want %v", got, tc.want)
			}
			if list.ResourceVersion == "" {
				t.Error("the list has no resourceVersion")
			}
		})
	}
}

func TestGetServesThePrunedView(t *testing.T) {
	s := newTestStore(t, testOptions)
	got, err := s.Get("demo", "edge-2..echo-x")
	if err != nil {
		t.Fatal(err)
	}
	if got.NodeName != "edge-2" || got.ServiceName != "echo" || got.Topology.MatchedKey != "unit" || got.Labels["app"] != "echo" ||
		got.Slice.Name != "echo-x" || len(got.Slice.Endpoints) != 1 || *got.Slice.Endpoints[0].NodeName != "edge-1" {
		t.Errorf("edge-2's view of echo = %+v, want only edge-1's endpoint", got)
	}
	for _, name := range []string{"edge-9..echo-x", "edge-1..nothing", "nodot", "edge-1.echo-x", "edge-1...echo-x", "edge-1..other-x"} {
		if _, err := s.Get("demo", name); !apierrors.IsNotFound(err) {
			t.Errorf("get %s: %v, want NotFound", name, err)
		}
	}
}

func fmtRV(rv uint64) string { return strconv.FormatUint(rv, 10) }
