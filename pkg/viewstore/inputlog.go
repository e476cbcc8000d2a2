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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// loggedInput is one input as a feed applied it: an object set, or the key
// of one removed (object nil), numbered in the order applied, with the
// store's resourceVersion after it.
type loggedInput struct {
	seq, rv uint64
	key     inputKey
	object  metav1.Object
}

// inputLog keeps the latest inputs a feed applied, in order: a replica that
// applies the same inputs in the same order to a store loaded with the same
// state numbers the same changes with the same resourceVersions.
type inputLog struct {
	mu sync.Mutex
	// seq numbers the latest input; rv is the store's resourceVersion after
	// it. An input log starts at the state a store was loaded with.
	seq, rv uint64
	// recent are the latest inputs, oldest first, the last numbered seq;
	// baseRV is the store's resourceVersion before the oldest.
	recent []loggedInput
	baseRV uint64
	limit  int
	// grew is closed when an input is added or the log starts again, and
	// replaced.
	grew chan struct{}
	// generation counts the starts: a reader of an earlier one reads
	// another state's inputs.
	generation uint64
}

// inputLogLimit bounds the inputs kept for a follower that lags: each holds
// an object's version as it was, which the informers may have dropped. One
// that lags more loads the state again.
const inputLogLimit = 4096

func newInputLog(limit int) *inputLog {
	return &inputLog{limit: limit, grew: make(chan struct{})}
}

// start empties the log at a state numbered seq whose resourceVersion is rv.
func (l *inputLog) start(seq, rv uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq, l.rv, l.recent, l.baseRV = seq, rv, nil, rv
	l.generation++
	l.signal()
}

// add appends an input numbered after the latest.
func (l *inputLog) add(key inputKey, object metav1.Object, rv uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.rv = rv
	if len(l.recent) == l.limit {
		// Halve rather than shift by one: a copy per input of a full log
		// would cost more than the input. Into a new array: readers hold
		// parts of this one.
		l.baseRV = l.recent[l.limit/2-1].rv
		l.recent = append(make([]loggedInput, 0, l.limit), l.recent[l.limit/2:]...)
	}
	l.recent = append(l.recent, loggedInput{seq: l.seq, rv: rv, key: key, object: object})
	l.signal()
}

func (l *inputLog) signal() {
	close(l.grew)
	l.grew = make(chan struct{})
}

// currentGeneration numbers the log's latest start.
func (l *inputLog) currentGeneration() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.generation
}

// position is the log's latest input and the store's resourceVersion after
// it.
func (l *inputLog) position() (seq, rv uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq, l.rv
}

// since returns the inputs after the one numbered seq, which left the store
// at rv, and a channel closed when the log grows; false when the log does
// not hold that input (too old, or another state's) in this generation.
func (l *inputLog) since(generation, seq, rv uint64) ([]loggedInput, <-chan struct{}, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.seq - uint64(len(l.recent)) // numbers the input before recent[0]
	if generation != l.generation || seq < first || seq > l.seq {
		return nil, nil, false
	}
	rvThen := l.baseRV
	if seq > first {
		rvThen = l.recent[seq-first-1].rv
	}
	if rvThen != rv {
		return nil, nil, false
	}
	return l.recent[seq-first:], l.grew, true
}
