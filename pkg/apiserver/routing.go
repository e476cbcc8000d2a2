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
	"context"

	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/gridview/gridview/pkg/viewstore"
)

// routingObserver returns what keeps the routing metrics and sends the
// NoEndpointsForNodes Warnings, for the post-start hook to run; nil when
// --routing-metrics-interval is 0. Every replica keeps the metrics of its
// own views; the leader alone sends the Events.
func routingObserver(cfg CompletedConfig, store viewstore.RoutesReader, services coreinformers.ServiceInformer, recorder record.EventRecorder) func(context.Context) {
	if cfg.RoutingMetricsInterval == 0 {
		return nil
	}
	observer := viewstore.NewRoutingObserver(store, services.Lister(), recorder, cfg.leading.Load)
	return func(ctx context.Context) { observer.Run(ctx, cfg.RoutingMetricsInterval) }
}
