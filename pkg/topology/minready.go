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
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// AnnotationMinReady gates a Service's tiers by ready capacity: a tier is
// chosen only when it holds at least that many ready endpoints.
const AnnotationMinReady = "topology.gridview.io/min-ready"

// Bounds of a tier's minimum: a tier of more than 10,000 ready endpoints is
// not a tier anyone routes to for capacity.
const (
	MinReadyLowest  = 1
	MinReadyHighest = 10_000
)

// MinReady is how many ready endpoints each key's tier must hold to be
// chosen. Its zero value asks one of every tier, as a Service without the
// annotation does.
type MinReady struct {
	// Default applies to every key not in PerKey; 0 means 1.
	Default int32
	// PerKey holds the keys named with their own minimum.
	PerKey map[string]int32
}

// For returns the minimum of a key's tier; "*" needs one ready endpoint,
// being the last resort.
func (m MinReady) For(key string) int {
	if key == KeyAny {
		return 1
	}
	if n, ok := m.PerKey[key]; ok {
		return int(n)
	}
	return max(int(m.Default), 1)
}

// String renders m as the annotation's canonical value: the default first
// unless it is 1, then the keys, sorted, so that equal minimums render alike.
func (m MinReady) String() string {
	var parts []string
	if m.Default > 1 || len(m.PerKey) == 0 {
		parts = append(parts, strconv.Itoa(max(int(m.Default), 1)))
	}
	for _, key := range slices.Sorted(maps.Keys(m.PerKey)) {
		parts = append(parts, key+"="+strconv.Itoa(int(m.PerKey[key])))
	}
	return strings.Join(parts, ",")
}

// ParseMinReady parses the min-ready annotation: one integer for every key
// but "*" ("2"), key=N pairs, the keys not named needing 1
// ("superedge.io/nodeunit=2,topology.kubernetes.io/zone=3"), or both, the
// integer then being the minimum of the keys not named ("2,unit=3").
func ParseMinReady(value string) (MinReady, error) {
	if strings.TrimSpace(value) == "" {
		return MinReady{}, fmt.Errorf("%s names no minimum", AnnotationMinReady)
	}
	var m MinReady
	var errs []error
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		key, count, named := strings.Cut(part, "=")
		if !named {
			count = key
		}
		n, err := parseMinimum(strings.TrimSpace(count))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", AnnotationMinReady, quoteKey(part), err))
			continue
		}
		key = strings.TrimSpace(key)
		switch {
		case !named && m.Default != 0:
			errs = append(errs, fmt.Errorf("%s: %s: a second minimum for every key", AnnotationMinReady, quoteKey(part)))
		case !named:
			m.Default = n
		case m.PerKey[key] != 0:
			errs = append(errs, fmt.Errorf("%s: key %s named twice", AnnotationMinReady, quoteKey(key)))
		case key == KeyAny:
			errs = append(errs, fmt.Errorf("%s: key %q is the last resort, it needs one ready endpoint", AnnotationMinReady, KeyAny))
		default:
			if err := validateKeys(AnnotationMinReady, []string{key}, false); err != nil {
				errs = append(errs, err)
				continue
			}
			if m.PerKey == nil {
				m.PerKey = map[string]int32{}
			}
			m.PerKey[key] = n
		}
	}
	if err := joinBounded(AnnotationMinReady, errs); err != nil {
		return MinReady{}, err
	}
	return m, nil
}

// parseMinimum parses one minimum, in decimal digits only: strconv would
// also take a sign.
func parseMinimum(s string) (int32, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" || len(s) > len(strconv.Itoa(MinReadyHighest)) {
		return 0, fmt.Errorf("must be an integer from %d to %d", MinReadyLowest, MinReadyHighest)
	}
	n, _ := strconv.Atoi(s)
	if n < MinReadyLowest || n > MinReadyHighest {
		return 0, fmt.Errorf("must be an integer from %d to %d", MinReadyLowest, MinReadyHighest)
	}
	return int32(n), nil
}
