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

package inputlog

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// leadership is one term of a campaigner's lead.
type leadership struct {
	identity string
	fence    clientv3.Cmp
	// ended closes when the lead's ctx ended.
	ended chan struct{}
}

// campaigner runs Campaign as a replica would, on its own client, and
// reports each term it leads.
type campaigner struct {
	identity string
	cancel   context.CancelFunc
	done     chan struct{}
}

func TestCampaign(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// depose ends the first leader's lead, one way or another.
		depose func(t *testing.T, client *clientv3.Client, leader *campaigner)
		// overlap says whether the first leader's lead may still run when
		// the next starts: only its fence keeps it from writing then.
		overlap bool
	}{{
		name:   "leader stops",
		depose: func(t *testing.T, _ *clientv3.Client, leader *campaigner) { leader.cancel() },
	}, {
		name: "leader's lease revoked",
		depose: func(t *testing.T, client *clientv3.Client, leader *campaigner) {
			resp, err := client.Get(t.Context(), "/test/election/", clientv3.WithFirstCreate()...)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != leader.identity {
				t.Fatalf("the oldest election key is %v, not %s's", resp.Kvs, leader.identity)
			}
			if _, err := client.Revoke(t.Context(), clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
				t.Fatal(err)
			}
		},
		overlap: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			client, endpoint := startEtcd(t)
			terms := make(chan leadership, 10)
			var leading atomic.Int32
			var wg sync.WaitGroup
			start := func(identity string) *campaigner {
				ctx, cancel := context.WithCancel(t.Context())
				c := &campaigner{identity: identity, cancel: cancel, done: make(chan struct{})}
				replica := newClient(t, endpoint)
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer close(c.done)
					Campaign(ctx, replica, "/test/election/", identity, func(ctx context.Context, fence clientv3.Cmp) {
						if n := leading.Add(1); n > 1 && !tc.overlap {
							t.Errorf("%s leads with %d others", identity, n-1)
						}
						defer leading.Add(-1)
						ended := make(chan struct{})
						defer close(ended)
						terms <- leadership{identity: identity, fence: fence, ended: ended}
						<-ctx.Done()
					})
				}()
				return c
			}
			campaigners := map[string]*campaigner{"a": start("a"), "b": start("b")}
			t.Cleanup(func() {
				for _, c := range campaigners {
					c.cancel()
				}
				wg.Wait()
			})

			var first leadership
			select {
			case first = <-terms:
			case <-time.After(5 * time.Second):
				t.Fatal("no campaigner leads")
			}
			if !holds(t, client, first.fence) {
				t.Errorf("the fence of %s, the leader, fails", first.identity)
			}
			select {
			case term := <-terms:
				t.Fatalf("%s leads too while %s does", term.identity, first.identity)
			case <-time.After(300 * time.Millisecond):
			}

			deposed := time.Now()
			tc.depose(t, client, campaigners[first.identity])
			var next leadership
			select {
			case next = <-terms:
			case <-time.After(5 * time.Second):
				t.Fatalf("no campaigner leads within 5s of %s's end", first.identity)
			}
			t.Logf("%s leads %v after %s's end", next.identity, time.Since(deposed), first.identity)
			if next.identity == first.identity {
				t.Fatalf("%s leads again, though %s campaigned", first.identity, next.identity)
			}
			if holds(t, client, first.fence) {
				t.Errorf("the fence of %s, deposed, still holds", first.identity)
			}
			if !holds(t, client, next.fence) {
				t.Errorf("the fence of %s, the new leader, fails", next.identity)
			}
			// A deposed leader's lead ends: at once when it stops, within
			// the session's keep-alive when its lease is lost.
			select {
			case <-first.ended:
			case <-time.After(sessionTTL * time.Second):
				t.Errorf("the lead of %s, deposed, did not end", first.identity)
			}
		})
	}
}
