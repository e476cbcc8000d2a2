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

// history is a ring of the latest events.
type history struct {
	events []*Event
	start  int // index of the oldest event
	count  int
	// since is the resourceVersion the history starts after: a watch from it
	// or later can be resumed.
	since uint64
}

func newHistory(size int) *history {
	return &history{events: make([]*Event, size)}
}

// reset empties the history at resourceVersion rv.
func (h *history) reset(rv uint64) {
	clear(h.events)
	h.start, h.count, h.since = 0, 0, rv
}

func (h *history) add(e *Event) {
	if len(h.events) == 0 {
		h.since = e.RV
		return
	}
	if h.count == len(h.events) {
		h.since = h.events[h.start].RV
		h.events[h.start] = nil
		h.start = (h.start + 1) % len(h.events)
		h.count--
	}
	h.events[(h.start+h.count)%len(h.events)] = e
	h.count++
}

// after returns the events after resourceVersion rv, oldest first; false
// when the history no longer reaches back to rv.
func (h *history) after(rv uint64) ([]*Event, bool) {
	if rv < h.since {
		return nil, false
	}
	at := func(i int) *Event { return h.events[(h.start+i)%len(h.events)] }
	first := sort.Search(h.count, func(i int) bool { return at(i).RV > rv })
	out := make([]*Event, 0, h.count-first)
	for i := first; i < h.count; i++ {
		out = append(out, at(i))
	}
	return out, true
}
