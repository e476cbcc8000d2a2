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

package wrapper

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/watchstream"
)

// The cache is one file: the SHA-256 of the payload in hex, a newline, and
// the payload. A torn or altered file fails the check and is never served.
// The payload is a JSON header line naming the node and the
// resourceVersion, then one record per served object, as the state keeps
// it: protobuf, Endpoints by reference to their slices. Nothing is decoded
// or encoded again to write it, and it is a third of the size of the JSON
// it replaces.
const (
	cacheFile = "state.cache"
	// legacyCacheFile is the JSON cache of earlier releases, removed once a
	// new one is written.
	legacyCacheFile = "state.json"
	cacheFormat     = 2
)

// The header names the node whose view the cache holds: a cache directory
// kept across a change of --node-name, or written by a wrapper that did not
// name its node, holds another node's Services and endpoints, which
// kube-proxy must not program.
type cacheHeader struct {
	Node            string `json:"node"`
	ResourceVersion uint64 `json:"resourceVersion"`
	Format          int    `json:"format"`
}

var errCacheOfAnotherNode = errors.New("the cache holds another node's state")

// restartGap is how far past the cache's resourceVersion a state loaded
// from it starts. The process that saved the cache may have served
// kube-proxy later resourceVersions before it stopped: after a crash, or
// changes made since its last save. Numbering the new changes from the
// saved one would reuse those, and kube-proxy, which re-watches from the
// last resourceVersion it saw, would be resumed past changes it never
// received. Past the gap, which no process reaches between two saves,
// every resourceVersion of the old process is older than the new history
// and gets 410, and kube-proxy lists again, locally.
const restartGap = 1 << 43

// StartRV is the resourceVersion a state starts at: past the gap after a
// cache's, else a new epoch (watchstream.InitialRV). A random distance
// further, so that two processes that start from one cache (the first died
// before it saved, or could not save: a full disk) number apart: the second
// answers 410 to the first's resourceVersions, where numbering alike it
// would resume kube-proxy past changes it never sent. Past the numbers a
// long crash loop leaves, it starts a new epoch.
func StartRV(saved uint64, cached bool) uint64 {
	if !cached || saved > math.MaxUint64-2*restartGap {
		return watchstream.InitialRV()
	}
	return saved + restartGap + rand.Uint64N(restartGap)
}

// LoadCache reads the state last saved in dir for node; false when there is
// none or it cannot be trusted, and the wrapper then serves nothing until it
// has read the cluster. The objects are the state's own (stored).
func LoadCache(dir, node string) (uint64, []runtime.Object, bool) {
	f, err := os.Open(filepath.Join(dir, cacheFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil, false
	}
	if err == nil {
		defer f.Close()
		var rv uint64
		var objects []runtime.Object
		if rv, objects, err = decodeCache(bufio.NewReaderSize(f, 64<<10), node); err == nil {
			return rv, objects, true
		}
	}
	reason := "unreadable"
	if errors.Is(err, errCacheOfAnotherNode) {
		reason = "foreign_node"
	}
	cacheRejected.WithLabelValues(reason).Inc()
	klog.ErrorS(err, "Ignoring the cached state", "dir", dir, "node", node)
	return 0, nil, false
}

// decodeCache reads a cache while checking it: nothing read is trusted
// before the checksum of the whole payload matches, and only then is the
// node compared.
func decodeCache(r *bufio.Reader, node string) (uint64, []runtime.Object, error) {
	sum, err := r.ReadString('\n')
	if err != nil {
		return 0, nil, errors.New("no checksum line")
	}
	hasher := sha256.New()
	payload := bufio.NewReader(io.TeeReader(r, hasher))
	var header cacheHeader
	line, err := payload.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &header)
	}
	var objects []*stored
	if err == nil {
		objects, err = readRecords(payload)
	}
	// The rest, so that a torn or altered file fails the check rather than
	// a decoding.
	if _, copyErr := io.Copy(io.Discard, payload); copyErr != nil {
		return 0, nil, copyErr
	}
	if hex.EncodeToString(hasher.Sum(nil)) != sum[:len(sum)-1] {
		return 0, nil, errors.New("the checksum does not match: the file is torn or was altered")
	}
	if err != nil {
		return 0, nil, fmt.Errorf("a checked cache does not decode: %w", err)
	}
	if header.Node != node {
		return 0, nil, fmt.Errorf("%w: it was saved for node %q, this is node %q", errCacheOfAnotherNode, header.Node, node)
	}
	if header.Format != cacheFormat {
		return 0, nil, fmt.Errorf("cache format %d, not %d", header.Format, cacheFormat)
	}
	out := make([]runtime.Object, 0, len(objects))
	for _, one := range objects {
		out = append(out, one)
	}
	return header.ResourceVersion, out, nil
}

// A record is: the kind's index in kinds, the resourceVersion, the length
// and bytes of the encoding, the count of parts and each part's index among
// the records before it; all numbers uvarints.
func writeRecord(w *bufio.Writer, index map[*stored]int, one *stored) error {
	var buf []byte
	buf = binary.AppendUvarint(buf, uint64(slices.Index(kinds, one.kind)))
	buf = binary.AppendUvarint(buf, one.rv)
	buf = binary.AppendUvarint(buf, uint64(len(one.data)))
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if _, err := w.Write(one.data); err != nil {
		return err
	}
	buf = binary.AppendUvarint(buf[:0], uint64(len(one.parts)))
	for _, part := range one.parts {
		i, ok := index[part]
		if !ok {
			return fmt.Errorf("%s %s/%s refers to a slice not served", one.kind.gvr.Resource, one.namespace, one.name)
		}
		buf = binary.AppendUvarint(buf, uint64(i))
	}
	_, err := w.Write(buf)
	return err
}

// readRecords decodes records until the end, checking that each decodes
// as its kind.
func readRecords(r *bufio.Reader) ([]*stored, error) {
	var out []*stored
	for {
		kindIndex, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil || kindIndex >= uint64(len(kinds)) {
			return nil, fmt.Errorf("record %d: bad kind", len(out))
		}
		one := &stored{kind: kinds[kindIndex]}
		if one.rv, err = binary.ReadUvarint(r); err != nil {
			return nil, fmt.Errorf("record %d: %w", len(out), err)
		}
		size, err := binary.ReadUvarint(r)
		if err != nil || size > 64<<20 {
			return nil, fmt.Errorf("record %d: bad size", len(out))
		}
		one.data = make([]byte, size)
		if _, err := io.ReadFull(r, one.data); err != nil {
			return nil, fmt.Errorf("record %d: %w", len(out), err)
		}
		count, err := binary.ReadUvarint(r)
		if err != nil || count > uint64(len(out)) {
			return nil, fmt.Errorf("record %d: bad parts", len(out))
		}
		for range count {
			i, err := binary.ReadUvarint(r)
			if err != nil || i >= uint64(len(out)) || out[i].kind != endpointSlices {
				return nil, fmt.Errorf("record %d: bad part", len(out))
			}
			one.parts = append(one.parts, out[i])
		}
		if err := one.restore(); err != nil {
			return nil, fmt.Errorf("record %d: %w", len(out), err)
		}
		out = append(out, one)
	}
}

// SaveCache writes node's state atomically: a complete file or the previous
// one.
func SaveCache(dir, node string, rv uint64, objects []runtime.Object) error {
	kept := make([]*stored, 0, len(objects))
	for _, obj := range objects {
		one, ok := obj.(*stored)
		if !ok {
			var err error
			if one, err = store(obj); err != nil {
				return err
			}
		}
		kept = append(kept, one)
	}
	_, err := saveStored(dir, node, rv, kept)
	return err
}

// saveStored streams objects to a temporary file through the checksum,
// writes the checksum in the room left for it at the start, syncs and
// renames: no copy of the state is made to write it. It returns the size
// written.
func saveStored(dir, node string, rv uint64, objects []*stored) (int64, error) {
	// Slices first: Endpoints refer to them. An Endpoints object whose slices
	// are not all served (none such is kept) is written whole.
	order := slices.Clone(objects)
	served := make(map[*stored]bool, len(objects))
	for _, one := range objects {
		served[one] = true
	}
	for i, one := range order {
		if slices.ContainsFunc(one.parts, func(part *stored) bool { return !served[part] }) {
			whole, err := store(one.object())
			if err != nil {
				return 0, err
			}
			whole.rv = one.rv
			order[i] = whole
		}
	}
	slices.SortStableFunc(order, func(a, b *stored) int {
		return boolOrder(a.kind != endpointSlices) - boolOrder(b.kind != endpointSlices)
	})
	var size int64
	err := replaceFile(dir, cacheFile, 0o600, func(f *os.File) (err error) {
		size, err = writeCache(f, node, rv, order)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := os.Remove(filepath.Join(dir, legacyCacheFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		klog.ErrorS(err, "Cannot remove the cache of an earlier release", "dir", dir)
	}
	return size, nil
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

func writeCache(f *os.File, node string, rv uint64, objects []*stored) (int64, error) {
	placeholder := make([]byte, 2*sha256.Size+1)
	placeholder[len(placeholder)-1] = '\n'
	if _, err := f.Write(placeholder); err != nil {
		return 0, err
	}
	hasher := sha256.New()
	counter := &countWriter{w: io.MultiWriter(f, hasher)}
	w := bufio.NewWriterSize(counter, 64<<10)
	header, err := json.Marshal(cacheHeader{Node: node, ResourceVersion: rv, Format: cacheFormat})
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(append(header, '\n')); err != nil {
		return 0, err
	}
	index := make(map[*stored]int, len(objects))
	for i, one := range objects {
		if err := writeRecord(w, index, one); err != nil {
			return 0, err
		}
		index[one] = i
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if _, err := f.WriteAt(hexSum(hasher), 0); err != nil {
		return 0, err
	}
	return int64(len(placeholder)) + counter.n, nil
}

func hexSum(h hash.Hash) []byte {
	return []byte(hex.EncodeToString(h.Sum(nil)))
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// The cache is written once the state has been quiet for cacheQuiet, and
// at least every cacheMaxStale while it keeps changing, instead of on every
// change: the cache serves a restart during a WAN outage, and during one
// nothing changes, so the state an outage starts with is saved within
// cacheQuiet. A clean shutdown saves the latest state too.
// A failed save is tried again after cacheRetryFirst, then twice as long
// each time up to cacheRetryMax.
const (
	cacheQuiet      = 2 * time.Second
	cacheMaxStale   = 30 * time.Second
	cacheRetryFirst = time.Second
	cacheRetryMax   = 5 * time.Minute
)

// KeepCached saves node's state to dir whenever it has changed, as the
// constants above say, and once more when ctx ends. It first removes the
// temporary files of saves a killed process left.
func KeepCached(ctx context.Context, state *State, dir, node string) {
	keepCached(ctx, state, dir, node, cacheQuiet, cacheMaxStale)
}

func keepCached(ctx context.Context, state *State, dir, node string, quiet, maxStale time.Duration) {
	removeStaleTemporaries(dir, cacheFile)
	// saved is the resourceVersion last saved, seen the last one read;
	// changed is when seen was first read, unsaved when the state first
	// differed from what was saved.
	var saved, seen uint64
	var changed, unsaved time.Time
	// After a failed save the next waits, longer each time: a full disk
	// would otherwise have the whole state written into it, and an error
	// logged, on every tick.
	var retryAt time.Time
	retry := cacheRetryFirst
	save := func(now time.Time) {
		// Checked before the snapshot, which sorts every object: a state
		// that never syncs would be snapshotted on every tick.
		if !state.Synced() || state.RV() == saved {
			return
		}
		rv, objects := state.storedSnapshot()
		size, err := saveStored(dir, node, rv, objects)
		if err != nil {
			cacheSaveErrors.Inc()
			klog.ErrorS(err, "Cannot save the state; a restart during an outage would start empty", "dir", dir, "retryIn", retry)
			retryAt, retry = now.Add(retry), min(2*retry, cacheRetryMax)
			return
		}
		cacheWrittenBytes.Add(float64(size))
		saved, unsaved = rv, time.Time{}
		retryAt, retry = time.Time{}, cacheRetryFirst
	}
	ticker := time.NewTicker(quiet / 4)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			save(time.Now())
			return
		case now := <-ticker.C:
			rv := state.RV()
			if rv == saved {
				continue
			}
			if unsaved.IsZero() {
				unsaved = now
			}
			if rv != seen {
				seen, changed = rv, now
			}
			if (now.Sub(changed) >= quiet || now.Sub(unsaved) >= maxStale) && !now.Before(retryAt) {
				save(now)
			}
		}
	}
}
