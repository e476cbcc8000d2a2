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
	"sync/atomic"
	"time"
)

// activity records when the stream last published a change and when a
// watcher last handed an event to its client, on the monotonic clock, so
// that bulk reads can tell a change being fanned out from a quiet feed.
type activity struct {
	start time.Time
	// published and sent are when the last change was published and the
	// last event handed over, as time since start plus one; zero is never.
	published, sent atomic.Int64
}

func newActivity() *activity {
	return &activity{start: time.Now()}
}

// record sets each of at to now, read from the clock once.
func (a *activity) record(at ...*atomic.Int64) {
	now := int64(time.Since(a.start)) + 1
	for _, t := range at {
		t.Store(now)
	}
}

// within says whether at was recorded less than d ago.
func (a *activity) within(at *atomic.Int64, d time.Duration) bool {
	last := at.Load()
	return last != 0 && time.Since(a.start)-time.Duration(last-1) < d
}
