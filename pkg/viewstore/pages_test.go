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
	"testing"
	"testing/synctest"
	"time"
)

// The states kept for paged lists are few and go once unread: a third
// list's state takes the place of the one read least recently, and one
// unread for keptPagesIdle is dropped.
func TestKeptPageStatesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p pagedStates
		kept := func(rv uint64) bool {
			r, ok := p.at(rv)
			if ok && r.atRV != rv {
				t.Fatalf("the state kept at %d is the one of %d", rv, r.atRV)
			}
			return ok
		}
		p.keep(1, reader{atRV: 1})
		time.Sleep(time.Second)
		p.keep(2, reader{atRV: 2})
		time.Sleep(time.Second)
		if !kept(1) {
			t.Fatal("the first list's state was dropped while two were kept")
		}
		p.keep(3, reader{atRV: 3})
		if kept(2) || !kept(1) || !kept(3) {
			t.Errorf("a third list's state kept: 1 %v, 2 %v, 3 %v; want 1 and 3, whose pages were read last", kept(1), kept(2), kept(3))
		}
		time.Sleep(keptPagesIdle - time.Second)
		if !kept(3) {
			t.Fatalf("a state read %s ago was dropped", keptPagesIdle-time.Second)
		}
		time.Sleep(2 * time.Second)
		if kept(1) || !kept(3) {
			t.Errorf("after %s: 1 (unread for %s) kept %v, 3 (read 2 s ago) kept %v; want 3 alone", keptPagesIdle+time.Second, keptPagesIdle+time.Second, kept(1), kept(3))
		}
	})
}
