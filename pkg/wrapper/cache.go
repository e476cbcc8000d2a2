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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
)

// The cache is one file: the SHA-256 of the payload in hex, a newline, and
// the payload. A torn or altered file fails the check and is never served.
const cacheFile = "state.json"

// The payload names the node whose view it holds: a cache directory kept
// across a change of --node-name, or written by a wrapper that did not name
// its node, holds another node's Services and endpoints, which kube-proxy
// must not program.
type cachePayload struct {
	Node            string                 `json:"node"`
	ResourceVersion uint64                 `json:"resourceVersion"`
	Objects         []runtime.RawExtension `json:"objects"`
}

var errCacheOfAnotherNode = errors.New("the cache holds another node's state")

var cacheCodecs = serializer.NewCodecFactory(scheme.Scheme)

// LoadCache reads the state last saved in dir for node; false when there is
// none or it cannot be trusted, and the wrapper then serves nothing until it
// has read the cluster.
func LoadCache(dir, node string) (uint64, []runtime.Object, bool) {
	data, err := os.ReadFile(filepath.Join(dir, cacheFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil, false
	}
	if err == nil {
		var rv uint64
		var objects []runtime.Object
		if rv, objects, err = decodeCache(data, node); err == nil {
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

func decodeCache(data []byte, node string) (uint64, []runtime.Object, error) {
	sum, payload, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return 0, nil, errors.New("no checksum line")
	}
	want := sha256.Sum256(payload)
	if hex.EncodeToString(want[:]) != string(sum) {
		return 0, nil, errors.New("the checksum does not match: the file is torn or was altered")
	}
	var decoded cachePayload
	if err := json.Unmarshal(payload, &decoded); err != nil {
		return 0, nil, err
	}
	if decoded.Node != node {
		return 0, nil, fmt.Errorf("%w: it was saved for node %q, this is node %q", errCacheOfAnotherNode, decoded.Node, node)
	}
	objects := make([]runtime.Object, 0, len(decoded.Objects))
	for _, raw := range decoded.Objects {
		obj, _, err := cacheCodecs.UniversalDeserializer().Decode(raw.Raw, nil, nil)
		if err != nil {
			return 0, nil, err
		}
		objects = append(objects, obj)
	}
	return decoded.ResourceVersion, objects, nil
}

// SaveCache writes node's state atomically: a complete file or the previous
// one.
func SaveCache(dir, node string, rv uint64, objects []runtime.Object) error {
	payload := cachePayload{Node: node, ResourceVersion: rv}
	for _, obj := range objects {
		gv := kindOf(obj).gvr.GroupVersion()
		data, err := runtime.Encode(cacheCodecs.LegacyCodec(gv), obj)
		if err != nil {
			return err
		}
		payload.Objects = append(payload.Objects, runtime.RawExtension{Raw: data})
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	tmp, err := os.CreateTemp(dir, cacheFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = fmt.Fprintf(tmp, "%s\n%s", hex.EncodeToString(sum[:]), data)
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, cacheFile))
}

// KeepCached saves node's state to dir whenever it has changed, at most every
// interval, and once more when ctx ends.
func KeepCached(ctx context.Context, state *State, dir, node string, interval time.Duration) {
	var saved uint64
	save := func() {
		rv, objects := state.Snapshot()
		if rv == saved || !state.Synced() {
			return
		}
		if err := SaveCache(dir, node, rv, objects); err != nil {
			klog.ErrorS(err, "Cannot save the state; a restart during an outage would start empty", "dir", dir)
			return
		}
		saved = rv
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			save()
			return
		case <-ticker.C:
			save()
		}
	}
}
