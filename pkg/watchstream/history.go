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
	// gaps are the resourceVersions skipped by jumps whose start the history
	// still reaches: another process may have issued them.
	gaps []gap
}

// gap is the resourceVersions after from and before to.
type gap struct{ from, to uint64 }

// newHistory keeps up to size entries of up to maxWeight events in all
// (0: no bound but the count).
func newHistory(size, maxWeight int) *history {
	return &history{entries: make([]Entry, size), maxWeight: maxWeight}
}

// reset empties the history at resourceVersion rv.
func (h *history) reset(rv uint64) {
	clear(h.entries)
	h.start, h.count, h.weight, h.since, h.gaps = 0, 0, 0, rv, nil
}

// skip notes that the resourceVersions after from and before to were not
// issued here.
func (h *history) skip(from, to uint64) {
	h.gaps = append(h.gaps, gap{from: from, to: to})
	h.forgetGaps()
}

func (h *history) add(e Entry) {
	if len(h.entries) == 0 {
		h.since = e.ResourceVersion()
		h.forgetGaps()
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
	h.forgetGaps()
}

// forgetGaps drops the gaps a watch can no longer resume from.
func (h *history) forgetGaps() {
	for len(h.gaps) > 0 && h.gaps[0].to <= h.since {
		h.gaps = h.gaps[1:]
	}
}

// after returns the entries with events after resourceVersion rv, oldest
// first; false when the history no longer reaches back to rv, or rv is one
// it skipped.
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
// rv: it reaches back to rv, and rv is not one it skipped.
func (h *history) reaches(rv uint64) bool {
	if rv < h.since {
		return false
	}
	for _, g := range h.gaps {
		if rv > g.from && rv < g.to {
			return false
		}
	}
	return true
}
