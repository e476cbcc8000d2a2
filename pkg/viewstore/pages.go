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
	"sync"
	"time"
)

// A paged list that does not select one node reads every page from the
// state its first page was read at, as kube-apiserver's paged lists read
// etcd's revision until compaction: kept here, a later page reads on at
// that resourceVersion although views it selects changed in between. At
// scale such a list spans hundreds of pages and the views change every few
// pages, so without it `kubectl get nodeendpoints -A` would rarely end. A
// kept state shares what did not change with the store, and holds what did
// alive: keptPagesStates bounds how many are kept, keptPagesIdle how long
// one unread stays, keptPagesMaxAge how long after its copy any is served,
// as compaction bounds etcd's (either is dropped at the next change or
// read). A list whose state is no longer kept has its later pages expire,
// as before, when views they select changed.
const (
	keptPagesStates = 2
	keptPagesIdle   = 30 * time.Second
	keptPagesMaxAge = 5 * time.Minute
)

// pagedStates holds the states of the paged lists in progress, by
// resourceVersion.
type pagedStates struct {
	mu   sync.Mutex
	byRV map[uint64]*pagedState
	// loads counts forget: a state copied before the last load is never
	// kept, its resourceVersion meaning nothing any more.
	loads uint64
}

type pagedState struct {
	read reader
	used time.Time
}

// keep holds r for the next pages of a list at rv, if r is the state at rv
// (a first page's), copied since the last load and less than
// keptPagesMaxAge ago, and drops the state read least recently when more
// would be kept; a later page, read from the current state because nothing
// it selects changed, only marks the list's state read.
func (p *pagedStates) keep(rv uint64, r reader) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	if kept, ok := p.byRV[rv]; ok {
		kept.used = time.Now()
		return
	}
	if r.stateRV != rv || r.loads != p.loads || time.Since(r.copiedAt) > keptPagesMaxAge {
		return
	}
	if p.byRV == nil {
		p.byRV = map[uint64]*pagedState{}
	}
	for len(p.byRV) >= keptPagesStates {
		var oldest *uint64
		for at, kept := range p.byRV {
			if oldest == nil || kept.used.Before(p.byRV[*oldest].used) {
				oldest = &at
			}
		}
		delete(p.byRV, *oldest)
	}
	p.byRV[rv] = &pagedState{read: r, used: time.Now()}
}

// at returns the state kept at rv, if it is.
func (p *pagedStates) at(rv uint64) (reader, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	kept, ok := p.byRV[rv]
	if !ok {
		return reader{}, false
	}
	kept.used = time.Now()
	return kept.read, true
}

// expire drops the states unread for keptPagesIdle or copied more than
// keptPagesMaxAge ago; the store calls it at every change, which is what
// makes a kept state hold more than the current one does.
func (p *pagedStates) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
}

func (p *pagedStates) expireLocked() {
	for rv, kept := range p.byRV {
		if time.Since(kept.used) > keptPagesIdle || time.Since(kept.read.copiedAt) > keptPagesMaxAge {
			delete(p.byRV, rv)
		}
	}
}

// forget drops every state kept: the store was loaded again, and their
// resourceVersions mean nothing any more.
func (p *pagedStates) forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.byRV)
	p.loads++
}

// loadCount is how many times the store was loaded; the caller holds the
// store's lock, which load takes to write.
func (p *pagedStates) loadCount() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.loads
}
