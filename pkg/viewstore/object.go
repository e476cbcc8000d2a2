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
	"k8s.io/apimachinery/pkg/runtime"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// event describes a change for watchers; a view that went is sent with its
// last content and the change's resourceVersion.
func (s *Store) event(c topology.Change) *watchstream.Event {
	e := &watchstream.Event{RV: s.stream.Next(), Gone: c.New == nil}
	view := c.New
	if c.Old != nil {
		e.Old = s.object(c.Key, c.Old, s.viewRV(c.Key))
		if view == nil {
			view = c.Old
		}
	}
	e.Object = s.object(c.Key, view, e.RV)
	return e
}

// bookmark carries a resourceVersion; initialEventsEnd marks the end of a
// streaming list's initial events.
func bookmark(_ watchstream.Filter, rv uint64, initialEventsEnd bool) runtime.Object {
	object := &topologyapi.NodeEndpoints{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(rv, 10)}}
	if initialEventsEnd {
		object.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return object
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

// shallowCopy gives a watcher its own NodeEndpoints to encode; the content
// stays shared, as encoding only writes the type meta.
func shallowCopy(obj runtime.Object) runtime.Object {
	view := *obj.(*topologyapi.NodeEndpoints)
	return &view
}
