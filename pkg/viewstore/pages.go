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
// alive; keptPagesStates bounds how many are kept, keptPagesIdle for how
// long one unread stays. A state not kept any more expires its lists' later
// pages as before, when views they select changed.
const (
	keptPagesStates = 2
	keptPagesIdle   = 30 * time.Second
)

// pagedStates holds the states of the paged lists in progress, by
// resourceVersion.
type pagedStates struct {
	mu   sync.Mutex
	byRV map[uint64]*pagedState
}

type pagedState struct {
	read reader
	used time.Time
}

// keep holds r, the state at rv, for the next pages of a list, and drops
// the state read least recently when more would be kept.
func (p *pagedStates) keep(rv uint64, r reader) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropIdle()
	if kept, ok := p.byRV[rv]; ok {
		kept.used = time.Now()
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
	p.dropIdle()
	kept, ok := p.byRV[rv]
	if !ok {
		return reader{}, false
	}
	kept.used = time.Now()
	return kept.read, true
}

// forget drops every state kept: the store was loaded again, and their
// resourceVersions mean nothing any more.
func (p *pagedStates) forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.byRV)
}

func (p *pagedStates) dropIdle() {
	for rv, kept := range p.byRV {
		if time.Since(kept.used) > keptPagesIdle {
			delete(p.byRV, rv)
		}
	}
}
