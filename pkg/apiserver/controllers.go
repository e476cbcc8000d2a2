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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

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
// Services through the informer the views read them from, which the caller
// starts.
func serviceGridController(cfg CompletedConfig, kube kubernetes.Interface, services coreinformers.ServiceInformer, viewsLoaded func() bool) (*servicegrid.Controller, func(*genericapiserver.GenericAPIServer) error, error) {
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
		}), healthz.NamedCheck("nodeendpoints-leader", func(*http.Request) error {
			if !cfg.leadership.leaderSettled() {
				return errors.New("the replica that answers reads of NodeEndpoints, the Lease's holder, is not known yet")
			}
			return cfg.leadership.waitsForPredecessor()
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
			go func() {
				// The leader answers every replica's reads of NodeEndpoints:
				// a replica runs for the Lease once its views are loaded.
				if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
					return viewsLoaded(), nil
				}); err != nil {
					return
				}
				campaign(ctx, kube, cfg.LeaderElectionNamespace, cfg.leadership, controller.Lead)
			}()
			return nil
		})
	}
	return controller, install, nil
}

// campaign runs lead while this replica holds the Lease of the ServiceGrid
// controller, and campaigns again whenever it loses it, until ctx ends. The
// Lease's holder also serves every replica's reads of NodeEndpoints.
func campaign(ctx context.Context, kube kubernetes.Interface, namespace string, l *leadership, lead func(context.Context)) {
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Name: serviceGridComponentName,
		Lock: &patientLock{campaign: ctx, yields: l.yieldsTo, Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: serviceGridComponentName},
			Client:     kube.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: l.identity},
		}},
		LeaseDuration:   leaseDuration,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				leading.Set(1)
				// The elector runs this in a goroutine of its own and calls
				// OnStoppedLeading after cancelling ctx: one that stopped
				// leading before this ran may already have said 0.
				if ctx.Err() != nil {
					leading.Set(0)
					return
				}
				lead(ctx)
			},
			OnStoppedLeading: func() {
				leading.Set(0)
				klog.InfoS("Stopped leading the ServiceGrid controller")
			},
		},
	})
	if err != nil {
		klog.ErrorS(err, "Cannot run leader election; informer events will not be reconciled on this replica")
		return
	}
	l.electing.Store(time.Now().UnixNano())
	l.elector.Store(elector)
	for ctx.Err() == nil {
		elector.Run(ctx)
	}
}
