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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// Field labels of NodeEndpoints that selectors may use.
const (
	FieldNodeName    = "nodeName"
	FieldServiceName = "serviceName"
	fieldName        = "metadata.name"
	fieldNamespace   = "metadata.namespace"
)

// Filter selects views: by namespace (empty: all), by fields and by the
// labels of their Service.
type Filter struct {
	Namespace string
	Fields    fields.Selector
	Labels    labels.Selector
}

var _ watchstream.Filter = Filter{}

// Matches says whether the filter selects a NodeEndpoints.
func (f Filter) Matches(obj runtime.Object) bool {
	if p, ok := obj.(*pending); ok {
		return f.matchesSlice(p.node, p.view)
	}
	view := obj.(*topologyapi.NodeEndpoints)
	return f.matches(view.NodeName, view.Namespace, view.ServiceName, view.Slice.Name, view.Labels)
}

// matchesSlice says whether the filter selects a node's NodeEndpoints of a
// slice.
func (f Filter) matchesSlice(node string, view *topology.SliceView) bool {
	return f.matches(node, view.Service.Namespace, view.Service.Name, view.Slice.Name, view.Labels)
}

// Shard is the node whose views the filter selects, if it names one:
// watchers are indexed by it.
func (f Filter) Shard() (string, bool) { return f.node() }

// node is the one node the filter selects, if it names one: by nodeName,
// or by the name of one NodeEndpoints.
func (f Filter) node() (string, bool) {
	if f.Fields == nil {
		return "", false
	}
	if node, ok := f.Fields.RequiresExactMatch(FieldNodeName); ok {
		return node, true
	}
	if name, ok := f.Fields.RequiresExactMatch(fieldName); ok {
		if node, _, err := topology.ParseName(name); err == nil {
			return node, true
		}
	}
	return "", false
}

// service is the one Service the filter selects, if it names one.
func (f Filter) service() (string, bool) {
	if f.Fields == nil {
		return "", false
	}
	return f.Fields.RequiresExactMatch(FieldServiceName)
}

// matches says whether the filter selects the NodeEndpoints of a node and a
// slice of a Service with serviceLabels.
func (f Filter) matches(node, namespace, service, slice string, serviceLabels map[string]string) bool {
	if f.Namespace != "" && namespace != f.Namespace {
		return false
	}
	if f.Labels != nil && !f.Labels.Empty() && !f.Labels.Matches(labels.Set(serviceLabels)) {
		return false
	}
	if f.Fields == nil || f.Fields.Empty() {
		return true
	}
	return f.Fields.Matches(objectFields{node: node, namespace: namespace, service: service, slice: slice})
}

// objectFields are the fields of a NodeEndpoints selectors may use, read
// without building a map for every object and watcher.
type objectFields struct {
	node, namespace, service, slice string
}

var _ fields.Fields = objectFields{}

func (o objectFields) Has(field string) bool {
	switch field {
	case FieldNodeName, FieldServiceName, fieldName, fieldNamespace:
		return true
	}
	return false
}

func (o objectFields) Get(field string) string {
	switch field {
	case FieldNodeName:
		return o.node
	case FieldServiceName:
		return o.service
	case fieldName:
		return topology.Name(o.node, o.slice)
	case fieldNamespace:
		return o.namespace
	}
	return ""
}

// candidates narrows the views to visit with the exact matches the filter
// requires; the caller still checks each with matches. Every node, sorted,
// is asked of allNodes only when the filter names none: a node's watch or
// list is the common case, and should not sort a whole cluster's nodes.
func (f Filter) candidates(allNodes func() []string, services []types.NamespacedName) ([]string, []types.NamespacedName) {
	var nodes []string
	if node, ok := f.node(); ok {
		nodes = []string{node}
	}
	if f.Fields != nil {
		if name, ok := f.Fields.RequiresExactMatch(fieldName); ok {
			node, _, err := topology.ParseName(name)
			if err != nil {
				return nil, nil
			}
			nodes = []string{node}
		}
	}
	if service, ok := f.service(); ok {
		services = keepService(services, service)
	}
	if nodes == nil {
		nodes = allNodes()
	}
	return nodes, services
}

func keepService(services []types.NamespacedName, name string) []types.NamespacedName {
	var out []types.NamespacedName
	for _, svc := range services {
		if svc.Name == name {
			out = append(out, svc)
		}
	}
	return out
}
