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

package apiserver

import (
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/gridview/gridview/pkg/viewstore"
)

func TestRoutingObserverFollowsTheInterval(t *testing.T) {
	tests := []struct {
		name     string
		interval time.Duration
		wantRun  bool
	}{
		{name: "off", interval: 0},
		{name: "every 30s", interval: 30 * time.Second, wantRun: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := CompletedConfig{RoutingMetricsInterval: tc.interval, leading: &atomic.Bool{}}
			services := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Core().V1().Services()
			run := routingObserver(cfg, viewstore.New(viewstore.DefaultOptions), services, record.NewFakeRecorder(1))
			if (run != nil) != tc.wantRun {
				t.Errorf("an observer to run: %v, want %v", run != nil, tc.wantRun)
			}
		})
	}
}
