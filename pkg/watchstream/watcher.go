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
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// watcher is one client's stream: a bounded queue that the store fills
// without ever blocking, drained to the client by the watcher's own goroutine.
type watcher struct {
	filter    Filter
	bookmarks bool
	remove    func(*watcher)
	options   *Options
	activity  *activity

	// initial makes the events the watcher starts with; its goroutine calls
	// it before sending anything.
	initial func() []watch.Event

	mu    sync.Mutex
	queue []watch.Event
	// busy says the goroutine is not waiting at the queue: it is starting,
	// or handing an event to the client.
	busy  bool
	limit int
	// initialLeft counts the initial events still queued, which raise the
	// limit until they leave.
	initialLeft int
	cut         bool
	// wake has a token when the queue has grown.
	wake     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	result   chan watch.Event
	// lastSent is when the client last took an event (bookmarks aside), on
	// the stream's clock.
	lastSent atomic.Int64
}

var _ watch.Interface = &watcher{}

func newWatcher(filter Filter, bookmarks bool, initial func() []watch.Event, remove func(*watcher), options *Options, activity *activity) *watcher {
	w := &watcher{
		filter: filter, bookmarks: bookmarks, remove: remove, options: options, activity: activity,
		initial: initial,
		busy:    true,
		limit:   options.WatcherBuffer,
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		result:  make(chan watch.Event),
	}
	go w.run()
	return w
}

// start puts the initial events before those queued meanwhile. They do not
// count against the buffer while they wait: a node's whole view may be
// larger than what it may lag behind.
func (w *watcher) start() {
	initial := w.initial()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = append(initial, w.queue...)
	w.limit += len(initial)
	w.initialLeft = len(initial)
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the stream; the client sees its result channel closed.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.remove(w)
	})
}

// send queues an event, or cuts the watcher off when it lags too far behind:
// its client re-watches from the last resourceVersion it received. It says
// whether the event found the watcher idle, its client done with every
// event before.
func (w *watcher) send(e watch.Event) (idle bool) {
	w.mu.Lock()
	if w.cut {
		w.mu.Unlock()
		return false
	}
	w.cut = len(w.queue) >= w.limit
	// The goroutine that drains the queue sleeps only once it is empty.
	wake := len(w.queue) == 0
	idle = wake && !w.busy
	if !w.cut {
		w.queue = append(w.queue, e)
	}
	cut := w.cut
	w.mu.Unlock()
	if cut {
		w.options.Metrics.CutOff.Inc()
		// Stop takes the lock of the watcher set the caller holds.
		go w.Stop()
		return false
	}
	if wake {
		w.notify()
	}
	return idle
}

// notify wakes the goroutine that drains the queue, if it sleeps.
func (w *watcher) notify() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// sendBookmark queues a bookmark unless the queue is full: a missed bookmark
// only delays the next. A watcher that was cut off gets none, though its
// queue drains until it stops: the bookmark's resourceVersion is past the
// events it lost, and its client would resume from there without them.
func (w *watcher) sendBookmark(e watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.cut && len(w.queue) < w.limit {
		w.queue = append(w.queue, e)
		w.notify()
	}
}

// waiting says whether events wait in the queue: the client will get at
// least one more before the stream ends or the watcher stops.
func (w *watcher) waiting() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) > 0
}

// handing says whether the watcher holds an event its client has not
// taken, or its client took one within quiet. A stopped watcher hands
// nothing.
func (w *watcher) handing(quiet time.Duration) bool {
	select {
	case <-w.done:
		return false
	default:
	}
	if w.activity.within(&w.lastSent, quiet) {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) > 0 || w.busy
}

func (w *watcher) run() {
	defer close(w.result)
	w.start()
	var stall *time.Timer
	defer func() {
		if stall != nil {
			stall.Stop()
		}
	}()
	for {
		w.mu.Lock()
		var next *watch.Event
		if len(w.queue) > 0 {
			next = &w.queue[0]
			w.queue = w.queue[1:]
			if w.initialLeft > 0 {
				w.initialLeft--
				w.limit--
			}
		}
		w.busy = next != nil
		w.mu.Unlock()
		if next == nil {
			select {
			case <-w.wake:
				continue
			case <-w.done:
				return
			}
		}
		event := *next
		if w.options.Copy != nil {
			event.Object = w.options.Copy(event.Object)
		}
		// The client is usually still taking the event before: a timer
		// only when it does not take this one at once.
		select {
		case w.result <- event:
			w.sent(event)
			continue
		case <-w.done:
			return
		default:
		}
		var stalled <-chan time.Time
		if timeout := w.options.StallTimeout; timeout > 0 {
			if stall == nil {
				stall = time.NewTimer(timeout)
			} else {
				stall.Reset(timeout)
			}
			stalled = stall.C
		}
		select {
		case w.result <- event:
			w.sent(event)
		case <-w.done:
			return
		case <-stalled:
			w.cutOff()
			return
		}
	}
}

func (w *watcher) sent(event watch.Event) {
	if event.Type != watch.Bookmark {
		w.options.Metrics.EventsSent.Inc()
		w.activity.record(&w.activity.sent, &w.lastSent)
	}
}

// cutOff stops a watcher whose client took nothing for StallTimeout, as send
// stops one that lags WatcherBuffer events behind: however much the path to
// the client holds, and whether or not more changes come. Its client resumes
// from the last event it received.
func (w *watcher) cutOff() {
	w.mu.Lock()
	first := !w.cut
	w.cut, w.queue = true, nil
	w.mu.Unlock()
	if first {
		w.options.Metrics.CutOff.Inc()
	}
	// Unlike send's caller, the watcher's goroutine holds no lock of the
	// watcher set.
	w.Stop()
}
