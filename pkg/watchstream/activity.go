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

// activity records when the stream last handed an event to a client's
// watch, on the monotonic clock, so that bulk reads can tell a change
// being fanned out from a quiet feed. A watcher whose client stopped
// reading hands nothing over, so it never makes the feed look busy.
type activity struct {
	start time.Time
	// last is when the last event was handed over, as time since start.
	last atomic.Int64
}

func newActivity() *activity {
	return &activity{start: time.Now()}
}

func (a *activity) sent() {
	a.last.Store(int64(time.Since(a.start)))
}

func (a *activity) sinceLastSent() time.Duration {
	return time.Since(a.start) - time.Duration(a.last.Load())
}
