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
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

var resource = topologyapi.Resource("nodeendpoints")

// Get returns the NodeEndpoints named <node>..<slice> in a namespace.
func (s *Store) Get(namespace, name string) (*topologyapi.NodeEndpoints, error) {
	node, sliceName, err := topology.ParseName(name)
	if err != nil {
		return nil, apierrors.NewNotFound(resource, name)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stream == nil {
		return nil, errNotLoaded
	}
	svc, ok := s.engine.SliceService(types.NamespacedName{Namespace: namespace, Name: sliceName})
	if !ok {
		return nil, apierrors.NewNotFound(resource, name)
	}
	r := s.liveReader()
	for _, view := range r.sliceViews(node, svc) {
		if view.Slice.Name == sliceName {
			obj := r.object(node, view)
			return &obj, nil
		}
	}
	return nil, apierrors.NewNotFound(resource, name)
}

var errNotLoaded = apierrors.NewServiceUnavailable("the node views are not loaded yet: gridview-apiserver is still reading Nodes, Services and EndpointSlices")

// views is what a reader derives views from: the engine, under the store's
// lock, or a snapshot of it, without.
type views interface {
	View(node string, svc types.NamespacedName) (*topology.View, bool)
	Stamp(node string, svc types.NamespacedName) uint64
	Nodes() []string
	Services(namespace string) []types.NamespacedName
}

var (
	_ views = &topology.Engine{}
	_ views = &topology.Snapshot{}
)

// reader renders NodeEndpoints from one state.
type reader struct {
	views       views
	services    map[types.NamespacedName]serviceMeta
	nodeCreated map[string]metav1.Time
	// stateRV is the resourceVersion of the state a snapshot copied, loads
	// how many times the store had been loaded then, copied when.
	stateRV  uint64
	loads    uint64
	copiedAt time.Time
	// atRV, when set, is the resourceVersion of the list the objects are
	// read for: an object's is never later. A list at an earlier
	// resourceVersion whose objects have not changed since reads the
	// current state, whose objects may be stamped later than it.
	atRV uint64
}

// liveReader reads the current state; only while the caller holds the lock.
func (s *Store) liveReader() reader {
	return reader{views: s.engine, services: s.services, nodeCreated: s.nodeCreated}
}

// snapshotReader reads the current state after the caller releases the
// read lock it holds: it copies what the store changes in place, once per
// state, so that the pages of a paged list between two writes share one
// copy: the copy, not the page, would otherwise be most of what a page
// costs (docs/performance.md, "The view store").
func (s *Store) snapshotReader() reader {
	if r := s.snapshot.Load(); r != nil {
		return *r
	}
	// Readers that race here make equal copies; writers wait for them.
	r := &reader{views: s.engine.Snapshot(), services: maps.Clone(s.services), nodeCreated: maps.Clone(s.nodeCreated),
		stateRV: s.stream.RV(), loads: s.paged.loadCount(), copiedAt: time.Now()}
	s.snapshot.Store(r)
	return *r
}

// sliceViews returns what a node routes to of each slice of a Service.
func (r reader) sliceViews(node string, svc types.NamespacedName) []*topology.SliceView {
	view, ok := r.views.View(node, svc)
	if !ok {
		return nil
	}
	return view.SliceViews(svc)
}

func (r reader) object(node string, view *topology.SliceView) topologyapi.NodeEndpoints {
	created := createdOf(r.services, r.nodeCreated, node, view.Service)
	rv := r.views.Stamp(node, view.Service)
	if r.atRV != 0 {
		rv = min(rv, r.atRV)
	}
	return objectOf(node, view, rv, created)
}

// forEach visits the slice views the filter selects, each a node's
// NodeEndpoints (object builds it), in the order lists and continue tokens
// use: by namespace, node, Service, then slice, starting after position
// (nil: from the start). visit returns false to stop, and keeps nothing of
// the view it gets.
func (r reader) forEach(f Filter, after *position, visit func(node string, view *topology.SliceView) bool) {
	nodes, services := f.candidates(r.views.Nodes, r.views.Services(f.Namespace))
	// One slice view at a time, which visit reads and keeps nothing of: a
	// page of a cluster-wide list visits hundreds.
	var current topology.SliceView
	for len(services) > 0 {
		namespace := services[0].Namespace
		end := slices.IndexFunc(services, func(svc types.NamespacedName) bool { return svc.Namespace != namespace })
		if end < 0 {
			end = len(services)
		}
		inNamespace := services[:end]
		services = services[end:]
		if after != nil && namespace < after.Namespace {
			continue
		}
		from := 0
		if after != nil && namespace == after.Namespace {
			from, _ = slices.BinarySearch(nodes, after.Node)
		}
		for _, node := range nodes[from:] {
			nodeServices := inNamespace
			if after != nil && namespace == after.Namespace && node == after.Node {
				// The Services before the position's come before it whole:
				// a page that starts in the middle of a node's views derives
				// none of theirs.
				first, _ := slices.BinarySearchFunc(nodeServices, after.Service, func(svc types.NamespacedName, name string) int {
					return strings.Compare(svc.Name, name)
				})
				nodeServices = nodeServices[first:]
			}
			for _, svc := range nodeServices {
				view, ok := r.views.View(node, svc)
				if !ok {
					continue
				}
				for i := range view.Slices {
					var routed bool
					if current, routed = view.SliceView(svc, i); !routed {
						continue
					}
					if after != nil && !after.before(namespace, node, svc.Name, current.Slice.Name) {
						continue
					}
					if !f.matchesSlice(node, &current) {
						continue
					}
					if !visit(node, &current) {
						return
					}
				}
			}
		}
	}
}
