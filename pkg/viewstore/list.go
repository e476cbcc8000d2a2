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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// position is where a page ended, in list order.
type position struct {
	Namespace string `json:"namespace"`
	Node      string `json:"node"`
	Service   string `json:"service"`
	Slice     string `json:"slice"`
}

// before says whether the position comes before a node's NodeEndpoints of a
// slice of a Service in list order.
func (p *position) before(namespace, node, service, slice string) bool {
	return cmp.Or(
		cmp.Compare(p.Namespace, namespace),
		cmp.Compare(p.Node, node),
		cmp.Compare(p.Service, service),
		cmp.Compare(p.Slice, slice),
	) < 0
}

// continueToken is the state of a paged list: where it ended, at which
// resourceVersion.
type continueToken struct {
	RV    uint64   `json:"rv"`
	After position `json:"after"`
}

func (t continueToken) encode() string {
	data, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeContinue(value string) (continueToken, error) {
	var t continueToken
	data, err := base64.RawURLEncoding.DecodeString(value)
	if err == nil {
		err = json.Unmarshal(data, &t)
	}
	if err != nil || t.RV == 0 {
		return t, apierrors.NewBadRequest(fmt.Sprintf("continue: invalid value %q: not a token this server issued", value))
	}
	return t, nil
}

// ListOptions are the parameters of a list besides its filter.
type ListOptions struct {
	ResourceVersion string
	// Exact asks for exactly the state at ResourceVersion.
	Exact    bool
	Limit    int64
	Continue string
}

// List returns the NodeEndpoints the filter selects, a page at a time when
// asked. A node's list is read under the lock; any other is read from a
// snapshot after releasing it, so that a list of every node's views never
// holds up the feed or other readers.
func (s *Store) List(f Filter, opts ListOptions) (*topologyapi.NodeEndpointsList, error) {
	if opts.Limit < 0 {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("limit: invalid value %d: must not be negative", opts.Limit))
	}
	if _, oneNode := f.node(); !oneNode {
		if err := s.yieldToFeed(f, opts); err != nil {
			return nil, err
		}
	}
	r, listRV, after, unlock, err := s.startRead(f, opts)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// As kube-apiserver's lists, never a nil items list.
	list := &topologyapi.NodeEndpointsList{Items: make([]topologyapi.NodeEndpoints, 0, pageCapacity(f, opts.Limit))}
	r.forEach(f, after, func(node string, view *topology.SliceView) bool {
		if opts.Limit > 0 && int64(len(list.Items)) == opts.Limit {
			last := &list.Items[len(list.Items)-1]
			list.Continue = continueToken{RV: listRV, After: position{
				Namespace: last.Namespace, Node: last.NodeName, Service: last.ServiceName, Slice: last.Slice.Name,
			}}.encode()
			return false
		}
		list.Items = append(list.Items, r.object(node, view))
		return true
	})
	if _, oneNode := f.node(); list.Continue != "" && !oneNode {
		s.paged.keep(listRV, r)
	}
	list.ResourceVersion = fmt.Sprint(listRV)
	return list, nil
}

// pagePrealloc bounds the items a page allocates before it has them: a
// limit is the client's to choose.
const pagePrealloc = 1000

// pageCapacity is what a page's items are allocated at first: a whole page,
// up to pagePrealloc, when the filter selects by namespace or node alone,
// whose pages are full at scale; none when a selector may match few.
func pageCapacity(f Filter, limit int64) int64 {
	selective := f.Labels != nil && !f.Labels.Empty()
	if f.Fields != nil && !f.Fields.Empty() {
		_, oneNode := f.Fields.RequiresExactMatch(FieldNodeName)
		selective = selective || !oneNode || len(f.Fields.Requirements()) > 1
	}
	if limit <= 0 || selective {
		return 0
	}
	return min(limit, pagePrealloc)
}

// A list that does not select one node, such as a page of a cluster-wide
// list, waits while the watchers hand a change to their clients, at most
// feedYieldLimit: its building and encoding share the CPUs with that
// delivery, and nodes' routes wait on the delivery, an operator's list does
// not. The feed counts as busy only within feedFanOut of a change, and only
// while events are handed over: a client that stopped reading never holds
// lists back, and one that reads slowly only in that window.
const (
	feedQuiet      = 5 * time.Millisecond
	feedFanOut     = 100 * time.Millisecond
	feedYieldLimit = 100 * time.Millisecond
)

// yieldToFeed waits for the feed, unless the list would fail now: a
// continue token that a change already expired is answered at once. A list
// on a quiet feed goes on at once, its parameters checked by startRead
// alone.
func (s *Store) yieldToFeed(f Filter, opts ListOptions) error {
	s.mu.RLock()
	stream := s.stream
	busy := stream != nil && stream.Delivering(feedQuiet, feedFanOut)
	var err error
	if busy {
		_, _, _, err = s.pageStart(f, opts)
	}
	s.mu.RUnlock()
	if busy && err == nil {
		awaitFanOut(func() bool { return stream.Delivering(feedQuiet, feedFanOut) })
	}
	return err
}

// awaitFanOut waits while busy says the watchers hand a change to their
// clients, at most feedYieldLimit, and says whether it waited at all.
func awaitFanOut(busy func() bool) (waited bool) {
	for deadline := time.Now().Add(feedYieldLimit); busy(); waited = true {
		left := time.Until(deadline)
		if left <= 0 {
			return waited
		}
		time.Sleep(min(feedQuiet, left))
	}
	return waited
}

// startRead checks a list's parameters and returns a reader of the state it
// is served at and a function that ends the read.
func (s *Store) startRead(f Filter, opts ListOptions) (reader, uint64, *position, func(), error) {
	s.mu.RLock()
	if s.stream == nil {
		s.mu.RUnlock()
		return reader{}, 0, nil, nil, errNotLoaded
	}
	if _, oneNode := f.node(); oneNode {
		listRV, after, err := s.listStart(f, opts)
		if err != nil {
			s.mu.RUnlock()
			return reader{}, 0, nil, nil, err
		}
		r := s.liveReader()
		r.atRV = listRV
		return r, listRV, after, s.mu.RUnlock, nil
	}
	listRV, after, kept, err := s.pageStart(f, opts)
	if err != nil {
		s.mu.RUnlock()
		return reader{}, 0, nil, nil, err
	}
	r := kept
	if r == nil {
		current := s.snapshotReader()
		r = &current
	}
	r.atRV = listRV
	s.mu.RUnlock()
	return *r, listRV, after, func() {}, nil
}

// pageStart is listStart for a list that does not select one node: a later
// page whose views changed since the first reads on from the state the
// first was read at, while it is kept.
func (s *Store) pageStart(f Filter, opts ListOptions) (uint64, *position, *reader, error) {
	listRV, after, err := s.listStart(f, opts)
	if !apierrors.IsResourceExpired(err) {
		return listRV, after, nil, err
	}
	// listStart decoded it before it found the state expired.
	token, _ := decodeContinue(opts.Continue)
	if kept, ok := s.paged.at(token.RV); ok {
		return token.RV, &token.After, &kept, nil
	}
	return 0, nil, nil, err
}

// listStart returns the resourceVersion a list is served at and where it
// starts. A continued list is served at its first page's resourceVersion as
// long as nothing it selects has changed since; otherwise it has expired.
func (s *Store) listStart(f Filter, opts ListOptions) (uint64, *position, error) {
	current := s.stream.RV()
	if opts.Continue == "" {
		rv, err := s.stream.RequestedRV(opts.ResourceVersion)
		if err != nil || !opts.Exact || rv == current {
			return current, nil, err
		}
		// An exact list of an earlier state is the current one if nothing it
		// selects changed since.
		if changed, err := s.stream.ChangedSince(rv, f); err != nil || changed {
			return 0, nil, apierrors.NewResourceExpired(fmt.Sprintf("resourceVersion %d: the views this list selects changed since; list at the current state (%d)", rv, current))
		}
		return rv, nil, nil
	}
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		return 0, nil, apierrors.NewBadRequest("resourceVersion: must be empty when continue is set: the token carries it")
	}
	token, err := decodeContinue(opts.Continue)
	if err != nil {
		return 0, nil, err
	}
	if token.RV > current {
		return 0, nil, apierrors.NewResourceExpired("continue: the token was issued by another gridview-apiserver; list again")
	}
	changed, err := s.stream.ChangedSince(token.RV, f)
	if err != nil {
		return 0, nil, apierrors.NewResourceExpired("continue: the token is too old; list again")
	}
	if changed {
		return 0, nil, apierrors.NewResourceExpired("continue: views this list selects changed since it started; list again")
	}
	return token.RV, &token.After, nil
}
