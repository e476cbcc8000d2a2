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
	"cmp"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

// entry is one change of the engine in the stream: the slices it changed,
// each for the nodes it names. Watchers get their node's object of each when
// it is sent, so the change is kept once however many nodes it reaches.
type entry struct {
	store *Store
	// first is the resourceVersion of the change's first event and rv that
	// of its last, which it ends at; its i-th slice change is sent at
	// eventRV(i).
	first, rv uint64
	changes   []topology.SliceChange
	// created holds the creation time of each Service the changes are of,
	// as the store held it when the change was made: a watch resumed after
	// the Service was deleted, or created again, is sent the objects live
	// watchers got.
	created []serviceCreated
	weight  int
}

type serviceCreated struct {
	service types.NamespacedName
	at      metav1.Time
}

var _ watchstream.Entry = &entry{}

// Weights of what an entry keeps, in units of about 16 bytes: a node named
// is a string header, an endpoint (addresses, conditions, node, zone) about
// 250 bytes, a slice change with its views' headers about 64.
const (
	changeWeight   = 4
	nodeWeight     = 1
	endpointWeight = 16
	createdWeight  = 3
)

// newEntry keeps a change. Its weight counts the nodes and endpoints it
// holds, so that the history's bound holds its memory: an old slice view it
// keeps is a slice the engine no longer does.
func newEntry(store *Store, first, rv uint64, changes []topology.SliceChange) *entry {
	e := &entry{store: store, first: first, rv: rv, changes: changes}
	for i := range changes {
		c := &changes[i]
		if c.Old != nil && c.New != nil && c.Old.Service == c.New.Service && maps.Equal(c.Old.Labels, c.New.Labels) {
			// Selectors read the same of both: the old content is not
			// needed to tell a watcher whether the object left it.
			c.Old = c.New
		}
		e.weight += changeWeight + nodeWeight*len(c.Nodes) + endpointWeight*endpoints(c.New)
		if c.Old != c.New {
			e.weight += endpointWeight * endpoints(c.Old)
		}
		svc := cmp.Or(c.New, c.Old).Service
		if !slices.ContainsFunc(e.created, func(sc serviceCreated) bool { return sc.service == svc }) {
			e.created = append(e.created, serviceCreated{service: svc, at: store.services[svc].created})
			e.weight += createdWeight
		}
	}
	return e
}

func endpoints(view *topology.SliceView) int {
	if view == nil {
		return 0
	}
	return len(view.Slice.Endpoints)
}

func (e *entry) ResourceVersion() uint64 { return e.rv }
func (e *entry) Weight() int             { return e.weight }

// eventRV is the resourceVersion of the events of the i-th slice change. A
// change of more slices than its revision's range numbers sends the last
// ones at its end: a watcher cut off among those would miss the rest, but
// no revision changes four million slices.
func (e *entry) eventRV(i int) uint64 {
	return min(e.first+uint64(i), e.rv)
}

// isFor says whether a slice change is for a node. A change for every node
// is for those known before it: a node that appeared since, or went and
// came back, got its whole view when it appeared.
func (e *entry) isFor(c *topology.SliceChange, node string) bool {
	if c.AllNodes {
		added, known := e.store.nodeAdded[node]
		return known && added < e.first
	}
	return slices.Contains(c.Nodes, node)
}

// recipients are the nodes a slice change is for.
func (e *entry) recipients(c *topology.SliceChange) []string {
	if !c.AllNodes {
		return c.Nodes
	}
	var out []string
	for _, node := range e.store.engine.Nodes() {
		if e.isFor(c, node) {
			out = append(out, node)
		}
	}
	return out
}

// event is a slice change as one node gets it. Its objects are built when
// the watcher sends them, outside the store's lock, each watcher's its own
// (encoding writes their type meta): a watcher that lags holds a few words
// per event, not a NodeEndpoints.
func (e *entry) event(c *topology.SliceChange, node string, rv uint64) *watchstream.Event {
	event := &watchstream.Event{RV: rv, Gone: c.New == nil}
	if c.New != nil {
		event.Object = e.pending(node, c.New, rv)
	}
	switch c.Old {
	case nil:
	case c.New:
		// What selectors read is the same before and after.
		event.Old = event.Object
	default:
		event.Old = e.pending(node, c.Old, rv)
	}
	if event.Object == nil {
		event.Object = event.Old
	}
	return event
}

// pending is node's object of a slice view, created when the change was
// made. The caller holds the store's lock.
func (e *entry) pending(node string, view *topology.SliceView, rv uint64) *pending {
	var created metav1.Time
	if i := slices.IndexFunc(e.created, func(sc serviceCreated) bool { return sc.service == view.Service }); i >= 0 {
		created = e.created[i].at
	}
	return &pending{node: node, view: view, rv: rv, created: laterOf(created, e.store.nodeCreated[node])}
}

// Events gives a watcher of one node the changes for it; a watcher of
// several nodes gets each node's, all but the last of a slice change one
// resourceVersion early, so that one cut off among them resumes with the
// whole slice change again rather than miss the rest.
func (e *entry) Events(f watchstream.Filter, after uint64, yield func(*watchstream.Event) bool) {
	node, oneNode := f.Shard()
	for i := range e.changes {
		c, rv := &e.changes[i], e.eventRV(i)
		if rv <= after {
			continue
		}
		if oneNode {
			if e.isFor(c, node) && mayMatch(f, node, c) && !yield(e.event(c, node, rv)) {
				return
			}
			continue
		}
		nodes := e.recipients(c)
		for j, node := range nodes {
			sentAt := rv
			if j < len(nodes)-1 {
				sentAt--
			}
			if mayMatch(f, node, c) && !yield(e.event(c, node, sentAt)) {
				return
			}
		}
	}
}

// mayMatch says whether a filter may select a node's object of a slice
// change, before or after it: objects are built only for those.
func mayMatch(f watchstream.Filter, node string, c *topology.SliceChange) bool {
	filter, ok := f.(Filter)
	if !ok {
		return true
	}
	return c.Old != nil && filter.matchesSlice(node, c.Old) || c.New != nil && filter.matchesSlice(node, c.New)
}

func (e *entry) ShardEvents(watched func(string) bool, shards func(func(string) bool), send func(string, func() *watchstream.Event)) {
	for i := range e.changes {
		c, rv := &e.changes[i], e.eventRV(i)
		sendTo := func(node string) {
			send(node, func() *watchstream.Event { return e.event(c, node, rv) })
		}
		if c.AllNodes {
			for node := range shards {
				if e.isFor(c, node) {
					sendTo(node)
				}
			}
			continue
		}
		for _, node := range c.Nodes {
			if watched(node) {
				sendTo(node)
			}
		}
	}
}
