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
	"context"
	"sync/atomic"
)

// Backlog tells the HTTP handler of a watch whether more events wait for
// its client. k8s.io/apiserver's watch handler flushes after every event it
// takes from a result channel left empty, as a watcher's always is, so a
// burst would leave one HTTP/2 frame, TLS record and write per event, on
// each hop to the client; a writer that skips the flush while events wait
// sends the burst in full frames instead.
type Backlog struct {
	watcher atomic.Pointer[watcher]
}

type backlogKey struct{}

// WithBacklog returns a context whose watch, once Watch has started it,
// reports to the returned Backlog.
func WithBacklog(ctx context.Context) (context.Context, *Backlog) {
	b := &Backlog{}
	return context.WithValue(ctx, backlogKey{}, b), b
}

// Waiting says whether events wait for the watch's client: it will take at
// least one more before its stream ends, so a flush now would be early.
func (b *Backlog) Waiting() bool {
	w := b.watcher.Load()
	return w != nil && w.waiting()
}

// reportBacklog makes w the watcher of the Backlog in ctx, if any.
func reportBacklog(ctx context.Context, w *watcher) {
	if b, ok := ctx.Value(backlogKey{}).(*Backlog); ok {
		b.watcher.Store(w)
	}
}
