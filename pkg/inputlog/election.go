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
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"k8s.io/klog/v2"
)

// sessionTTL is how long a writer that stopped answering (killed, cut off
// from etcd) keeps the leadership: its etcd lease then expires.
const sessionTTL = 10

// Campaign runs lead while this replica holds the leadership of the log,
// with the fence every write of the leader carries, and campaigns again
// whenever it loses it, until ctx ends. etcd elects: the replica whose key
// under prefix is the oldest of live sessions leads, and a deposed one's
// writes fail the fence.
func Campaign(ctx context.Context, client *clientv3.Client, prefix, identity string, lead func(ctx context.Context, fence clientv3.Cmp)) {
	for ctx.Err() == nil {
		led, err := campaignOnce(ctx, client, prefix, identity, lead)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			klog.ErrorS(err, "Campaigning for the leadership of gridview's input log again")
		}
		// A lead that ends at once (the log cannot be read, say) would
		// otherwise take and hand over the leadership in a loop.
		if err != nil || led < minLead {
			pause(ctx, time.Second)
		}
	}
}

// minLead is how long a lead must last for the next campaign to start at
// once.
const minLead = 5 * time.Second

// revoke ends a session at once, deleting the keys written under its lease
// (an election key, an announcement): with the session's own Close, which
// revokes under the session's context, it would not, that context having
// ended already when a replica stops, and the keys would stay until the
// lease expires. what names the session in the log.
func revoke(ctx context.Context, client *clientv3.Client, session *concurrency.Session, what string) {
	session.Orphan()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sessionTTL*time.Second)
	defer cancel()
	if _, err := client.Revoke(ctx, session.Lease()); err != nil {
		klog.V(2).InfoS("Cannot revoke an etcd session of this replica; its lease expires", "session", what, "err", err)
	}
}

// campaignOnce campaigns, leads once elected, and returns how long it led.
func campaignOnce(ctx context.Context, client *clientv3.Client, prefix, identity string, lead func(context.Context, clientv3.Cmp)) (time.Duration, error) {
	session, err := concurrency.NewSession(client, concurrency.WithTTL(sessionTTL), concurrency.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("opening an etcd session: %w", err)
	}
	// A replica that stops hands the leadership over at once.
	defer revoke(ctx, client, session, "campaign")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-session.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	election := concurrency.NewElection(session, prefix)
	if err := election.Campaign(ctx, identity); err != nil {
		return 0, fmt.Errorf("campaigning: %w", err)
	}
	klog.InfoS("Leading gridview's input log", "identity", identity, "key", election.Key())
	leading.Set(1)
	defer leading.Set(0)
	start := time.Now()
	lead(ctx, clientv3.Compare(clientv3.CreateRevision(election.Key()), "=", election.Rev()))
	klog.InfoS("Stopped leading gridview's input log", "identity", identity)
	return time.Since(start), nil
}
