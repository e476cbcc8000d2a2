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

package servicegrid

import (
	"context"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	gridviewfake "github.com/gridview/gridview/generated/clientset/versioned/fake"
)

// A replica that takes the Lease back before its last term has finished
// ending, as after a kube-apiserver outage, acts on informer events in the
// new term: the old term's end does not stop it.
func TestATermStartedBeforeTheLastEndedActsOnEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestController(t, kubefake.NewClientset(), gridviewfake.NewClientset())
		defer c.queue.ShutDown()
		c.synced = nil // the informers are not started; their caches are empty
		lead := func() (end func()) {
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.Lead(ctx)
			}()
			synctest.Wait()
			return func() { cancel(); <-done }
		}
		endLast := lead()
		endNew := lead()
		defer endNew()
		endLast()

		c.enqueueObject(&v1alpha1.ServiceGrid{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "grid"}})
		if c.queue.Len() != 1 {
			t.Error("a ServiceGrid event was dropped while the replica leads")
		}
	})
}
