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

package ha

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	topologyclient "github.com/gridview/gridview/generated/clientset/versioned/typed/topology/v1alpha1"
	"github.com/gridview/gridview/test/localcluster"
)

// haDuration reads a duration from the environment: make test-all runs short,
// the full run sets 10m of churn and 30s watch timeouts.
func haDuration(t *testing.T, name string, fallback time.Duration) time.Duration {
	t.Helper()
	value := os.Getenv(name)
	if value == "" {
		return fallback
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, value, err)
	}
	return d
}

func isGone(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }

// nodeFollower is an informer of one node's views, as a node agent's. It
// counts its lists (plain or streaming) with the resourceVersion each asked
// for, its watches, and the 410 Gone answers and other errors its lists and
// watches met, which also make a reflector list again (a watch stream cut
// mid-way, as the aggregator cuts those of a replica that dies, does), so
// that a relist can be told from a 410's, and one from scratch from one
// that resumes from the client's resourceVersion.
type nodeFollower struct {
	node      string
	watchList bool
	informer  cache.SharedIndexInformer

	mu sync.Mutex
	// listedFrom holds the resourceVersion each list asked for.
	listedFrom     []string
	watches        int
	streamingLists int
	gone           []string
	otherErrors    []string
	// shortWatches holds when a watch ended within a second with no event:
	// client-go lists again after such a watch.
	shortWatches []time.Time
	// unexplained counts the lists after the first that followed no
	// error: nothing the informer met made it list again.
	unexplained, errorsSinceList int
	// contents holds each view's content by name and resourceVersion, as
	// lists and events gave it; clashes, a second content under one.
	contents map[string]string
	clashes  []string
}

func (f *nodeFollower) String() string {
	return fmt.Sprintf("informer of %s (WatchListClient=%v)", f.node, f.watchList)
}

// counts returns how many lists the informer made and how many 410 Gone
// answers it met.
func (f *nodeFollower) counts() (lists, gone int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.listedFrom), len(f.gone)
}

// watchesStarted is how many watches the informer started, whether they
// succeeded or not.
func (f *nodeFollower) watchesStarted() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watches
}

// fromScratch returns the lists after the first that asked for no
// resourceVersion of the informer's: a client that lost its place.
func (f *nodeFollower) fromScratch() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, rv := range f.listedFrom {
		if i > 0 && (rv == "" || rv == "0") {
			out = append(out, fmt.Sprintf("list %d from %q", i+1, rv))
		}
	}
	return out
}

// unexplainedLists counts the lists after the first that no error the
// informer met preceded.
func (f *nodeFollower) unexplainedLists() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unexplained
}

// summary is what the informer met, for the test's log.
func (f *nodeFollower) summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var short []string
	for _, at := range f.shortWatches {
		short = append(short, at.Format("15:04:05.000"))
	}
	return fmt.Sprintf("%d watches, %d lists (%d streaming) from resourceVersions %q, %d 410 Gone answers %q, other errors %q, watches ended within a second with no event at %v",
		f.watches, len(f.listedFrom), f.streamingLists, f.listedFrom, len(f.gone), f.gone, f.otherErrors, short)
}

// shortWatch records a watch that ended within a second with no event.
func (f *nodeFollower) shortWatch() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errorsSinceList++
	f.shortWatches = append(f.shortWatches, time.Now())
}

func (f *nodeFollower) listed(rv string, streaming bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.listedFrom) > 0 && f.errorsSinceList == 0 {
		f.unexplained++
	}
	f.errorsSinceList = 0
	f.listedFrom = append(f.listedFrom, rv)
	if streaming {
		f.streamingLists++
	}
}

// saw records the content of a view a list or an event gave.
func (f *nodeFollower) saw(view *topologyv1alpha1.NodeEndpoints) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key, got := view.Name+"@"+view.ResourceVersion, content(view)
	if before, ok := f.contents[key]; ok && before != got {
		f.clashes = append(f.clashes, fmt.Sprintf("%s: %q, then %q", key, before, got))
	}
	f.contents[key] = got
}

// oneContentPerResourceVersion fails the test if any two contents of a view,
// as any of the followers got them, share a resourceVersion.
func oneContentPerResourceVersion(t *testing.T, followers ...*nodeFollower) {
	t.Helper()
	seen, by := map[string]string{}, map[string]*nodeFollower{}
	for _, f := range followers {
		f.mu.Lock()
		for _, clash := range f.clashes {
			t.Errorf("%s got two contents under one resourceVersion: %s", f, clash)
		}
		for key, got := range f.contents {
			if before, ok := seen[key]; ok && before != got {
				t.Errorf("two contents under one resourceVersion: %s got %q, %s %q", by[key], before, f, got)
			}
			seen[key], by[key] = got, f
		}
		f.mu.Unlock()
	}
}

func (f *nodeFollower) failed(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errorsSinceList++
	at := time.Now().Format("15:04:05.000") + " " + err.Error()
	if isGone(err) {
		f.gone = append(f.gone, at)
	} else {
		f.otherErrors = append(f.otherErrors, at)
	}
}

// followNode starts an informer of node's views through views, with
// client-go's WatchListClient gate as watchList, and waits until it synced.
// Its watches time out after watchTimeout, so that it re-watches often.
func followNode(ctx context.Context, t *testing.T, views topologyclient.NodeEndpointsInterface, node string, watchList bool, watchTimeout time.Duration) *nodeFollower {
	t.Helper()
	// A reflector reads the gate once, when the informer creates it: the
	// gate may change for the next informer once this one synced.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
	f := &nodeFollower{node: node, watchList: watchList, contents: map[string]string{}}
	own := "nodeName=" + node
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = own
			list, err := views.List(ctx, opts)
			f.failed(err)
			if err == nil {
				f.listed(opts.ResourceVersion, false)
				for i := range list.Items {
					f.saw(&list.Items[i])
				}
			}
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = own
			opts.TimeoutSeconds = ptr.To(int64(watchTimeout.Seconds()))
			f.mu.Lock()
			f.watches++
			f.mu.Unlock()
			w, err := views.Watch(ctx, opts)
			f.failed(err)
			if err != nil {
				return nil, err
			}
			// A streaming list is a list.
			if ptr.Deref(opts.SendInitialEvents, false) {
				f.listed(opts.ResourceVersion, true)
			}
			return f.observe(w), nil
		},
	}
	f.informer = cache.NewSharedIndexInformer(lw, &topologyv1alpha1.NodeEndpoints{}, 0, cache.Indexers{})
	go f.informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), f.informer.HasSynced) {
		t.Fatalf("the %s did not sync", f)
	}
	f.mu.Lock()
	streamed := f.streamingLists > 0
	f.mu.Unlock()
	if streamed != watchList {
		t.Fatalf("the %s synced from a streaming list: %v: it does not test what it says (%s)", f, streamed, f.summary())
	}
	return f
}

// followSite starts the clients the HA tests follow through churn: one
// node each, so that every client's views change with it (a2 moves between
// the units, which changes a1's view of grid and b1's, and a2's own):
// informers of a1, with streaming lists, and of b1, without, and
// gridview-wrapper for a2, which takes client-go's WatchListClient gate from
// the environment, as the test leaves it.
func followSite(ctx context.Context, t *testing.T, s site, views topologyclient.NodeEndpointsInterface, watchTimeout time.Duration) ([]*nodeFollower, hostWrapper) {
	t.Helper()
	followers := []*nodeFollower{
		followNode(ctx, t, views, s.Node("a1"), true, watchTimeout),
		followNode(ctx, t, views, s.Node("b1"), false, watchTimeout),
	}
	return followers, startHostWrapper(t, s.Node("a2"), "--upstream-watch-timeout", watchTimeout.String())
}

// listedOnlyAfterErrors fails the test unless f met no 410 Gone and listed,
// after its first list, only after an error or a short watch, and from its
// own resourceVersion: what TestClientsFollowTheirNodeAcrossALeaderChange
// allows across the crash of the leader.
func (f *nodeFollower) listedOnlyAfterErrors(t *testing.T, when string) {
	t.Helper()
	if _, gone := f.counts(); gone != 0 {
		t.Errorf("%s met 410 Gone %s: %s", f, when, f.summary())
	}
	if scratch := f.fromScratch(); len(scratch) > 0 {
		t.Errorf("%s listed from scratch %s: %v (%s)", f, when, scratch, f.summary())
	}
	if n := f.unexplainedLists(); n > 0 {
		t.Errorf("%s listed %d times again with no error before, %s: %s", f, n, when, f.summary())
	}
}

// observe passes a watch's events on, recording its ERROR events, and
// whether it ended, not stopped by its client, within a second with no
// event, as client-go's reflector tells "very short watch", after which it
// lists again.
func (f *nodeFollower) observe(source watch.Interface) watch.Interface {
	w := &observedWatch{source: source, result: make(chan watch.Event), stop: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(w.result)
		events := 0
		for ev := range source.ResultChan() {
			events++
			if ev.Type == watch.Error {
				f.failed(apierrors.FromObject(ev.Object))
			} else if view, ok := ev.Object.(*topologyv1alpha1.NodeEndpoints); ok && ev.Type != watch.Bookmark {
				f.saw(view)
			}
			select {
			case w.result <- ev:
			case <-w.stop:
				return
			}
		}
		select {
		case <-w.stop:
		default:
			if events == 0 && time.Since(start) < time.Second {
				f.shortWatch()
			}
		}
	}()
	return w
}

type observedWatch struct {
	source watch.Interface
	result chan watch.Event
	stop   chan struct{}
	once   sync.Once
}

func (w *observedWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.source.Stop()
}

func (w *observedWatch) ResultChan() <-chan watch.Event { return w.result }

// listedOnceAcrossStops fails the test unless f listed once, at its start,
// or listed again only after a watch that ended within a second with no
// event right after the test stopped a replica (within shutdownRace of a
// time in stops), and then from its own resourceVersion; and met no 410
// Gone and no other error. A replica that stops leaves the Service's
// endpoints, then ends its watches at once: a client's re-watch that
// kube-apiserver still sends it ends at once too, and client-go lists
// again after such a "very short watch", whatever the resourceVersion.
func (f *nodeFollower) listedOnceAcrossStops(t *testing.T, when string, stops []time.Time) {
	t.Helper()
	lists, gone := f.counts()
	f.mu.Lock()
	short, others := slices.Clone(f.shortWatches), len(f.otherErrors)
	f.mu.Unlock()
	if gone != 0 || others != 0 {
		t.Errorf("%s %s met 410 Gone or other errors: %s", f, when, f.summary())
	}
	if scratch := f.fromScratch(); len(scratch) > 0 {
		t.Errorf("%s %s listed from scratch: %v (%s)", f, when, scratch, f.summary())
	}
	if n := f.unexplainedLists(); n > 0 {
		t.Errorf("%s %s listed %d times again with no error or short watch before: %s", f, when, n, f.summary())
	}
	for _, at := range short {
		if !slices.ContainsFunc(stops, func(stop time.Time) bool { return !at.Before(stop) && at.Sub(stop) < shutdownRace }) {
			t.Errorf("%s %s: a watch ended within a second with no event at %s, apart from any replica's stop: %s",
				f, when, at.Format("15:04:05.000"), f.summary())
		}
	}
	if lists > 1 {
		t.Logf("%s %s listed %d times: again, from its resourceVersion, after a watch a stopping replica ended at once (shutdown race, reported): %s",
			f, when, lists, f.summary())
	}
}

// shutdownRace bounds how long after a replica's stop a client's
// re-watch may still reach it.
const shutdownRace = 2 * time.Second

// listedOnce fails the test unless f listed once, at its start, and met no
// 410 Gone.
func (f *nodeFollower) listedOnce(t *testing.T, when string) {
	t.Helper()
	if lists, gone := f.counts(); lists != 1 || gone != 0 {
		t.Errorf("%s %s: %d lists and %d 410 Gone answers, want the first list only (%s)", f, when, lists, gone, f.summary())
	}
}

// equalsList waits until f holds what a fresh list of its node's views
// through views holds, and there is one at least.
func (f *nodeFollower) equalsList(t *testing.T, views topologyclient.NodeEndpointsInterface) {
	t.Helper()
	localcluster.Eventually(t, 20*time.Second, f.String()+" equal to a fresh list", func(ctx context.Context) error {
		list, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + f.node})
		if err != nil {
			return err
		}
		got, want := informerAndList(f.informer.GetStore(), list)
		if len(want) == 0 {
			return fmt.Errorf("%s has no view: the comparison would prove nothing", f.node)
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("informer %v\nlist %v", got, want)
		}
		return nil
	})
}

// resumeWatch watches node's views from resourceVersion rv until the first
// event, as a reflector's re-watch does, and returns the 410 Gone or other
// error it met there.
func resumeWatch(ctx context.Context, views topologyclient.NodeEndpointsInterface, node, rv string) error {
	_, err := watchFrom(ctx, views, node, rv, func(*topologyv1alpha1.NodeEndpoints) bool { return true })
	return err
}

// watchFrom watches node's views from resourceVersion rv, as a reflector's
// re-watch does, until an event of a view that until accepts, and returns
// the views of the events it saw up to there, or the 410 Gone or other
// error it met first. It waits 20 s at most.
func watchFrom(ctx context.Context, views topologyclient.NodeEndpointsInterface, node, rv string, until func(*topologyv1alpha1.NodeEndpoints) bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	w, err := views.Watch(ctx, metav1.ListOptions{
		FieldSelector: "nodeName=" + node, ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](20)})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var seen []string
	for {
		select {
		case ev, ok := <-w.ResultChan():
			switch {
			case !ok:
				return seen, fmt.Errorf("the watch ended after events %q", seen)
			case ev.Type == watch.Error:
				return seen, apierrors.FromObject(ev.Object)
			case ev.Type == watch.Bookmark:
				continue
			}
			view, isView := ev.Object.(*topologyv1alpha1.NodeEndpoints)
			if !isView {
				return seen, fmt.Errorf("a %s event of %T", ev.Type, ev.Object)
			}
			seen = append(seen, fmt.Sprintf("%s %s %v", ev.Type, view.Name, addresses(view)))
			if until(view) {
				return seen, nil
			}
		case <-ctx.Done():
			return seen, errors.New("no such event within 20 s, events seen " + fmt.Sprintf("%q", seen))
		}
	}
}

// gridViewIs accepts node's view of grid with exactly these addresses.
func (s site) gridViewIs(node string, want ...string) func(*topologyv1alpha1.NodeEndpoints) bool {
	return func(view *topologyv1alpha1.NodeEndpoints) bool {
		return view.Name == s.gridView(node) && slices.Equal(addresses(view), want)
	}
}
