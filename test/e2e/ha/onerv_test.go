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
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/localcluster"
)

// haDuration reads a duration from the environment: make test runs short,
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

// An informer following its node through the aggregator, which picks a
// replica per request, lists once and never again through churn and
// watches that time out: the replica that does not lead serves the
// re-watches it holds the history of itself, numbered as the leader numbers
// them, and sends the rest of its reads to the leader, so a resourceVersion
// means the same whichever replica the aggregator picked and a re-watch
// resumes where the last ended. It ends equal to a fresh list.
func TestInformersFollowTheirNodeAcrossReplicas(t *testing.T) {
	churn := haDuration(t, "GRIDVIEW_HA_CHURN", 20*time.Second)
	watchTimeout := haDuration(t, "GRIDVIEW_HA_WATCH_TIMEOUT", 3*time.Second)
	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := newSite(t)
			leader := settledLeader(t)
			defer leader.check(t)
			servedBefore, localBefore := leaderReads(t, "follower"), leaderReads(t, "local")
			views := gridview.TopologyV1alpha1().NodeEndpoints(s.ns)
			own := "nodeName=" + s.node("a1")
			rec := &recordingListWatch{}
			watches := 0 // started, whether they succeed or not
			lw := &cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
					opts.FieldSelector = own
					list, err := views.List(ctx, opts)
					if isGone(err) {
						rec.expired(err)
					} else if err == nil {
						rec.listed()
					}
					return list, err
				},
				WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
					opts.FieldSelector = own
					// Short watches, so that the aggregator sends many
					// re-watches to either replica.
					opts.TimeoutSeconds = ptr.To(int64(watchTimeout.Seconds()))
					rec.mu.Lock()
					watches++
					rec.mu.Unlock()
					w, err := views.Watch(ctx, opts)
					if isGone(err) {
						rec.expired(err)
					}
					if err != nil {
						return nil, err
					}
					// A streaming list is a list.
					if ptr.Deref(opts.SendInitialEvents, false) {
						rec.listed()
					}
					return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
						if ev.Type == watch.Error {
							if err := apierrors.FromObject(ev.Object); isGone(err) {
								rec.expired(err)
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

			changes, churned := s.churnThroughTheFollower(ctx, t, churn, servedBefore)

			if lists, gone := rec.counts(); lists != 1 || gone != 0 {
				t.Errorf("after the churn: %d lists and %d 410 Gone answers, want the first list only: %q", lists, gone, rec.goneAnswers())
			}
			eventually(t, 20*time.Second, "the informer equal to a fresh list", func(ctx context.Context) error {
				list, err := views.List(ctx, metav1.ListOptions{FieldSelector: own})
				if err != nil {
					return err
				}
				got, want := informerAndList(informer.GetStore(), list)
				if !maps.Equal(got, want) {
					return fmt.Errorf("informer %v\nlist %v", got, want)
				}
				return nil
			})
			served := followerServed(t, servedBefore, localBefore)
			lists, gone := rec.counts()
			rec.mu.Lock()
			t.Logf("%d changes in %s, watches timing out after %s: %d watches (%v served by the follower), %d lists, %d 410 Gone answers",
				changes, churned.Round(time.Second), watchTimeout, watches, served, lists, gone)
			if watches < 3 {
				t.Errorf("%d watches started: the informer hardly re-watched, the test proves little", watches)
			}
			rec.mu.Unlock()
			if lists != 1 || gone != 0 {
				t.Errorf("%d lists and %d 410 Gone answers, want the first list only: %q", lists, gone, rec.goneAnswers())
			}
		})
	}
}

// settledLeader waits until one replica leads and the other sends its reads
// there. A test that counts relists must not start while the Lease moves,
// after a kube-apiserver restart for one: the leader that lost it serves
// reads until it sees the new holder, and a resourceVersion one leader
// issued means nothing to the next.
func settledLeader(t *testing.T) steadyLeader {
	t.Helper()
	var steady steadyLeader
	start, tries := time.Now(), 0
	eventually(t, 60*time.Second, "one replica leading, the other sending its reads there", func(ctx context.Context) error {
		tries++
		changes, err := leadershipChanges()
		if err != nil {
			return err
		}
		leaders, err := leading()
		if err != nil {
			return err
		}
		if len(leaders) != 1 {
			return fmt.Errorf("replicas leading: %v", names(leaders))
		}
		for _, r := range replicas {
			if r == leaders[0] || !r.Running() {
				continue
			}
			// Ready once it follows the leader's inputs: a replica that
			// loads the leader's state ends the watches of its own views.
			if body, err := directClient(t, r).Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
				return fmt.Errorf("%s not ready: %w: %s", r.Name, err, body)
			}
			before := leaderReads(t, "leader")
			if _, err := directClient(t, r).TopologyV1alpha1().NodeEndpoints(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				return err
			}
			if leaderReads(t, "leader") == before {
				return fmt.Errorf("%s served a read itself while %s leads", r.Name, leaders[0].Name)
			}
		}
		// A new leader logs that it leads once its caches synced, while
		// it already holds the Lease.
		if after, err := leadershipChanges(); err != nil || after != changes {
			return fmt.Errorf("a replica started or stopped leading while the test looked (%v)", err)
		}
		steady = steadyLeader{replica: leaders[0], changes: changes}
		return nil
	})
	if tries > 1 {
		t.Logf("waited %s for %s to lead alone and receive the other replica's reads", time.Since(start).Round(100*time.Millisecond), steady.replica.Name)
	}
	return steady
}

// steadyLeader is the replica that led when a test started, and how many
// times a replica had started or stopped leading by then.
type steadyLeader struct {
	replica *localcluster.GridviewReplica
	changes int
}

// check fails a test whose relists a change of leader since it started
// would explain, even one that ended with the same leader.
func (l steadyLeader) check(t *testing.T) {
	t.Helper()
	changes, err := leadershipChanges()
	if err != nil {
		t.Errorf("reading the replicas' logs: %v", err)
		return
	}
	if changes != l.changes {
		leaders, _ := leading()
		t.Errorf("the Lease moved during the test: replicas started or stopped leading %d times; %s led at the start, %v now",
			changes-l.changes, l.replica.Name, names(leaders))
	}
}

// churnThroughTheFollower churns for d, and on while the replica that does
// not lead served no re-watch itself, in steps of d/4 until 4d have passed:
// the aggregator picks a replica per request, and the follower serves only
// re-watches from a resourceVersion it has reached, so a few re-watches may
// all have gone to the leader (gridview-wrapper's ten of 40 s did once), and
// the test would prove little. It returns the changes made and how long it
// churned.
func (s site) churnThroughTheFollower(ctx context.Context, t *testing.T, d time.Duration, servedBefore float64) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	changes := s.churn(ctx, t, 0, d)
	for leaderReads(t, "follower") == servedBefore && time.Since(start) < 4*d {
		changes = s.churn(ctx, t, changes, d/4)
	}
	return changes, time.Since(start)
}

// leaderReads sums the reads the replicas that did not lead sent to the
// leader ("leader"), served themselves as its follower ("follower") or
// served themselves because it did not answer ("local").
func leaderReads(t *testing.T, servedBy string) float64 {
	t.Helper()
	sum := 0.0
	for _, r := range replicas {
		value, err := metric(context.Background(), r, `gridview_apiserver_leader_reads_total{served_by="`+servedBy+`"}`)
		if err != nil && !errors.Is(err, localcluster.ErrNoSample) {
			t.Fatal(err)
		}
		sum += value
	}
	return sum
}

// followerServed returns how many re-watches the replica that does not lead
// served itself since servedBefore, and fails the test when it served none
// (the aggregator picked the leader every time, or the follower sent them
// all on: the test proves little) or served a read because the leader did
// not answer.
func followerServed(t *testing.T, servedBefore, localBefore float64) float64 {
	t.Helper()
	served := leaderReads(t, "follower") - servedBefore
	if served == 0 {
		t.Errorf("the replica that does not lead served no re-watch itself: the test proves little")
	}
	if local := leaderReads(t, "local") - localBefore; local != 0 {
		t.Errorf("%v reads were served by a replica that does not lead because the leader did not answer", local)
	}
	return served
}

// A node's read that reaches the replica that does not lead is authorized
// there, by the node authorizer too, before it goes on to the leader as the
// replica's own identity, which may read every view: another node's views
// stay refused.
func TestAFollowerAuthorizesANodeBeforeItForwards(t *testing.T) {
	ctx := context.Background()
	s := newSite(t)
	leader := settledLeader(t)
	defer leader.check(t)
	var follower *localcluster.GridviewReplica
	for _, r := range replicas {
		if r.Running() && r != leader.replica {
			follower = r
		}
	}
	if follower == nil {
		t.Fatalf("no running replica but %s, the leader", leader.replica.Name)
	}
	cfg := follower.Config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + s.node("a1"), Groups: []string{"system:nodes", "system:authenticated"}}
	asNode, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	views := asNode.TopologyV1alpha1().NodeEndpoints(s.ns)

	forwarded := leaderReads(t, "leader")
	eventually(t, 20*time.Second, "a1 listing its own views on the follower", func(ctx context.Context) error {
		own, err := views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.node("a1")})
		if err == nil && len(own.Items) == 0 {
			err = errors.New("no view yet")
		}
		return err
	})
	if leaderReads(t, "leader") == forwarded {
		t.Errorf("%s served a1's list itself: it does not lead, it should have forwarded it", follower.Name)
	}
	_, err = views.List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.node("a2")})
	if !apierrors.IsForbidden(err) {
		t.Errorf("a1 listing a2's views on %s: %v, want 403", follower.Name, err)
	}
	_, err = views.Get(ctx, topology.Name(s.node("a2"), "grid-x"), metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("a1 getting a2's view on %s: %v, want 403", follower.Name, err)
	}
}

// churn changes the site until d has passed and returns how many changes
// were made, counting from made: a2 moves between the units (a1's view of
// grid changes), grid's slice changes, and grid's labels.
func (s site) churn(ctx context.Context, t *testing.T, made int, d time.Duration) int {
	t.Helper()
	changes := made
	for start := time.Now(); time.Since(start) < d; changes++ {
		switch changes % 3 {
		case 0:
			if err := s.relabel(ctx, kubeClient, "a2", []string{"b", "a"}[changes/3%2]); err != nil {
				t.Fatal(err)
			}
		case 1:
			s.writeSlice(t, map[string]string{"10.1.0.1": "a1", fmt.Sprintf("10.1.%d.2", changes%250): "a2", "10.1.0.3": "b1"})
		default:
			patch := fmt.Sprintf(`{"metadata":{"labels":{"round":"%d"}}}`, changes)
			if _, err := kubeClient.CoreV1().Services(s.ns).Patch(ctx, "grid", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return changes
}
