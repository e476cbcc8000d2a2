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

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// nodeEndpointsPath is the resource, reached through kube-apiserver's
// aggregator as every wrapper reaches it.
const nodeEndpointsPath = "/apis/topology.gridview.io/v1alpha1/nodeendpoints"

// watchTimeout is the server-side timeout each watch asks for; the watcher
// then resumes from its last resourceVersion, as client-go's reflector does.
const watchTimeout = 10 * time.Minute

// errExpired is a 410: the resourceVersion is too old to resume from.
var errExpired = errors.New("resourceVersion expired (410)")

// expiredError is errExpired with what the server said.
func expiredError(message string) error {
	return fmt.Errorf("%w: %s", errExpired, message)
}

// client is what every watcher shares: one HTTP transport, so the watches
// multiplex over a few HTTP/2 connections.
type client struct {
	http  *http.Client
	base  string // kube-apiserver's URL
	names *names
	// namespace is the scenario's: views of other Services (kubernetes,
	// gridview-apiserver) are not the model's and are skipped.
	namespace string
	encoding  string // EncodingProtobuf or EncodingJSON
}

// get reads a resource of kube-apiserver: nodeEndpointsPath, or another.
func (c *client) get(ctx context.Context, path string, query url.Values, encoding string) (*http.Response, error) {
	return c.getAs(ctx, "", path, query, encoding)
}

// getAs is get as node reads, when not empty: impersonated by the
// harness's admin, with the identity a node's kubelet credentials carry
// (system:node:<name> in system:nodes), so that gridview-apiserver
// authorizes and queues the read as it does a wrapper's; the admin is in
// system:masters, which API Priority and Fairness exempts.
func (c *client) getAs(ctx context.Context, node, path string, query url.Values, encoding string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path+"?"+query.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if node != "" {
		req.Header.Set("Impersonate-User", "system:node:"+node)
		req.Header.Add("Impersonate-Group", "system:nodes")
		req.Header.Add("Impersonate-Group", "system:authenticated")
	}
	accept := "application/json"
	if encoding == EncodingProtobuf {
		accept = runtime.ContentTypeProtobuf
	}
	req.Header.Set("Accept", accept)
	return c.http.Do(req)
}

// events reads one watch stream.
type events interface {
	next(*wireEvent) error
}

type jsonEvents struct{ dec *json.Decoder }

func (j jsonEvents) next(ev *wireEvent) error { return j.dec.Decode(ev) }

// ours tells whether an object is a view of the scenario's Services.
func (c *client) ours(obj *wireObject) bool {
	return c.namespace == "" || obj.Metadata.Namespace == c.namespace
}

// Watcher follows one node's NodeEndpoints as a wrapper would: a list, then
// a watch from its resourceVersion with bookmarks, resumed where it ended.
// Its state is slice ID -> digest, and the sum of the entries.
type Watcher struct {
	Node  string
	Index int // the node's index in the model
	c     *client

	bytes   atomic.Int64 // response bytes read, lists and watches
	lists   atomic.Int64
	watches atomic.Int64 // watches the server accepted
	expired atomic.Int64 // 410s
	events  atomic.Int64 // added, modified and deleted views
	watched chan struct{}
	once    sync.Once

	mu      sync.Mutex
	entries map[int32]uint64
	legacy  map[string][]int32 // the old shape's object name -> its slices
	total   uint64
	// changed is when an event or a list last changed the total.
	changed time.Time
	rv      string
	probe   *probe
	lastErr error
	// lastExpired is the last 410, with what the server said.
	lastExpired error

	cancel context.CancelFunc
	done   chan struct{}
}

func newWatcher(c *client, node string, index int) *Watcher {
	return &Watcher{Node: node, Index: index, c: c, watched: make(chan struct{}), entries: map[int32]uint64{}}
}

// Start runs the watcher until Stop; it resumes from the last
// resourceVersion it saw, or lists when it has none.
func (w *Watcher) Start(ctx context.Context) {
	ctx, w.cancel = context.WithCancel(ctx)
	w.done = make(chan struct{})
	go w.run(ctx)
}

// Stop ends the watch and waits for it; the state and resourceVersion stay.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

// Watching is closed once a watch was first established.
func (w *Watcher) Watching() <-chan struct{} { return w.watched }

// Total returns the sum of the watcher's entries.
func (w *Watcher) Total() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// ResourceVersion is the last resourceVersion seen.
func (w *Watcher) ResourceVersion() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rv
}

// Entries returns a copy of the state, for a report of what differs.
func (w *Watcher) Entries() map[int32]uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[int32]uint64, len(w.entries))
	for id, d := range w.entries {
		out[id] = d
	}
	return out
}

// errNoRetry is LastError's answer before the watcher's first retry.
var errNoRetry = errors.New("no error retried yet")

// LastError is the last error the watcher retried after, errNoRetry when
// there was none.
func (w *Watcher) LastError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return cmp.Or(w.lastErr, errNoRetry)
}

func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		var err error
		if w.ResourceVersion() == "" {
			err = w.list(ctx)
		}
		if err == nil {
			err = w.watch(ctx)
		}
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errExpired):
			w.expired.Add(1)
			w.mu.Lock()
			w.rv, w.lastExpired = "", err
			w.mu.Unlock()
		case err != nil:
			w.mu.Lock()
			w.lastErr = err
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
		default:
			backoff = 100 * time.Millisecond
		}
	}
}

func (w *Watcher) selector() url.Values {
	return url.Values{"fieldSelector": {"nodeName=" + w.Node}}
}

func (w *Watcher) list(ctx context.Context) error {
	resp, err := w.c.getAs(ctx, w.Node, nodeEndpointsPath, w.selector(), w.c.encoding)
	if err != nil {
		return fmt.Errorf("listing the views of %s: %w", w.Node, err)
	}
	defer resp.Body.Close()
	body := &countingReader{r: resp.Body, n: &w.bytes}
	if resp.StatusCode != http.StatusOK {
		return statusError("listing the views of "+w.Node, resp, body)
	}
	list := &wireList{}
	if w.c.encoding == EncodingProtobuf {
		list, err = decodeProtoList(body)
	} else {
		err = json.NewDecoder(body).Decode(list)
	}
	if err != nil {
		return fmt.Errorf("decoding the views of %s: %w", w.Node, err)
	}
	w.lists.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	before := w.total
	clear(w.entries)
	w.legacy, w.total = nil, 0
	for i := range list.Items {
		if w.c.ours(&list.Items[i]) {
			w.upsert(&list.Items[i])
		}
	}
	w.stampChange(before)
	w.rv = list.Metadata.ResourceVersion
	w.observed()
	return nil
}

func (w *Watcher) watch(ctx context.Context) error {
	query := w.selector()
	query.Set("watch", "true")
	query.Set("allowWatchBookmarks", "true")
	query.Set("resourceVersion", w.ResourceVersion())
	query.Set("timeoutSeconds", fmt.Sprint(int(watchTimeout.Seconds())))
	resp, err := w.c.getAs(ctx, w.Node, nodeEndpointsPath, query, w.c.encoding)
	if err != nil {
		return fmt.Errorf("watching the views of %s: %w", w.Node, err)
	}
	defer resp.Body.Close()
	body := &countingReader{r: resp.Body, n: &w.bytes}
	if err := watchStatusError("watching the views of "+w.Node, resp, body); err != nil {
		return err
	}
	w.watches.Add(1)
	w.once.Do(func() { close(w.watched) })
	var stream events = jsonEvents{json.NewDecoder(body)}
	if w.c.encoding == EncodingProtobuf {
		stream = newProtoEvents(io.NopCloser(body))
	}
	for {
		// A fresh event each time: Decode leaves fields absent from the
		// input as they were.
		var ev wireEvent
		if err := stream.next(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading the watch of %s: %w", w.Node, err)
		}
		if err := w.apply(&ev); err != nil {
			return err
		}
	}
}

func (w *Watcher) apply(ev *wireEvent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev.Type {
	case "ADDED", "MODIFIED", "DELETED":
		w.events.Add(1)
		w.rv = ev.Object.Metadata.ResourceVersion
		if !w.c.ours(&ev.Object) {
			return nil
		}
		before := w.total
		if ev.Type == "DELETED" {
			w.remove(&ev.Object)
		} else {
			w.upsert(&ev.Object)
		}
		w.stampChange(before)
	case "BOOKMARK":
		w.rv = ev.Object.Metadata.ResourceVersion
		return nil
	case "ERROR":
		if ev.Object.Code == http.StatusGone {
			return expiredError("ERROR event: " + ev.Object.Message)
		}
		return fmt.Errorf("watch of %s: error event %d %s", w.Node, ev.Object.Code, ev.Object.Reason)
	default:
		return fmt.Errorf("watch of %s: unknown event type %q", w.Node, ev.Type)
	}
	w.observed()
	return nil
}

// stampChange records, under w.mu, when the total moved from before.
func (w *Watcher) stampChange(before uint64) {
	if w.total != before {
		w.changed = time.Now()
	}
}

// Changed is when the watcher's total last changed.
func (w *Watcher) Changed() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// upsert and remove run under w.mu.
func (w *Watcher) upsert(obj *wireObject) {
	if obj.Slice == nil && obj.Slices != nil {
		w.remove(obj)
		if w.legacy == nil {
			w.legacy = map[string][]int32{}
		}
		var ids []int32
		for i := range obj.Slices {
			if id, ok := w.set(&obj.Slices[i], obj.Topology.Mode); ok {
				ids = append(ids, id)
			}
		}
		w.legacy[obj.Metadata.Name] = ids
		return
	}
	if obj.Slice == nil {
		return
	}
	if _, ok := w.set(obj.Slice, obj.Topology.Mode); !ok {
		w.unset(w.c.names.id(obj.Slice.Name))
	}
}

func (w *Watcher) set(s *wireSlice, mode string) (int32, bool) {
	id := w.c.names.id(s.Name)
	d, ok := s.digest(mode)
	if !ok {
		return id, false
	}
	w.unset(id)
	w.entries[id] = d
	w.total += entryHash(id, d)
	return id, true
}

func (w *Watcher) remove(obj *wireObject) {
	if ids, ok := w.legacy[obj.Metadata.Name]; ok {
		for _, id := range ids {
			w.unset(id)
		}
		delete(w.legacy, obj.Metadata.Name)
	}
	if obj.Slice != nil {
		w.unset(w.c.names.id(obj.Slice.Name))
	}
}

func (w *Watcher) unset(id int32) {
	if d, ok := w.entries[id]; ok {
		w.total -= entryHash(id, d)
		delete(w.entries, id)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// statusError is a response other than 200 to what the request did.
func statusError(what string, resp *http.Response, body io.Reader) error {
	text, _ := io.ReadAll(io.LimitReader(body, 512))
	return fmt.Errorf("%s: %s: %s", what, resp.Status, text)
}

// watchStatusError is a watch's response other than 200: errExpired for a
// 410, which the watcher answers with a list, else a statusError.
func watchStatusError(what string, resp *http.Response, body io.Reader) error {
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusGone:
		data, _ := io.ReadAll(io.LimitReader(body, 4096))
		return expiredError("HTTP 410: " + statusMessage(data))
	}
	return statusError(what, resp, body)
}
