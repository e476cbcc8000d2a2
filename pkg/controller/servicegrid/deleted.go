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

package servicegrid

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// deletedGrids remembers the ServiceGrids whose deletion the informer saw, by
// name and UID, until their Services are gone. Only such a sighting lets the
// controller delete a Service: a ServiceGrid that is merely not found may sit
// in a store that was lost or replaced, and a UID tells a ServiceGrid apart
// from one recreated under the same name.
type deletedGrids struct {
	mu   sync.Mutex
	uids map[cache.ObjectName][]types.UID
}

func (d *deletedGrids) add(key cache.ObjectName, uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.uids == nil {
		d.uids = map[cache.ObjectName][]types.UID{}
	}
	if !slices.Contains(d.uids[key], uid) {
		d.uids[key] = append(d.uids[key], uid)
	}
}

func (d *deletedGrids) get(key cache.ObjectName) []types.UID {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.uids[key])
}

// forget drops the UIDs whose Services are gone; others seen meanwhile stay.
func (d *deletedGrids) forget(key cache.ObjectName, done []types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	left := slices.DeleteFunc(d.uids[key], func(uid types.UID) bool { return slices.Contains(done, uid) })
	if len(left) == 0 {
		delete(d.uids, key)
		return
	}
	d.uids[key] = left
}
