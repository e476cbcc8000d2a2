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

// A view is compared by digest: what one node routes to of one slice is the
// set of its endpoints' (address, ready) and the Service's topology mode;
// a node's whole state is the sum of its slices' entries. Sums make the
// digests independent of order, so neither side sorts.

// mix is splitmix64's finalizer: it spreads the bits of a sum.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// fnv64a hashes a string (FNV-1a) without allocating.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// endpointHash is one endpoint's part of a slice digest, from the hash of
// its address.
func endpointHash(addrHash uint64, ready bool) uint64 {
	if ready {
		addrHash += 0x632be59bd9b4e019
	}
	return mix(addrHash)
}

// sliceDigest closes the sum of a slice's endpoint hashes with its mode.
func sliceDigest(mode string, sum uint64) uint64 {
	return mix(sum ^ fnv64a(mode))
}

// entryHash is one (slice, digest) entry's part of a node's total.
func entryHash(id int32, digest uint64) uint64 {
	return mix(uint64(id)*0x9e3779b97f4a7c15 ^ digest)
}

// The tiers of the ordered Services' keys, nested as the scenario's zones
// hold whole units: an endpoint in the viewer's unit is also in its zone.
const (
	tierUnit = iota
	tierZone
	tierAny
	noTier // no endpoint: nothing kept
)

// UnitView is what any node of unit sees of svc: slice ID to digest, for
// each slice of which it routes to at least one endpoint (no entry: no
// NodeEndpoints object). The scenario gives every node of a unit the same
// zone, so the unit decides the view. The rules are DESIGN.md's, written
// again here so the harness does not trust the code it measures:
//   - none: every endpoint;
//   - any-match on the unit key: the endpoints on nodes of the same unit;
//   - ordered unit, zone, "*": the first tier with a ready endpoint, or when
//     none is ready anywhere the first tier with any endpoint; all of that
//     tier's endpoints, ready or not.
func (m *Model) UnitView(svc *Service, unit int) map[int32]uint64 {
	zone := m.ZoneOf(unit)
	tierOf := func(ep Endpoint) int {
		switch theirs := m.Nodes[ep.Node].Unit; {
		case theirs == unit:
			return tierUnit
		case m.ZoneOf(theirs) == zone:
			return tierZone
		}
		return tierAny
	}
	// keep is the widest tier kept: tiers are nested, so the first tier
	// holding a wanted endpoint is the smallest tier of any of them.
	keep := tierAny
	switch svc.Mode {
	case ModeAnyMatch:
		keep = tierUnit
	case ModeOrdered:
		ready, anyTier := noTier, noTier
		for _, sl := range svc.Slices {
			for _, ep := range sl.Endpoints {
				t := tierOf(ep)
				anyTier = min(anyTier, t)
				if ep.Ready {
					ready = min(ready, t)
				}
			}
		}
		keep = ready
		if ready == noTier {
			keep = anyTier
		}
	}
	var out map[int32]uint64
	mode := svc.Mode.String()
	for _, sl := range svc.Slices {
		sum, kept := uint64(0), false
		for _, ep := range sl.Endpoints {
			if keep == tierAny || tierOf(ep) <= keep {
				sum += endpointHash(ep.addrHash, ep.Ready)
				kept = true
			}
		}
		if kept {
			if out == nil {
				out = map[int32]uint64{}
			}
			out[sl.ID] = sliceDigest(mode, sum)
		}
	}
	return out
}

// UnitTotals sums each unit's entries over every Service: a watcher of a
// node of the unit is current when its own total equals the unit's.
// Unannotated Services look the same from every unit: they are summed once.
func (m *Model) UnitTotals(units []int) map[int]uint64 {
	var common uint64
	for _, svc := range m.Services {
		if svc.Mode == ModeNone {
			common += viewTotal(m.UnitView(svc, 0))
		}
	}
	out := make(map[int]uint64, len(units))
	for _, unit := range units {
		total := common
		for _, svc := range m.Services {
			if svc.Mode != ModeNone {
				total += viewTotal(m.UnitView(svc, unit))
			}
		}
		out[unit] = total
	}
	return out
}

func viewTotal(view map[int32]uint64) uint64 {
	var total uint64
	for id, d := range view {
		total += entryHash(id, d)
	}
	return total
}

// UnitViews returns, for each unit, its view of the given Services merged:
// the entries a change of those Services may touch.
func (m *Model) UnitViews(units []int, services []*Service) map[int]map[int32]uint64 {
	out := make(map[int]map[int32]uint64, len(units))
	for _, unit := range units {
		merged := map[int32]uint64{}
		for _, svc := range services {
			for id, d := range m.UnitView(svc, unit) {
				merged[id] = d
			}
		}
		out[unit] = merged
	}
	return out
}

// diffViews returns the entries of after that differ from before, with 0
// for an entry before had and after has not (the object deleted).
func diffViews(before, after map[int32]uint64) map[int32]uint64 {
	var out map[int32]uint64
	set := func(id int32, d uint64) {
		if out == nil {
			out = map[int32]uint64{}
		}
		out[id] = d
	}
	for id, d := range after {
		if before[id] != d {
			set(id, d)
		}
	}
	for id := range before {
		if _, ok := after[id]; !ok {
			set(id, 0)
		}
	}
	return out
}
