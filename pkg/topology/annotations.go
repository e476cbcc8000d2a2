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

// Package topology computes, for every node, the endpoints it should route to
// for every Service: the Service's EndpointSlices pruned to the node's grid
// unit. It is pure (no API server, no I/O) and incremental: each input change
// returns exactly the (node, Service) views whose content changed.
package topology

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The annotations a Service opts into topology with.
const (
	// AnnotationTopologyKeys is SuperEdge's: a JSON array of node label keys,
	// any of which may match.
	AnnotationTopologyKeys = "topologyKeys"
	// AnnotationGridviewKeys is gridview's: a comma-separated list of node
	// label keys in order of preference; "*" means every endpoint.
	AnnotationGridviewKeys = "topology.gridview.io/keys"
	// AnnotationOpenYurtTopologyKeys is OpenYurt's: one value naming the
	// node, the node pool or the zone, a hard filter.
	AnnotationOpenYurtTopologyKeys = "openyurt.io/topologyKeys"
)

// Special keys of the ordered preference list.
const (
	KeyAny      = "*"
	KeyHostname = "kubernetes.io/hostname"
)

// ParseTopologyKeys parses SuperEdge's topologyKeys annotation. A key listed
// again is ignored, as SuperEdge's wrapper ignores it. The list may end with
// "*", the fallback set, as the deprecated Service.spec.topologyKeys of
// Kubernetes allowed it only last ("any topology"); SuperEdge's wrapper
// (superedge/superedge pkg/application-grid-wrapper/storage/util.go,
// hasIntersectionLabel) reads "*" as a label no node carries: it prunes a
// list ending in "*" as the list without it, only gridview falls back.
func ParseTopologyKeys(value string) ([]string, error) {
	var keys []string
	if err := json.Unmarshal([]byte(value), &keys); err != nil {
		return nil, fmt.Errorf("%s must be a JSON array of node label keys: %w", AnnotationTopologyKeys, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s lists no node label key", AnnotationTopologyKeys)
	}
	keys = firstOccurrences(keys)
	if err := validateKeys(AnnotationTopologyKeys, keys, true); err != nil {
		return nil, err
	}
	if err := anyLast(AnnotationTopologyKeys, keys); err != nil {
		return nil, err
	}
	return keys, nil
}

// ParseGridviewKeys parses gridview's ordered topology.gridview.io/keys annotation.
func ParseGridviewKeys(value string) ([]string, error) {
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("%s lists no node label key", AnnotationGridviewKeys)
	}
	keys := strings.Split(value, ",")
	for i := range keys {
		keys[i] = strings.TrimSpace(keys[i])
	}
	// A key listed again adds no tier: its first place is its preference.
	keys = firstOccurrences(keys)
	if err := validateKeys(AnnotationGridviewKeys, keys, true); err != nil {
		return nil, err
	}
	if err := anyLast(AnnotationGridviewKeys, keys); err != nil {
		return nil, err
	}
	return keys, nil
}

// anyLast checks that "*", every endpoint, comes last if at all.
func anyLast(annotation string, keys []string) error {
	for i, key := range keys[:len(keys)-1] {
		if key == KeyAny {
			return fmt.Errorf("%s: %q must come last, the %d keys after it are never used", annotation, KeyAny, len(keys)-i-1)
		}
	}
	return nil
}

// Bounds of what a malformed annotation is reported with. An annotation may
// hold up to kube-apiserver's 256 KiB limit of thousands of keys, or one
// huge key; the report goes into an Event, the log and the view store's
// memory, so it names the first few problems, each key cut short.
const (
	maxKeyErrors    = 5
	maxQuotedKeyLen = 64
)

// quoteKey quotes a key for an error, cut short when it is long.
func quoteKey(key string) string {
	if len(key) <= maxQuotedKeyLen {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%q... (%d bytes)", key[:maxQuotedKeyLen], len(key))
}

// firstOccurrences drops, in place, every key listed before.
func firstOccurrences(keys []string) []string {
	seen := sets.New[string]()
	return slices.DeleteFunc(keys, func(key string) bool {
		if seen.Has(key) {
			return true
		}
		seen.Insert(key)
		return false
	})
}

func validateKeys(annotation string, keys []string, allowAny bool) error {
	var errs []error
	for _, key := range keys {
		if key == KeyAny && allowAny {
			continue
		}
		for _, msg := range validation.IsQualifiedName(key) {
			errs = append(errs, fmt.Errorf("%s: key %s: %s", annotation, quoteKey(key), msg))
		}
	}
	return joinBounded(annotation, errs)
}

// joinBounded joins the first few errors of an annotation and counts the
// others.
func joinBounded(annotation string, errs []error) error {
	if len(errs) > maxKeyErrors {
		errs = append(errs[:maxKeyErrors], fmt.Errorf("%s: %d more errors", annotation, len(errs)-maxKeyErrors))
	}
	return errors.Join(errs...)
}

// nameSeparator joins a node's name and a slice's in a NodeEndpoints name:
// two dots, which no DNS subdomain holds, so node and slice names that hold
// dots still split unambiguously.
const nameSeparator = ".."

// ParseName splits a NodeEndpoints name, <node>..<slice>.
func ParseName(name string) (node, slice string, err error) {
	node, slice, ok := strings.Cut(name, nameSeparator)
	if !ok {
		return "", "", fmt.Errorf("%q is not <node>..<endpointslice>", name)
	}
	if msgs := validation.IsDNS1123Subdomain(node); len(msgs) > 0 {
		return "", "", fmt.Errorf("%q is not <node>..<endpointslice>: node %q: %s", name, node, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1123Subdomain(slice); len(msgs) > 0 {
		return "", "", fmt.Errorf("%q is not <node>..<endpointslice>: endpointslice %q: %s", name, slice, strings.Join(msgs, "; "))
	}
	return node, slice, nil
}

// Name is the NodeEndpoints name of a node's view of an EndpointSlice.
func Name(node, slice string) string {
	return node + nameSeparator + slice
}
