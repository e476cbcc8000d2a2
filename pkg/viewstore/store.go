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

// Package viewstore serves the views of the topology engine as a Kubernetes
// resource: it numbers every change of a view with a resourceVersion, keeps a
// bounded history of them, and streams them to watchers.
package viewstore

import (
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	topologyapi "github.com/gridview/gridview/apis/topology"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// Options bound the memory a store uses for watchers.
type Options struct {
	// HistorySize is how many view changes a watch can resume from.
	HistorySize int
	// WatcherBuffer is how many events a watcher may lag behind before it is
	// cut off.
	WatcherBuffer int
	// BookmarkInterval is how often watchers that asked get a bookmark.
	BookmarkInterval time.Duration
}

// DefaultOptions holds a node move in a 10,000-node cluster in the history
// and in the buffer of the moved node's watcher.
var DefaultOptions = Options{HistorySize: 100_000, WatcherBuffer: 10_000, BookmarkInterval: 30 * time.Second}

// serviceMeta is what a view's object takes from its Service besides the view.
type serviceMeta struct {
	labels    map[string]string
	created   metav1.Time
	malformed string
}

// Store holds the engine and the resourceVersions of its views. It is safe
// for concurrent use.
type Store struct {
	options Options

	mu     sync.RWMutex
	engine *topology.Engine
	// stream numbers the changes of views and serves watches; nil until the
	// store is loaded.
	stream *watchstream.Stream
	// loadRV is the resourceVersion of every view that has not changed since
	// the store was loaded; viewRVs holds the others'.
	loadRV      uint64
	viewRVs     map[topology.ViewKey]uint64
	nodeCreated map[string]metav1.Time
	services    map[types.NamespacedName]serviceMeta
	closed      bool
}

// New returns an empty store that serves nothing until it is loaded.
func New(options Options) *Store {
	return &Store{
		options:     options,
		engine:      topology.NewEngine(),
		viewRVs:     map[topology.ViewKey]uint64{},
		nodeCreated: map[string]metav1.Time{},
		services:    map[types.NamespacedName]serviceMeta{},
	}
}

// Load sets the initial state in bulk.
func (s *Store) Load(nodes []*corev1.Node, services []*corev1.Service, slices []*discoveryv1.EndpointSlice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.engine.Load(nodes, services, slices)
	for _, node := range nodes {
		s.nodeCreated[node.Name] = node.CreationTimestamp
	}
	for _, svc := range services {
		s.recordService(svc)
	}
	s.loadRV = watchstream.InitialRV()
	s.stream = watchstream.New(s.loadRV, watchstream.Options{
		HistorySize:   s.options.HistorySize,
		WatcherBuffer: s.options.WatcherBuffer,
		ShardOf:       func(obj runtime.Object) string { return obj.(*topologyapi.NodeEndpoints).NodeName },
		Bookmark:      bookmark,
		Copy:          shallowCopy,
		Metrics:       watchstream.Metrics{EventsSent: eventsSent, Watchers: watchersCurrent, CutOff: watchersCutOff},
	})
	updateMalformedGauge(s.services)
}

// Loaded says whether the store holds the initial state.
func (s *Store) Loaded() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stream != nil
}

// SetNode adds or updates a node.
func (s *Store) SetNode(node *corev1.Node) {
	s.apply(func() []topology.Change {
		s.nodeCreated[node.Name] = node.CreationTimestamp
		return s.engine.SetNode(node.Name, node.Labels)
	})
}

// DeleteNode removes a node and its views.
func (s *Store) DeleteNode(name string) {
	s.apply(func() []topology.Change { return s.engine.DeleteNode(name) },
		func() { delete(s.nodeCreated, name) })
}

// SetService adds or updates a Service. It returns why its topology
// annotation cannot be parsed when that is news: the caller reports it.
func (s *Store) SetService(svc *corev1.Service) (newlyMalformed string) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	s.apply(func() []topology.Change {
		before := s.services[key].malformed
		changes := s.engine.SetService(svc)
		s.recordService(svc)
		if after := s.services[key].malformed; after != before {
			newlyMalformed = after
			updateMalformedGauge(s.services)
		}
		return changes
	})
	return newlyMalformed
}

func (s *Store) recordService(svc *corev1.Service) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	meta := serviceMeta{labels: maps.Clone(svc.Labels), created: svc.CreationTimestamp}
	if err := s.engine.Malformed(key); err != nil {
		meta.malformed = err.Error()
	}
	s.services[key] = meta
}

// malformed returns why a Service's topology annotation cannot be parsed, or "".
func (s *Store) malformed(svc *corev1.Service) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.services[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}].malformed
}

// DeleteService removes a Service and its views.
func (s *Store) DeleteService(key types.NamespacedName) {
	s.apply(func() []topology.Change { return s.engine.DeleteService(key) },
		func() {
			delete(s.services, key)
			updateMalformedGauge(s.services)
		})
}

// SetEndpointSlice adds or updates an EndpointSlice.
func (s *Store) SetEndpointSlice(slice *discoveryv1.EndpointSlice) {
	s.apply(func() []topology.Change { return s.engine.SetEndpointSlice(slice) })
}

// DeleteEndpointSlice removes an EndpointSlice.
func (s *Store) DeleteEndpointSlice(key types.NamespacedName) {
	s.apply(func() []topology.Change { return s.engine.DeleteEndpointSlice(key) })
}

// apply runs one change of the engine and publishes the views it changed,
// each with a resourceVersion of its own so that a watch can resume between
// any two of them. forget drops what the objects of views that went needed.
func (s *Store) apply(change func() []topology.Change, forget ...func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	changes := change()
	recomputeSeconds.Observe(time.Since(start).Seconds())
	viewsChanged.Add(float64(len(changes)))
	for _, c := range changes {
		e := s.event(c)
		if c.New == nil {
			delete(s.viewRVs, c.Key)
		} else {
			s.viewRVs[c.Key] = e.RV
		}
		s.stream.Publish(e)
	}
	for _, f := range forget {
		f()
	}
}
