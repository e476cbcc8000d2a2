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

// Package inputlog keeps gridview's inputs, the Nodes, Services,
// EndpointSlices and Namespaces its views derive from, as one ordered log in
// gridview's etcd. One replica, the elected writer, copies its informers'
// state there; every replica, the writer included, reads the log back and
// derives its views from it, so that every replica applies the same inputs
// in the same order and numbers their changes by the same etcd revisions.
package inputlog

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Prefixes returns where the log and the election of its writer live
// under gridview's etcd prefix (--etcd-prefix), beside the ServiceGrids,
// so that two installs that share an etcd keep apart.
func Prefixes(etcdPrefix string) (log, election string) {
	etcdPrefix = strings.TrimSuffix(etcdPrefix, "/")
	return etcdPrefix + "/inputs/", etcdPrefix + "/leader/"
}

// enginesPrefix is where replicas announce their engine generation
// (Engines).
func enginesPrefix(etcdPrefix string) string {
	return strings.TrimSuffix(etcdPrefix, "/") + "/engines/"
}

// Kind is the kind of an input.
type Kind int

const (
	Nodes Kind = iota
	Services
	EndpointSlices
	Namespaces
)

var kindPaths = [...]string{Nodes: "nodes", Services: "services", EndpointSlices: "endpointslices", Namespaces: "namespaces"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindPaths) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindPaths[k]
}

// Key names an input.
type Key struct {
	Kind Kind
	types.NamespacedName
}

// KeyOf names an object of a kind.
func KeyOf(kind Kind, obj metav1.Object) Key {
	return Key{Kind: kind, NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
}

// Change is one input as the log holds it after a revision: an object set,
// or removed (Object nil).
type Change struct {
	Key    Key
	Object metav1.Object
}

// path is the etcd key of an input: <prefix><kind>/<namespace>/<name>, the
// namespace empty for Nodes and Namespaces. Neither a namespace nor a name
// holds a "/".
func (k Key) path(prefix string) string {
	return prefix + kindPaths[k.Kind] + "/" + k.Namespace + "/" + k.Name
}

func parsePath(prefix, path string) (Key, error) {
	parts := strings.Split(strings.TrimPrefix(path, prefix), "/")
	if !strings.HasPrefix(path, prefix) || len(parts) != 3 || parts[2] == "" {
		return Key{}, fmt.Errorf("%q is no input's key under %q", path, prefix)
	}
	for kind, name := range kindPaths {
		if parts[0] == name {
			return Key{Kind: Kind(kind), NamespacedName: types.NamespacedName{Namespace: parts[1], Name: parts[2]}}, nil
		}
	}
	return Key{}, fmt.Errorf("%q names no kind of input", path)
}
