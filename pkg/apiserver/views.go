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
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/gridview/gridview/pkg/inputlog"
	"github.com/gridview/gridview/pkg/viewstore"
)

const viewsComponentName = "gridview-apiserver"

// inputsResync is the resync period of the views' inputs, the generic
// server's: the ServiceGrid controller, which reads Services from them,
// reconciles every ServiceGrid that often.
const inputsResync = 10 * time.Minute

// viewInputs returns the informers of the views' inputs, trimmed as they are
// cached (inputlog.TrimInput). They are not the generic server's shared
// informers: those also serve admission policies' params, which must see
// whole objects.
func viewInputs(kube kubernetes.Interface) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(kube, inputsResync, informers.WithTransform(inputlog.TrimInput))
}

// nodeViews builds the store NodeEndpoints are served from, fed by
// gridview's input log, which its post-start hook reads. Every replica
// derives its own views from the log: nothing about them is stored, and no
// replica talks to another.
func nodeViews(cfg CompletedConfig, kube kubernetes.Interface, services coreinformers.ServiceInformer, logPrefix string) (*viewstore.Store, func(*genericapiserver.GenericAPIServer) error, error) {
	viewstore.RegisterMetrics()
	store := viewstore.New(viewstore.DefaultOptions)
	broadcaster := record.NewBroadcaster()
	recorder := broadcaster.NewRecorder(kubescheme.Scheme, corev1.EventSource{Component: viewsComponentName})
	var reader *inputlog.Reader
	// The leader reports what the log's changes say of the inputs, once
	// they are news: not while it reads the revisions a start replays.
	feed := viewstore.NewFeed(store, recorder, func(int64) bool { return cfg.leading.Load() && reader.Current() })
	reader = inputlog.NewReader(cfg.Etcd, logPrefix, feed)
	store.SetLog(reader)
	observeRouting := routingObserver(cfg, store, services, recorder)

	install := func(server *genericapiserver.GenericAPIServer) error {
		if err := server.AddReadyzChecks(healthz.NamedCheck("nodeendpoints-views", func(*http.Request) error {
			if !reader.Current() {
				return errors.New("the node views have not read gridview's input log up to its latest write yet")
			}
			if err := supersededError(cfg.engines); err != nil {
				return err
			}
			return nil
		})); err != nil {
			return err
		}
		// A replica announces its engine generation only while its views
		// are current, and ends its watches once superseded.
		if err := runUntilShutdown(server, "announce-engine-generation", func(ctx context.Context) {
			cfg.engines.Run(ctx, reader.Current, store.EndWatches)
		}); err != nil {
			return err
		}
		return server.AddPostStartHook("start-nodeendpoints-views", func(ctx genericapiserver.PostStartHookContext) error {
			broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
			go func() {
				defer broadcaster.Shutdown()
				reader.Run(ctx)
			}()
			go store.Run(ctx)
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
