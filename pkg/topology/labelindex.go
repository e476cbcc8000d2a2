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

package topology

import (
	"k8s.io/apimachinery/pkg/util/sets"

	topologyapi "github.com/gridview/gridview/apis/topology"
)

// labelIndex groups the nodes by value, for each label key some Service's
// topology reads, so that a change visits only the nodes that share a value
// with it instead of every node.
type labelIndex struct {
	groups map[string]map[string]sets.Set[string]
	// labelled counts, per key, the nodes that carry it: the nodes without it
	// are in no group.
	labelled map[string]int
}

func newLabelIndex() labelIndex {
	return labelIndex{groups: map[string]map[string]sets.Set[string]{}, labelled: map[string]int{}}
}

// addKey starts indexing a key.
func (x labelIndex) addKey(key string, nodes map[string]map[string]string) {
	x.groups[key] = map[string]sets.Set[string]{}
	for name, labels := range nodes {
		if value, ok := labels[key]; ok {
			x.insert(key, value, name)
		}
	}
}

// dropKey stops indexing a key no Service reads any more.
func (x labelIndex) dropKey(key string) {
	delete(x.groups, key)
	delete(x.labelled, key)
}

func (x labelIndex) add(node string, labels map[string]string) {
	for key := range x.groups {
		if value, ok := labels[key]; ok {
			x.insert(key, value, node)
		}
	}
}

func (x labelIndex) remove(node string, labels map[string]string) {
	for key, byValue := range x.groups {
		value, ok := labels[key]
		if !ok {
			continue
		}
		if byValue[value].Delete(node).Len() == 0 {
			delete(byValue, value)
		}
		if x.labelled[key]--; x.labelled[key] == 0 {
			delete(x.labelled, key)
		}
	}
}

func (x labelIndex) insert(key, value, node string) {
	group, ok := x.groups[key][value]
	if !ok {
		group = sets.New[string]()
		x.groups[key][value] = group
	}
	group.Insert(node)
	x.labelled[key]++
}

// group returns the nodes whose label key has value; do not modify it.
func (x labelIndex) group(key, value string) sets.Set[string] {
	return x.groups[key][value]
}

// labelKeys returns the keys of a Service's topology that are read from node
// labels: all but "*" and the hostname of an ordered Service, which means the
// node itself.
func labelKeys(p policy) []string {
	var keys []string
	for _, key := range p.keys {
		if key != KeyAny && !isSameNode(p, key) {
			keys = append(keys, key)
		}
	}
	return keys
}

// isSameNode tells whether a key's tier is the viewing node itself.
func isSameNode(p policy, key string) bool {
	return key == KeyHostname && p.mode == topologyapi.TopologyModeOrdered
}
