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
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/gridview/gridview/generated/clientset/versioned"
	clientsetscheme "github.com/gridview/gridview/generated/clientset/versioned/scheme"
	topologyinformers "github.com/gridview/gridview/generated/informers/externalversions"
	"github.com/gridview/gridview/pkg/controller/servicegrid"
)

const (
	// resyncPeriod bounds how long a missed event can leave a Service wrong.
	resyncPeriod             = 5 * time.Minute
	serviceGridWorkers       = 2
	serviceGridComponentName = "gridview-servicegrid-controller"
)

// serviceGridController builds the ServiceGrid controller on the server's
// clients and informers: ServiceGrids through the loopback connection,
// Services through the informer the log's writer reads them from, which the
// caller starts. It reconciles on informer events only while it leads.
func serviceGridController(cfg CompletedConfig, kube kubernetes.Interface, services coreinformers.ServiceInformer) (*servicegrid.Controller, func(*genericapiserver.GenericAPIServer) error, error) {
	gridview, err := versioned.NewForConfig(cfg.GenericConfig.LoopbackClientConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the loopback client: %w", err)
	}
	gridInformers := topologyinformers.NewSharedInformerFactory(gridview, resyncPeriod)
	broadcaster := record.NewBroadcaster()
	recorder := broadcaster.NewRecorder(clientsetscheme.Scheme, corev1.EventSource{Component: serviceGridComponentName})
	controller, err := servicegrid.NewController(kube, gridview, gridInformers.Topology().V1alpha1().ServiceGrids(),
		services, recorder)
	if err != nil {
		return nil, nil, err
	}

	install := func(server *genericapiserver.GenericAPIServer) error {
		gridInformersSynced := healthz.NewInformerSyncHealthz(gridInformers)
		if err := server.AddReadyzChecks(healthz.NamedCheck("servicegrid-informer-sync", func(r *http.Request) error {
			return gridInformersSynced.Check(r)
		})); err != nil {
			return err
		}
		return server.AddPostStartHook("start-servicegrid-controller", func(ctx genericapiserver.PostStartHookContext) error {
			broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
			gridInformers.Start(ctx.Done())
			go func() {
				defer broadcaster.Shutdown()
				_ = controller.Run(ctx, serviceGridWorkers)
			}()
			return nil
		})
	}
	return controller, install, nil
}
