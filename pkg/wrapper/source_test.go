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
	"errors"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

// A source counts every list it starts, failed and streaming ones included,
// but not the re-watches that resume where a watch ended, which it counts
// as watches, and asks for the watch timeout it was given.
func TestSourceCountsListsAndShortensWatches(t *testing.T) {
	RegisterMetrics()
	for _, tc := range []struct {
		name         string
		watchList    bool
		failedLists  int
		watchTimeout time.Duration
		// lists is what upstream_lists_total counts until the second watch;
		// timeouts bound every watch's timeoutSeconds.
		lists                  float64
		minTimeout, maxTimeout int64
	}{
		{name: "a list, then watches of client-go's length", lists: 1, minTimeout: 300, maxTimeout: 600},
		{name: "a list, then shortened watches", watchTimeout: 3 * time.Second, lists: 1, minTimeout: 3, maxTimeout: 6},
		{name: "failed lists count", failedLists: 2, watchTimeout: 30 * time.Second, lists: 3, minTimeout: 30, maxTimeout: 60},
		{name: "a streaming list, then shortened watches", watchList: true, watchTimeout: 3 * time.Second, lists: 1, minTimeout: 3, maxTimeout: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, tc.watchList)
			resource := "test-" + t.Name()
			counter, watchCounter := upstreamLists.WithLabelValues(resource), upstreamWatches.WithLabelValues(resource)
			before, err := testutil.GetCounterMetricValue(counter)
			if err != nil {
				t.Fatal(err)
			}
			watchesBefore, err := testutil.GetCounterMetricValue(watchCounter)
			if err != nil {
				t.Fatal(err)
			}
			var failures atomic.Int32
			watches := make(chan metav1.ListOptions, 10)
			c := collection{
				name: resource, expected: &topologyv1alpha1.NodeEndpoints{},
				list: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
					if int(failures.Add(1)) <= tc.failedLists {
						return nil, errors.New("upstream unreachable")
					}
					return &topologyv1alpha1.NodeEndpointsList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}, nil
				},
				watch: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
					watches <- opts
					return endedWatch(opts), nil
				},
			}
			s := &source{
				record: func(obj any) (any, error) { return obj, nil },
				put:    func(any) {}, remove: func(any) {}, replace: func([]any) {},
				watchTimeout: tc.watchTimeout,
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go s.run(ctx, c)
			for i := range 2 {
				select {
				case opts := <-watches:
					if got := ptr.Deref(opts.TimeoutSeconds, 0); got < tc.minTimeout || got > tc.maxTimeout {
						t.Errorf("watch %d: timeoutSeconds %d, want %d to %d", i, got, tc.minTimeout, tc.maxTimeout)
					}
					if streaming := ptr.Deref(opts.SendInitialEvents, false); streaming != (tc.watchList && i == 0) {
						t.Errorf("watch %d: sendInitialEvents %v with WatchListClient=%v", i, streaming, tc.watchList)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%d watches started", i)
				}
			}
			after, err := testutil.GetCounterMetricValue(counter)
			if err != nil {
				t.Fatal(err)
			}
			if after-before != tc.lists {
				t.Errorf("%v lists counted, want %v", after-before, tc.lists)
			}
			if watchesAfter, _ := testutil.GetCounterMetricValue(watchCounter); watchesAfter-watchesBefore < 2 {
				t.Errorf("%v watches counted, want the 2 started at least", watchesAfter-watchesBefore)
			}
		})
	}
}

// endedWatch is a watch the server ended, as at its timeout, after a
// bookmark: a watch that ends at once with nothing is taken for a broken
// one and relisted. A streaming list's first ends its initial events.
func endedWatch(opts metav1.ListOptions) watch.Interface {
	w := watch.NewFakeWithChanSize(2, false)
	bookmark := func(annotations map[string]string) {
		w.Action(watch.Bookmark, &topologyv1alpha1.NodeEndpoints{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7", Annotations: annotations}})
	}
	if ptr.Deref(opts.SendInitialEvents, false) {
		bookmark(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	bookmark(nil)
	w.Stop()
	return w
}

// A watch refused with 503, the aggregator's answer while no replica of
// gridview-apiserver runs, starts again from where the last one ended, after
// client-go's backoff, with no list.
func TestSourceWatchesAgainAfterServiceUnavailable(t *testing.T) {
	RegisterMetrics()
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	resource := "test-" + t.Name()
	counter := upstreamLists.WithLabelValues(resource)
	before, err := testutil.GetCounterMetricValue(counter)
	if err != nil {
		t.Fatal(err)
	}
	var started atomic.Int32
	watches := make(chan metav1.ListOptions, 10)
	c := collection{
		name: resource, expected: &topologyv1alpha1.NodeEndpoints{},
		list: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &topologyv1alpha1.NodeEndpointsList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}, nil
		},
		watch: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if n := started.Add(1); n == 2 || n == 3 {
				return nil, apierrors.NewServiceUnavailable(`the server is currently unable to handle the request (get nodeendpoints.topology.gridview.io)`)
			}
			watches <- opts
			return endedWatch(opts), nil
		},
	}
	s := &source{record: func(obj any) (any, error) { return obj, nil }, put: func(any) {}, remove: func(any) {}, replace: func([]any) {}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.run(ctx, c)
	for i := range 2 {
		select {
		case opts := <-watches:
			if opts.ResourceVersion != "7" {
				t.Errorf("watch %d from resourceVersion %q, want 7, where the list ended", i, opts.ResourceVersion)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%d watches served, %d started", i, started.Load())
		}
	}
	after, err := testutil.GetCounterMetricValue(counter)
	if err != nil {
		t.Fatal(err)
	}
	if after-before != 1 || started.Load() < 4 {
		t.Errorf("%v lists and %d watches started, want 1 list and two watches refused before the second served", after-before, started.Load())
	}
}
