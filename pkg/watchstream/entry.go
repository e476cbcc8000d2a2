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

import "k8s.io/apimachinery/pkg/runtime"

// Entry is one change in a stream's history: one event, or many that share
// one resourceVersion range and are built per watcher when sent, so that a
// change many shards see is kept once.
type Entry interface {
	// ResourceVersion is the resourceVersion after the entry: that of its
	// last event or later.
	ResourceVersion() uint64
	// Weight is what keeping the entry in the history costs, in events.
	Weight() int
	// Events calls yield, in order, with the events of resourceVersion
	// after after for a watcher with filter f, until yield returns false.
	// The filter decides what the watcher sees; Events may skip what it
	// cannot see.
	Events(f Filter, after uint64, yield func(*Event) bool)
	// ShardEvents calls send with each shard that has watchers (watched
	// says which) and a function that makes its event, of every change the
	// entry holds, in order: send calls it once per watcher, so that an entry
	// may give each watcher objects of its own.
	ShardEvents(watched func(shard string) bool, shards func(yield func(string) bool), send func(shard string, event func() *Event))
}

// single is an Entry of one event, in the shard shardOf names.
type single struct {
	*Event
	shardOf func(runtime.Object) string
}

func (s single) ResourceVersion() uint64 { return s.RV }
func (s single) Weight() int             { return 1 }

func (s single) Events(_ Filter, after uint64, yield func(*Event) bool) {
	if s.RV > after {
		yield(s.Event)
	}
}

func (s single) ShardEvents(watched func(string) bool, _ func(func(string) bool), send func(string, func() *Event)) {
	if s.shardOf == nil {
		return
	}
	if shard := s.shardOf(s.Object); watched(shard) {
		send(shard, func() *Event { return s.Event })
	}
}
