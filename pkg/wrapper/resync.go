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
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Run reads the cluster until ctx ends. Once every reflector has listed, the
// state becomes exactly the cluster's: objects that went while the wrapper
// was away or cut off are removed, and only the difference reaches kube-proxy.
func (u *Upstream) Run(ctx context.Context) {
	go u.probe(ctx)
	u.sync(ctx)
}

// sync starts the reflectors and, once they have listed, makes the state the
// cluster's.
func (u *Upstream) sync(ctx context.Context) {
	u.start(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), u.synced()...) {
		return
	}
	u.refreshLocalEndpoint()
	u.reconcile()
	u.state.MarkSynced()
	klog.InfoS("Serving the cluster's state")
}

func (u *Upstream) reconcile() {
	// Each source has applied its list, the Node and ServiceCIDRs included:
	// what is left to drop is what the cache held of the Services' slices
	// and Endpoints and the cluster no longer has.
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dropUnrendered()
}

// probe tells the upstream_connected metric whether the cluster answers.
func (u *Upstream) probe(ctx context.Context) {
	ticker := time.NewTicker(5 * time.Second)
	defer ticker.Stop()
	for {
		probeCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := u.clients.version(probeCtx)
		cancel()
		if err != nil {
			upstreamConnected.Set(0)
		} else {
			upstreamConnected.Set(1)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
