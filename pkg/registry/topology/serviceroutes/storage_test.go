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

package serviceroutes

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/gridview/gridview/apis/topology"
	topologyengine "github.com/gridview/gridview/pkg/topology"
)

// fakeRouter routes every Service of its list alike, but gone, which went
// after it was listed.
type fakeRouter struct {
	services []types.NamespacedName
	gone     string
}

func (f fakeRouter) RoutedServices() []types.NamespacedName { return f.services }

func (f fakeRouter) RouteCounts(svc types.NamespacedName) (topologyengine.RouteCounts, error) {
	if svc.Name == f.gone {
		return topologyengine.RouteCounts{}, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, svc.Name)
	}
	return topologyengine.RouteCounts{Rule: topologyengine.RuleSuperEdge, Mode: topology.TopologyModeAnyMatch, Keys: []string{"unit", "*"},
		Nodes: 6, Ready: 4, Total: 5, Local: 3, Fallback: []int{2}, None: 1}, nil
}

func (f fakeRouter) Routes(svc types.NamespacedName) (topologyengine.Routes, error) {
	if svc.Name == f.gone {
		return topologyengine.Routes{}, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, svc.Name)
	}
	return topologyengine.Routes{
		Rule: topologyengine.RuleSuperEdge, Mode: topology.TopologyModeAnyMatch, Keys: []string{"unit", "*"}, Nodes: 6, Ready: 4, Total: 5,
		Groups: []topologyengine.RouteGroup{
			{Labels: map[string]string{"unit": "u1"}, Nodes: 3, Position: topologyengine.PositionLocal, ChosenKey: "unit", ChosenValue: "u1", Ready: 2},
			{Labels: map[string]string{"unit": "u2"}, Nodes: 2, Position: topologyengine.FallbackPosition(1), ChosenKey: "*", Ready: 4},
			{Nodes: 1, Position: topologyengine.PositionNone},
		},
	}, nil
}

func TestList(t *testing.T) {
	router := fakeRouter{gone: "went", services: []types.NamespacedName{
		{Namespace: "a", Name: "web"}, {Namespace: "a", Name: "went"}, {Namespace: "b", Name: "db"}, {Namespace: "b", Name: "web"},
	}}
	cases := []struct {
		name, namespace string
		opts            *metainternalversion.ListOptions
		want            string
	}{
		{name: "every namespace", want: "[a/web b/db b/web]"},
		{name: "one namespace", namespace: "b", want: "[b/db b/web]"},
		{name: "by name", opts: &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "web")}, want: "[a/web b/web]"},
		{name: "nil options", namespace: "a", want: "[a/web]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := genericapirequest.WithNamespace(context.Background(), tc.namespace)
			obj, err := NewStorage(router).(*storage).List(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, item := range obj.(*topology.ServiceRoutesList).Items {
				got = append(got, item.Namespace+"/"+item.Name)
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("listed %v, want %s", got, tc.want)
			}
		})
	}
	t.Run("items count nodes per route, with the get's row", func(t *testing.T) {
		ctx := genericapirequest.WithNamespace(context.Background(), "a")
		storage := NewStorage(router).(*storage)
		list, err := storage.List(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		item := list.(*topology.ServiceRoutesList).Items[0]
		if got := fmt.Sprint(item.Groups); got != "[{map[] 3 [] local   0} {map[] 2 [] fallback-1   0} {map[] 1 [] none   0}]" {
			t.Errorf("groups %s, want one per route", got)
		}
		listed, err := storage.ConvertToTable(ctx, list, nil)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := storage.Get(ctx, "web", &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := storage.ConvertToTable(ctx, obj, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(listed.Rows[0].Cells[:8]) != fmt.Sprint(got.Rows[0].Cells[:8]) {
			t.Errorf("listed row %v, got row %v", listed.Rows[0].Cells, got.Rows[0].Cells)
		}
	})
	t.Run("a client that gave up stops the list", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := NewStorage(router).(*storage).List(ctx, nil); !apierrors.IsTimeout(err) {
			t.Errorf("got %v, want a timeout", err)
		}
	})
	t.Run("a label selector is refused, not ignored", func(t *testing.T) {
		_, err := NewStorage(router).(*storage).List(context.Background(), &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})})
		if !apierrors.IsBadRequest(err) {
			t.Errorf("got %v, want 400", err)
		}
	})
}

func TestTable(t *testing.T) {
	ctx := genericapirequest.WithNamespace(context.Background(), "a")
	storage := NewStorage(fakeRouter{}).(*storage)
	obj, err := storage.Get(ctx, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	table, err := storage.ConvertToTable(ctx, obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	// NAME, RULE, NODES, LOCAL, FALLBACK, ALL, NONE, ENDPOINTS, GROUPS.
	want := "[web SuperEdge(unit,*) 6 3 2 0 1 4/5 3]"
	if got := fmt.Sprint(table.Rows[0].Cells); got != want {
		t.Errorf("row %s, want %s", got, want)
	}
}
