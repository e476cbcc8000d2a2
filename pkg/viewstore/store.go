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
// resource: it numbers every change with a resourceVersion, keeps a bounded
// history of them, and streams them to watchers. A change is kept once,
// with the nodes it is for, and each watcher gets its node's copy when it
// is sent, so that nothing grows with nodes × Services.
package viewstore

import (
	"sync"
	"sync/atomic"
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
	// HistorySize is how many changes a watch can resume from.
	HistorySize int
	// HistoryWeight bounds what those changes hold in all, in units of
	// about 16 bytes (see entry.go).
	HistoryWeight int
	// WatcherBuffer is how many events a watcher may lag behind before it is
	// cut off.
	WatcherBuffer int
	// StallTimeout is how long a watcher's client may take no event while
	// one waits for it before the watcher is cut off.
	StallTimeout time.Duration
	// BookmarkInterval is how often watchers that asked get a bookmark.
	BookmarkInterval time.Duration
}

// DefaultOptions keep the last 100,000 changes in at most about 64 MiB,
// weighed by what each change holds: enough for a resume after a thousand
// ordinary changes, and for a node's watcher to lag a node move in a
// 10,000-Service cluster behind, without the history growing with the fleet
// (what changes weigh at edge-10k: docs/performance.md, "The view store"). A client that takes nothing for 15 s has stopped reading:
// a slow WAN link still takes an event now and then, and a client cut off
// resumes from its last resourceVersion.
var DefaultOptions = Options{HistorySize: 100_000, HistoryWeight: 4 << 20, WatcherBuffer: 10_000, StallTimeout: 15 * time.Second, BookmarkInterval: 30 * time.Second}

// serviceMeta is what a view's object takes from its Service besides the view.
type serviceMeta struct {
	created   metav1.Time
	malformed string
}

// Store holds the engine and numbers its changes. It is safe for concurrent
// use.
type Store struct {
	options Options

	mu     sync.RWMutex
	engine *topology.Engine
	// stream numbers the changes and serves watches; nil until the store is
	// loaded.
	stream *watchstream.Stream
	// nodeAdded holds when each known node appeared: a change for every node
	// is for those known then.
	nodeAdded map[string]uint64
	// departed holds when nodes went, while the history reaches back
	// there: a watch resumed from before cannot tell what a node that went
	// (and may have come back) had, so it is answered 410.
	departed    map[string]uint64
	nodeCreated map[string]metav1.Time
	services    map[types.NamespacedName]serviceMeta
	// malformedNamespaces holds why the default of each Namespace whose
	// default is malformed cannot be parsed.
	malformedNamespaces map[string]string
	closed              bool
	// loadedAt is when Load set the stream.
	loadedAt time.Time
	// ownViewsWaited is when the last wait of a moved node's own views for
	// the others' ended, of those that slept.
	ownViewsWaited time.Time
	// revision is the revision of the log whose inputs the store applies.
	revision int64
	// log is the log the feed reads.
	log atomic.Pointer[Log]
	// snapshot is the state copied for readers that read without the lock,
	// shared until the next write, which sets it to nil.
	snapshot atomic.Pointer[reader]
	// paged keeps the states paged lists read on from.
	paged pagedStates
}

// New returns an empty store that serves nothing until it is loaded.
func New(options Options) *Store {
	s := &Store{options: options, engine: topology.NewEngine()}
	s.resetMaps()
	return s
}

func (s *Store) resetMaps() {
	s.nodeAdded = map[string]uint64{}
	s.departed = map[string]uint64{}
	s.nodeCreated = map[string]metav1.Time{}
	s.services = map[types.NamespacedName]serviceMeta{}
	s.malformedNamespaces = map[string]string{}
}

// A view change's resourceVersion names the input that caused it: the etcd
// revision that wrote the input to gridview's log, and the change's place
// among the events of that revision (a revision may write several inputs,
// each changing several slices), below the generation of the engine, which
// is raised whenever the views derived from the same inputs change. Every
// replica applies the same inputs in the same order, so it numbers every
// change alike, across restarts and leader changes, with nothing sent
// between replicas. A client that resumes on another engine generation than
// the one its resourceVersion names gets 410 and lists once; while replicas
// of several generations run, one serves (inputlog.Engines), so that a
// client crosses once.
const (
	eventBits = 22
	eventMask = 1<<eventBits - 1
	// revisionBits name 2^35 etcd revisions: at a hundred revisions a
	// second, ten years of writes.
	revisionBits = 35
	// releasedGeneration is raised with every change to what the engine
	// derives from the same inputs; EngineGeneration is this build's.
	releasedGeneration = 1
)

// revisionStart and revisionEnd bound the resourceVersions of a revision's
// changes; the store is at revisionEnd once it applied all of them.
func revisionStart(revision int64) uint64 {
	return EngineGeneration<<(eventBits+revisionBits) | uint64(revision)<<eventBits
}

func revisionEnd(revision int64) uint64 { return revisionStart(revision) | eventMask }

// Inputs are the objects the views derive from.
type Inputs struct {
	Namespaces []*corev1.Namespace
	Nodes      []*corev1.Node
	Services   []*corev1.Service
	Slices     []*discoveryv1.EndpointSlice
}

// Load sets the initial state in bulk, as the log held it at revision 1.
func (s *Store) Load(nodes []*corev1.Node, services []*corev1.Service, slices []*discoveryv1.EndpointSlice) {
	s.load(1, Inputs{Nodes: nodes, Services: services, Slices: slices})
}

// load replaces the state with inputs as the log held them at a revision:
// the views are derived again, and the watches of the state replaced end,
// as their clients' resourceVersions may name changes this state skipped.
func (s *Store) load(revision int64, inputs Inputs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rv := revisionEnd(revision)
	s.revision = revision
	logRevision.Set(float64(revision))
	s.snapshot.Store(nil)
	s.paged.forget()
	if s.stream != nil {
		s.stream.Close()
		s.engine = topology.NewEngine()
		s.resetMaps()
	}
	s.engine.SetStamp(rv)
	// The Namespaces' defaults first, so that their Services are pruned by
	// them from the start.
	for _, ns := range inputs.Namespaces {
		s.engine.SetNamespace(ns.Name, ns.Annotations)
		s.recordNamespace(ns.Name)
	}
	s.engine.Load(inputs.Nodes, inputs.Services, inputs.Slices)
	for _, node := range inputs.Nodes {
		s.nodeCreated[node.Name] = node.CreationTimestamp
		s.nodeAdded[node.Name] = rv
	}
	for _, svc := range inputs.Services {
		s.recordService(svc)
	}
	s.loadedAt = time.Now()
	s.stream = watchstream.New(rv, watchstream.Options{
		HistorySize:   s.options.HistorySize,
		HistoryWeight: s.options.HistoryWeight,
		WatcherBuffer: s.options.WatcherBuffer,
		StallTimeout:  s.options.StallTimeout,
		// Watchers are indexed by the node they select; the changes say
		// which nodes they are for.
		ShardOf:  func(obj runtime.Object) string { return obj.(*topologyapi.NodeEndpoints).NodeName },
		Bookmark: bookmark,
		Copy:     build,
		Metrics:  watchstream.Metrics{EventsSent: eventsSent, Watchers: watchersCurrent, CutOff: watchersCutOff},
	})
	updateMalformedGauge(s.services)
}

// beginRevision numbers the changes that follow as the inputs of a
// revision of the log.
func (s *Store) beginRevision(revision int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revision = revision
}

// endRevision moves the store to the end of a revision once its inputs are
// applied: every replica is then at the same resourceVersion with the same
// state, however its changes were split.
func (s *Store) endRevision(revision int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if end := revisionEnd(revision); end > s.stream.RV() {
		s.stream.Advance(end)
		s.snapshot.Store(nil)
	}
	s.revision = max(s.revision, revision)
	logRevision.Set(float64(s.revision))
}

// resourceVersion is the store's resourceVersion: that of its latest change.
func (s *Store) resourceVersion() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stream == nil {
		return 0 // not loaded: reads get errNotLoaded
	}
	return s.stream.RV()
}

// Loaded says whether the store holds the initial state.
func (s *Store) Loaded() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stream != nil
}

// relistAfterLoad is how long after a load the store is never quiet: every
// node's client relists then, which is no change.
const relistAfterLoad = 5 * time.Second

// Quiet says whether the views were loaded relistAfterLoad ago or more and,
// for d, no change was published and no event handed to a watcher: a time
// for work that would delay a change's delivery.
func (s *Store) Quiet(d time.Duration) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stream != nil && time.Since(s.loadedAt) >= relistAfterLoad && s.stream.Idle(d)
}

// setNode adds or updates a node. A kubelet's status update, tens a second
// in a large cluster, is no change: it takes no write lock, moves no
// resourceVersion and keeps the snapshot wide readers share.
func (s *Store) setNode(node *corev1.Node) {
	switch same, recreated := s.holdsNode(node); {
	case same:
		return
	case recreated:
		// Deleted and created again while the feed looked away: its views
		// go and come back, as they would had the feed seen both, so that
		// no object changes its creation time at the same resourceVersion,
		// and a watch resumed from before is answered 410.
		s.deleteNode(node.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ownViews func() []topology.SliceChange
	_, known := s.nodeAdded[node.Name]
	var firstPublished bool
	took := s.publish(func(rv uint64) []topology.SliceChange {
		s.nodeCreated[node.Name] = node.CreationTimestamp
		if !known {
			s.nodeAdded[node.Name] = rv
		}
		var changes []topology.SliceChange
		changes, ownViews = s.engine.SetNodeInStages(node.Name, node.Labels)
		firstPublished = len(changes) > 0
		return changes
	})
	if ownViews != nil {
		// A change of its own, published once the nodes that see the
		// node's endpoints have theirs: a node that moves to another unit
		// changes its view of most Services. A known node's own views also
		// wait while the node watchers hand the first stage to their
		// clients: at edge-10k a few events each to a few hundred clients,
		// whose building and sending would otherwise share the CPUs with
		// thousands of events to one. Readers wait with them, as the engine
		// must not be read in between. A node that joins waits for nothing:
		// a fleet joining would wait once per node. Nor does a move within
		// feedYieldLimit of the end of the last wait, one of a bulk
		// relabel: readers and the queued inputs would wait most of the
		// time.
		if known && firstPublished && time.Since(s.ownViewsWaited) >= feedYieldLimit {
			start := time.Now()
			waited := awaitFanOut(func() bool { return s.stream.HandingOver(feedQuiet) })
			end := time.Now()
			if waited {
				s.ownViewsWaited = end
			}
			ownViewsWaitSeconds.Observe(end.Sub(start).Seconds())
		}
		took += s.publish(func(uint64) []topology.SliceChange { return ownViews() })
	}
	recomputeSeconds.Observe(took.Seconds())
}

// holdsNode says whether the store holds node as it is, and whether it holds
// another Node of that name, created at another time. Only the feed's
// worker writes, so the answer holds until it writes again.
func (s *Store) holdsNode(node *corev1.Node) (same, recreated bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	created, known := s.nodeCreated[node.Name]
	recreated = known && !created.Equal(&node.CreationTimestamp)
	return known && !recreated && s.engine.HasNode(node.Name, node.Labels), recreated
}

// deleteNode removes a node and its views.
func (s *Store) deleteNode(name string) {
	s.apply(func(uint64) []topology.SliceChange {
		return s.engine.DeleteNode(name)
	}, func() {
		delete(s.nodeCreated, name)
		delete(s.nodeAdded, name)
		for node, rv := range s.departed {
			if rv <= s.stream.Oldest() {
				delete(s.departed, node)
			}
		}
		// A watch resumed from within the change that took the node away
		// is answered 410 too.
		s.departed[name] = s.stream.RV()
	})
}

// setService adds or updates a Service. It returns why its topology
// annotation cannot be parsed when that is news: the caller reports it.
func (s *Store) setService(svc *corev1.Service) (newlyMalformed string) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	if s.serviceRecreated(key, svc.CreationTimestamp) {
		// As for a node created again (SetNode).
		s.deleteService(key)
	}
	s.apply(func(uint64) []topology.SliceChange {
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

// serviceRecreated says whether the store holds another Service of that
// name, created at another time.
func (s *Store) serviceRecreated(key types.NamespacedName, created metav1.Time) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	meta, known := s.services[key]
	return known && !meta.created.Equal(&created)
}

func (s *Store) recordService(svc *corev1.Service) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	meta := serviceMeta{created: svc.CreationTimestamp}
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

// deleteService removes a Service and its views.
func (s *Store) deleteService(key types.NamespacedName) {
	s.apply(func(uint64) []topology.SliceChange { return s.engine.DeleteService(key) },
		func() {
			delete(s.services, key)
			updateMalformedGauge(s.services)
		})
}

// setEndpointSlice adds or updates an EndpointSlice.
func (s *Store) setEndpointSlice(slice *discoveryv1.EndpointSlice) {
	s.apply(func(uint64) []topology.SliceChange { return s.engine.SetEndpointSlice(slice) })
}

// deleteEndpointSlice removes an EndpointSlice.
func (s *Store) deleteEndpointSlice(key types.NamespacedName) {
	s.apply(func(uint64) []topology.SliceChange { return s.engine.DeleteEndpointSlice(key) })
}

// set adds or updates an input object. It returns why a Service's or a
// Namespace's topology annotation cannot be parsed when that is news.
func (s *Store) set(obj metav1.Object) (newlyMalformed string) {
	switch obj := obj.(type) {
	case *corev1.Node:
		s.setNode(obj)
	case *corev1.Service:
		return s.setService(obj)
	case *discoveryv1.EndpointSlice:
		s.setEndpointSlice(obj)
	case *corev1.Namespace:
		return s.setNamespace(obj)
	}
	return ""
}

// apply runs one change of the engine, given the resourceVersion it ends
// at, and publishes what it changed as one entry. forget drops what the
// objects of views that went needed.
func (s *Store) apply(change func(rv uint64) []topology.SliceChange, forget ...func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	recomputeSeconds.Observe(s.publish(change).Seconds())
	for _, f := range forget {
		f()
	}
}

// publish numbers one change of the engine, given the resourceVersion of
// its first event, and publishes what it changed as one entry, whose events
// take the resourceVersions after it. It returns how long the engine took.
// The caller holds the write lock.
func (s *Store) publish(change func(rv uint64) []topology.SliceChange) time.Duration {
	start := time.Now()
	// A revision's changes share its range; the rare one that would run
	// past it sends its last events at the range's last resourceVersion but
	// one: a watcher cut off among those would miss the rest. Each change
	// leaves the resourceVersion before its first event to a watcher of
	// several nodes, which gets all but one node's events of a slice change
	// one early (entry.Events): no state is at it, so that every event is
	// newer than the state before its change, on every replica, and within
	// its revision's range.
	last := revisionEnd(s.revision) - 1
	first := min(max(s.stream.RV()+1, revisionStart(s.revision))+1, last)
	s.engine.SetStamp(first)
	// Any write may change what lists read, even one that moves no view
	// (the stamps, a Service's creation time).
	s.snapshot.Store(nil)
	s.paged.expire()
	changes := change(first)
	took := time.Since(start)
	viewsChanged.Add(float64(len(changes)))
	end := min(first+uint64(max(len(changes), 1))-1, last)
	if len(changes) > 0 {
		s.stream.PublishEntry(newEntry(s, first, end, changes))
	} else {
		s.stream.Advance(end)
	}
	return took
}
