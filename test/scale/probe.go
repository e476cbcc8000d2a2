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

package scale

import (
	"slices"
	"time"
)

// probe follows one watcher through one change: what it should end with,
// and what it received on the way.
type probe struct {
	want   map[int32]uint64 // entries the change sets; 0: the object goes
	start  time.Time
	bytes0 int64
	events int
	done   time.Time // when the state first matched want
}

// arm starts a probe; want may be empty, for a watcher the change should
// not reach.
func (w *Watcher) arm(want map[int32]uint64, start time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.probe = &probe{want: want, start: start, bytes0: w.bytes.Load()}
}

// disarm ends the probe and returns it with bytes set to what was read.
func (w *Watcher) disarm() (p probe, bytes int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, w.probe = *w.probe, nil
	return p, w.bytes.Load() - p.bytes0
}

// observed runs under w.mu after each event or list.
func (w *Watcher) observed() {
	p := w.probe
	if p == nil {
		return
	}
	p.events++
	if !p.done.IsZero() || len(p.want) == 0 {
		return
	}
	for id, d := range p.want {
		if w.entries[id] != d {
			return
		}
	}
	p.done = time.Now()
}

// latency says how long the watcher took to match what it should end with.
func (p probe) latency() string {
	if p.done.IsZero() {
		return "not current"
	}
	return p.done.Sub(p.start).String()
}

// pending reports whether the probe still waits for its change.
func (w *Watcher) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.probe != nil && len(w.probe.want) > 0 && w.probe.done.IsZero()
}

// Delivery aggregates the probes of one kind of change over its repeats.
type Delivery struct {
	Kind     string
	Changes  int
	Expected int // watchers whose views the changes alter, summed
	Done     int // of those, the ones that got there
	Reached  int // watchers that received any event
	Bytes    int64
	// Latencies run from just before each write to the event that made a
	// watcher's state match.
	Latencies []time.Duration
	CPU       time.Duration // gridview-apiserver's, over all repeats
}

// add folds one change's probes into d.
func (d *Delivery) add(probes []probe, bytes []int64, cpu time.Duration) {
	d.Changes++
	d.CPU += cpu
	for i, p := range probes {
		if len(p.want) > 0 {
			d.Expected++
			if !p.done.IsZero() {
				d.Done++
				d.Latencies = append(d.Latencies, p.done.Sub(p.start))
			}
		}
		if p.events > 0 {
			d.Reached++
			d.Bytes += bytes[i]
		}
	}
}

// BytesPerReached is the mean of what a reached watcher read.
func (d *Delivery) BytesPerReached() int64 {
	if d.Reached == 0 {
		return 0
	}
	return d.Bytes / int64(d.Reached)
}

// Percentile returns the q-quantile (0 ≤ q ≤ 1; 0 is the least) of the
// latencies, nearest rank, or 0 without any.
func (d *Delivery) Percentile(q float64) time.Duration {
	if len(d.Latencies) == 0 {
		return 0
	}
	sorted := slices.Clone(d.Latencies)
	slices.Sort(sorted)
	rank := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}
