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
	"fmt"
	"maps"
	"net/http"
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

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

func isGone(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }

// recordingListWatch counts successful lists and keeps the 410 Gone answers
// a reflector meets, at a watch's start or as an ERROR event, so that a test
// that does not expect them can say which they were.
type recordingListWatch struct {
	mu    sync.Mutex
	lists int
	gone  []string
}

func (r *recordingListWatch) listed() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists++
}

func (r *recordingListWatch) expired(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gone = append(r.gone, time.Now().Format("15:04:05.000")+" "+err.Error())
}

func (r *recordingListWatch) counts() (lists, gone int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lists, len(r.gone)
}

func (r *recordingListWatch) goneAnswers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.gone)
}

// Restarting the gridview-apiserver a client watches ends its watch; the
// client ends equal to a fresh list, including a change made while the
// server was down. It resumes from its last resourceVersion when the replica
// it reaches answers in the replicas' one numbering: the restarted one
// forwards reads to the other, which leads, or follows it. It relists when
// it reaches the restarted replica before that knows the leader: its re-watch
// is answered 410 Gone, or, after refused connections, a list from an older
// resourceVersion is served the current state, as kube-apiserver serves a
// list that is "not older than" it.
// Package e2e's TestServiceGridsSurviveRestart covers the ServiceGrids kept in
// the embedded etcd.
func TestNodeEndpointsCurrentAfterGridviewRestart(t *testing.T) {
	// A plain list, so that ListFunc calls count the relists.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newSite(t)
	r := replicas[0]
	views := directClient(t, r).TopologyV1alpha1().NodeEndpoints(s.ns)
	rec := &recordingListWatch{}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := views.List(ctx, opts)
			if isGone(err) {
				// A relist from the last resourceVersion, after a watch
				// that failed otherwise, meets the 410 here instead.
				rec.expired(err)
			} else if err == nil {
				rec.listed()
			}
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := views.Watch(ctx, opts)
			if isGone(err) {
				rec.expired(err)
			}
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
				if ev.Type == watch.Error {
					if status, ok := ev.Object.(*metav1.Status); ok && status.Code == http.StatusGone {
						rec.expired(apierrors.FromObject(status))
					}
				}
				return ev, true
			}), nil
		},
	}
	informer := cache.NewSharedIndexInformer(lw, &topologyv1alpha1.NodeEndpoints{}, 0, cache.Indexers{})
	go informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}

	// The reflector retries at once: it may reach the new process before
	// its authenticator has loaded the client CA (a 403 for
	// system:anonymous), and then meets the 410 on its relist from the last
	// resourceVersion rather than on a watch.
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	// A change while it is down: only a relist can bring it.
	if err := s.relabel(ctx, kubeClient, "b1", "a"); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatalf("start %s again: %v", r.Name, err)
	}

	eventually(t, 60*time.Second, "the informer equal to a fresh list", func(ctx context.Context) error {
		list, err := views.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		got, want := informerAndList(informer.GetStore(), list)
		if !maps.Equal(got, want) {
			return fmt.Errorf("informer %v\nlist %v", got, want)
		}
		if want[s.gridView("b1")] == "" {
			return fmt.Errorf("no view of b1 in %v", want)
		}
		return nil
	})
	lists, gone := rec.counts()
	t.Logf("%d successful lists, %d 410 Gone answers", lists, gone)
}
