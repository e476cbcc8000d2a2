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
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// source reads one upstream resource through a reflector into the wrapper,
// with no informer cache: what the wrapper keeps of an object is the record
// its transform makes, encoded as served, and the decoded object is
// garbage as soon as it is read. A reflector's streaming list keeps the
// records, not the objects, until it hands them over.
type source struct {
	// record turns a decoded object into what the wrapper keeps of it; it
	// passes a record through.
	record func(obj any) (any, error)
	// put, remove and replace apply records; replace has the whole
	// collection, after a (re)list.
	put     func(record any)
	remove  func(record any)
	replace func(records []any)
	synced  atomic.Bool
	// watchTimeout, when set, ends each upstream watch after between it and
	// twice it, instead of client-go's 5 to 10 minutes:
	// ReflectorOptions.MinWatchTimeout only ever lengthens those.
	watchTimeout time.Duration
}

var _ cache.TransformingStore = &source{}

func (s *source) apply(obj any, do func(any)) error {
	record, err := s.record(obj)
	if err != nil {
		return err
	}
	do(record)
	return nil
}

func (s *source) Add(obj any) error    { return s.apply(obj, s.put) }
func (s *source) Update(obj any) error { return s.apply(obj, s.put) }
func (s *source) Delete(obj any) error { return s.apply(obj, s.remove) }
func (s *source) Resync() error        { return nil }

// Transformer makes the reflector's streaming list keep records.
func (s *source) Transformer() cache.TransformFunc { return s.record }

func (s *source) Replace(list []any, _ string) error {
	records := make([]any, 0, len(list))
	for _, obj := range list {
		record, err := s.record(obj)
		if err != nil {
			return err
		}
		records = append(records, record)
	}
	s.replace(records)
	s.synced.Store(true)
	return nil
}

// HasSynced says whether the first list has been applied.
func (s *source) HasSynced() bool { return s.synced.Load() }

// run reflects a collection into the source until ctx ends. Every list is
// counted, a streaming one too: after the first, each is the whole
// collection again over the WAN, which a re-watch that resumes avoids.
func (s *source) run(ctx context.Context, c collection) {
	lister := func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		upstreamLists.WithLabelValues(c.name).Inc()
		return c.list(ctx, opts)
	}
	watcher := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		upstreamWatches.WithLabelValues(c.name).Inc()
		if ptr.Deref(opts.SendInitialEvents, false) {
			upstreamLists.WithLabelValues(c.name).Inc()
		}
		if s.watchTimeout > 0 {
			seconds := s.watchTimeout.Seconds()
			opts.TimeoutSeconds = ptr.To(int64(seconds + rand.Float64()*seconds))
		}
		w, err := c.watch(ctx, opts)
		if apierrors.IsServiceUnavailable(err) {
			// The aggregator's answer while no gridview-apiserver replica
			// runs, or kube-apiserver's while it cannot serve: client-go
			// lists again after it, the whole collection over the WAN,
			// where after a 429 it watches again, after its backoff, from
			// where it stopped, which any replica serves once one runs.
			return nil, apierrors.NewTooManyRequests(err.Error(), 1)
		}
		return w, err
	}
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{ListWithContextFunc: lister, WatchFuncWithContext: watcher}, c.client)
	cache.NewReflectorWithOptions(lw, c.expected, s, cache.ReflectorOptions{Name: c.name}).RunWithContext(ctx)
}

// SetWatchTimeout makes every upstream watch end after between d and twice
// d, and resume from where it ended, so that no load balancer cuts it
// first; 0 keeps client-go's 5 to 10 minutes. Call it before Run.
func (u *Upstream) SetWatchTimeout(d time.Duration) {
	for _, s := range u.sources {
		s.watchTimeout = d
	}
}

// errNotRecorded is a reflector handing over something that is neither the
// resource nor a record of it.
func errNotRecorded(obj any) error {
	return fmt.Errorf("gridview-wrapper cannot record a %T", obj)
}
