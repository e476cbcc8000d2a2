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
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/gridview/gridview/pkg/viewstore"
)

const viewsComponentName = "gridview-apiserver"

// inputsResync is the resync period of the views' inputs, the generic
// server's: the ServiceGrid controller, which reads Services from them,
// reconciles every ServiceGrid that often.
const inputsResync = 10 * time.Minute

// viewInputs returns the informers of the views' inputs, trimmed as they are
// cached (viewstore.TrimInput). They are not the generic server's shared
// informers: those also serve admission policies' params, which must see
// whole objects.
func viewInputs(kube kubernetes.Interface) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(kube, inputsResync, informers.WithTransform(viewstore.TrimInput))
}

// nodeViews builds the store NodeEndpoints are served from, fed by the
// informers of inputs on Nodes, Services, EndpointSlices and Namespaces
// (their default topology rules), which its post-start hook starts, or by
// the leader's inputs while another replica leads (followLeader). Every
// replica computes its own views: nothing about them is stored.
func nodeViews(cfg CompletedConfig, kube kubernetes.Interface, inputs informers.SharedInformerFactory) (*viewstore.Store, func(*genericapiserver.GenericAPIServer) error, error) {
	viewstore.RegisterMetrics()
	store := viewstore.New(viewstore.DefaultOptions)
	broadcaster := record.NewBroadcaster()
	recorder := broadcaster.NewRecorder(kubescheme.Scheme, corev1.EventSource{Component: viewsComponentName})
	feed, err := viewstore.NewFeed(store, inputs.Core().V1().Nodes(), inputs.Core().V1().Services(),
		inputs.Discovery().V1().EndpointSlices(), inputs.Core().V1().Namespaces(), recorder)
	if err != nil {
		return nil, nil, err
	}
	observeRouting := routingObserver(cfg, store, inputs.Core().V1().Services(), recorder)

	install := func(server *genericapiserver.GenericAPIServer) error {
		server.Handler.NonGoRestfulMux.HandleFunc(inputsPath, serveInputs(feed, cfg.leadership.refusesFollower))
		numbering := &numbering{feed: feed, leadership: cfg.leadership, reads: cfg.leaderReads}
		if err := server.AddReadyzChecks(healthz.NamedCheck("nodeendpoints-views", func(*http.Request) error {
			if !store.Loaded() {
				return errors.New("the node views are not loaded yet")
			}
			return nil
		}), healthz.NamedCheck("nodeendpoints-numbering", func(*http.Request) error {
			if !numbering.settled() {
				return fmt.Errorf("this replica has not followed the leader's inputs for %s yet: a takeover now would make clients relist", followBeforeReady)
			}
			return nil
		})); err != nil {
			return err
		}
		return server.AddPostStartHook("start-nodeendpoints-views", func(ctx genericapiserver.PostStartHookContext) error {
			broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
			go func() {
				defer broadcaster.Shutdown()
				feed.Run(ctx)
			}()
			go store.Run(ctx)
			go func() {
				if wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
					return store.Loaded(), nil
				}) == nil {
					numbering.follow(ctx)
				}
			}()
			go collectWhileViewsQuiet(ctx, store.Quiet)
			if observeRouting != nil {
				go observeRouting(ctx)
			}
			go func() {
				<-ctx.Done()
				store.Close()
			}()
			return nil
		})
	}
	return store, install, nil
}
