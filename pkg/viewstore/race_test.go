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
	"testing"
)

// Readers under the store's read lock fill the engine's lazily sorted node
// and Service lists concurrently.
func TestConcurrentReadersRace(t *testing.T) {
	s := newTestStore(t, testOptions)
	s.SetNode(node("edge-4", "b"))                 // sortedNodes = nil
	s.SetService(service("demo", "new", nil, nil)) // servicesSorted may be nil
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.List(Filter{}, ListOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
