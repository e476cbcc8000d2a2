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
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// event describes a change for watchers; a view that went is sent with its
// last content and the new resourceVersion.
func (s *Store) event(c topology.Change) *event {
	e := &event{rv: s.rv, key: c.Key, existed: c.Old != nil, exists: c.New != nil}
	view := c.New
	if view == nil {
		view = c.Old
	}
	if c.Old != nil {
		e.oldLabels = c.Old.Labels
	}
	e.object = s.object(c.Key, view, s.rv)
	return e
}

// object renders a view as a NodeEndpoints. Views are shared: the object
// shares their content and must not be modified.
func (s *Store) object(key topology.ViewKey, view *topology.View, rv uint64) *topologyapi.NodeEndpoints {
	created := s.services[key.Service].created
	if nodeCreated := s.nodeCreated[key.Node]; created.Before(&nodeCreated) {
		created = nodeCreated
	}
	return &topologyapi.NodeEndpoints{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         key.Service.Namespace,
			Name:              topology.Name(key.Node, key.Service.Name),
			ResourceVersion:   strconv.FormatUint(rv, 10),
			Labels:            view.Labels,
			CreationTimestamp: created,
		},
		NodeName:    key.Node,
		ServiceName: key.Service.Name,
		Topology:    view.Topology,
		Slices:      view.Slices,
	}
}

// viewRV is the resourceVersion of a view that exists.
func (s *Store) viewRV(key topology.ViewKey) uint64 {
	if rv, ok := s.viewRVs[key]; ok {
		return rv
	}
	return s.loadRV
}
