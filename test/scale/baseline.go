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
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
)

// The baseline is the same ingest without gridview: each watcher follows
// every EndpointSlice straight from kube-apiserver, as vanilla kube-proxy
// does, so that the time gridview's views take to be current can be read
// against what the same control plane and harness take without them.

// endpointSlicesPath is every EndpointSlice, and kubeProxySelector those
// kube-proxy watches: not a headless Service's nor one another proxy serves.
const (
	endpointSlicesPath = "/apis/discovery.k8s.io/v1/endpointslices"
	kubeProxySelector  = "!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name"
)

var kubeProtobuf, _ = runtime.SerializerInfoForMediaType(kubescheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)

// Baseline is what the baseline measured.
type Baseline struct {
	Scenario  string
	Objects   int
	WriteTime time.Duration
	Current   time.Duration // from the last write until every watcher held every slice
	Stale     int           // watchers without every slice at the timeout
	// CPU-s from the first write until current (or the timeout), of
	// kube-apiserver and of the harness (writes, and decoding every watch).
	KubeCPU, HarnessCPU time.Duration
	// Per watcher, on average: events and bytes read.
	Events, Bytes int64
}

// Markdown renders the baseline for the log and docs/performance.md.
func (b *Baseline) Markdown() string {
	var out strings.Builder
	fmt.Fprintf(&out, "%s\n\n| what | measured |\n| --- | --- |\n", b.Scenario)
	fmt.Fprintf(&out, "| all objects written through kube-apiserver | %s (%d objects) |\n", ms(b.WriteTime), b.Objects)
	fmt.Fprintf(&out, "| every watcher holds every EndpointSlice, after the last write | %s; CPU-s from the first write: kube-apiserver %.1f, the harness's watchers and writers %.1f |\n",
		currentText(b.Current, b.Stale), b.KubeCPU.Seconds(), b.HarnessCPU.Seconds())
	fmt.Fprintf(&out, "| read by each watcher | %d events, %.1f MB |\n", b.Events, float64(b.Bytes)/1e6)
	return out.String()
}

// RunBaseline stops gridview-apiserver, starts as many EndpointSlice
// watchers as there are node watchers, writes the scenario and waits until
// every watcher holds every slice of it.
func (h *Harness) RunBaseline(ctx context.Context) (*Baseline, error) {
	if err := h.cluster.StopGridview(); err != nil {
		return nil, fmt.Errorf("stopping gridview-apiserver: %w", err)
	}
	b := &Baseline{Scenario: fmt.Sprintf("%s (seed %d) without gridview: %d watchers of every EndpointSlice straight from kube-apiserver, as kube-proxy, reading protobuf",
		h.cfg.Scale.Name, h.cfg.Seed, len(h.watchers))}
	h.logf("%s", b.Scenario)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchers := make([]*sliceWatcher, len(h.watchers))
	for i := range watchers {
		watchers[i] = &sliceWatcher{c: h.c, namespace: h.m.Namespace, watching: make(chan struct{})}
		go watchers[i].run(ctx)
	}
	// As the node watchers are before the gridview run writes.
	if err := awaitWatches(ctx, watchers, func(w *sliceWatcher) <-chan struct{} { return w.watching }, func(w *sliceWatcher) error {
		return fmt.Errorf("a watch of EndpointSlices not established within %s: %v", establishTimeout, w.lastErr.Load())
	}); err != nil {
		return nil, err
	}
	phases, err := h.scenarioJobs(ctx)
	if err != nil {
		return nil, err
	}
	others0, start := h.otherCPU(), time.Now()
	for _, phase := range phases {
		if err := runJobs(ctx, phase); err != nil {
			return nil, fmt.Errorf("writing the scenario: %w", err)
		}
		b.Objects += len(phase)
	}
	lastWrite := time.Now()
	b.WriteTime = lastWrite.Sub(start)
	h.logf("wrote %d objects in %s; waiting for every watcher to hold every EndpointSlice", b.Objects, ms(b.WriteTime))
	want, timeout := int64(h.m.SliceCount()), lastWrite.Add(h.cfg.CurrentTimeout)
	for {
		var stale *sliceWatcher
		b.Stale = 0
		for _, w := range watchers {
			if w.slices.Load() != want {
				b.Stale++
				stale = w
			}
		}
		if b.Stale == 0 {
			b.Current = time.Since(lastWrite)
			break
		}
		if time.Now().After(timeout) || ctx.Err() != nil {
			h.logf("%d watchers without every EndpointSlice; one holds %d of %d, its last error: %v", b.Stale, stale.slices.Load(), want, stale.lastErr.Load())
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	others := h.otherCPU()
	b.KubeCPU, b.HarnessCPU = others[0]-others0[0], others[1]-others0[1]
	for _, w := range watchers {
		b.Events += w.events.Load()
		b.Bytes += w.bytes.Load()
	}
	b.Events /= int64(len(watchers))
	b.Bytes /= int64(len(watchers))
	return b, nil
}

// sliceWatcher watches every EndpointSlice and counts the scenario's:
// the ingest only creates them, each once, and a watch resumed from the last
// resourceVersion sends none again.
type sliceWatcher struct {
	c         *client
	namespace string
	rv        string
	slices    atomic.Int64
	events    atomic.Int64
	bytes     atomic.Int64
	lastErr   atomic.Value // string
	// watching is closed once the first watch was accepted.
	watching chan struct{}
	once     sync.Once
}

// run watches from the current state, an ADDED event for each slice there
// is, and resumes from the last resourceVersion; after a 410 it stops, its
// count short, and the baseline fails.
func (w *sliceWatcher) run(ctx context.Context) {
	for ctx.Err() == nil {
		err := w.watch(ctx)
		if err == nil || ctx.Err() != nil {
			continue
		}
		w.lastErr.Store(err.Error())
		if errors.Is(err, errExpired) {
			return
		}
		time.Sleep(time.Second)
	}
}

func (w *sliceWatcher) watch(ctx context.Context) error {
	query := url.Values{"labelSelector": {kubeProxySelector}, "watch": {"true"}, "resourceVersion": {w.rv},
		"timeoutSeconds": {fmt.Sprint(int(watchTimeout.Seconds()))}}
	resp, err := w.c.get(ctx, endpointSlicesPath, query, EncodingProtobuf)
	if err != nil {
		return fmt.Errorf("watching EndpointSlices: %w", err)
	}
	defer resp.Body.Close()
	body := &countingReader{r: resp.Body, n: &w.bytes}
	if err := watchStatusError("watching EndpointSlices", resp, body); err != nil {
		return err
	}
	w.once.Do(func() { close(w.watching) })
	frames := protoFrames(kubeProtobuf, io.NopCloser(body))
	for {
		typ, obj, err := nextEvent(frames, kubeProtobuf)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the watch of EndpointSlices: %w", err)
		}
		if status, ok := obj.(*metav1.Status); ok && status.Code == http.StatusGone {
			return expiredError("ERROR event: " + status.Message)
		}
		slice, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok {
			return fmt.Errorf("a %s event holds a %T", typ, obj)
		}
		w.events.Add(1)
		w.rv = slice.ResourceVersion
		if typ == "ADDED" && slice.Namespace == w.namespace {
			w.slices.Add(1)
		}
	}
}
