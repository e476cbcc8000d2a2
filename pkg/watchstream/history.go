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

package watchstream

import (
	"sort"
)

// history is a ring of the latest entries, bounded by their count and by
// their total weight.
type history struct {
	entries   []Entry
	start     int // index of the oldest entry
	count     int
	maxWeight int
	weight    int
	// since is the resourceVersion the history starts after: a watch from it
	// or later can be resumed.
	since uint64
}

// newHistory keeps up to size entries of up to maxWeight events in all
// (0: no bound but the count).
func newHistory(size, maxWeight int) *history {
	return &history{entries: make([]Entry, size), maxWeight: maxWeight}
}

// reset empties the history at resourceVersion rv.
func (h *history) reset(rv uint64) {
	clear(h.entries)
	h.start, h.count, h.weight, h.since = 0, 0, 0, rv
}

func (h *history) add(e Entry) {
	if len(h.entries) == 0 {
		h.since = e.ResourceVersion()
		return
	}
	for h.count == len(h.entries) || h.count > 0 && h.maxWeight > 0 && h.weight+e.Weight() > h.maxWeight {
		h.dropOldest()
	}
	h.entries[(h.start+h.count)%len(h.entries)] = e
	h.count++
	h.weight += e.Weight()
}

func (h *history) dropOldest() {
	oldest := h.entries[h.start]
	h.since = oldest.ResourceVersion()
	h.weight -= oldest.Weight()
	h.entries[h.start] = nil
	h.start = (h.start + 1) % len(h.entries)
	h.count--
}

// after returns the entries with events after resourceVersion rv, oldest
// first; false when the history no longer reaches back to rv.
func (h *history) after(rv uint64) ([]Entry, bool) {
	if !h.reaches(rv) {
		return nil, false
	}
	at := func(i int) Entry { return h.entries[(h.start+i)%len(h.entries)] }
	first := sort.Search(h.count, func(i int) bool { return at(i).ResourceVersion() > rv })
	out := make([]Entry, 0, h.count-first)
	for i := first; i < h.count; i++ {
		out = append(out, at(i))
	}
	return out, true
}

// reaches says whether the history holds every change after resourceVersion
// rv.
func (h *history) reaches(rv uint64) bool { return rv >= h.since }
