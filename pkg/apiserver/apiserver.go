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

// Package apiserver assembles gridview-apiserver: the topology.gridview.io
// group served by a generic Kubernetes API server.
package apiserver

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/inputlog"
	"github.com/gridview/gridview/pkg/registry/topology/nodeendpoints"
	"github.com/gridview/gridview/pkg/registry/topology/servicegrid"
	"github.com/gridview/gridview/pkg/registry/topology/serviceroutes"
	"github.com/gridview/gridview/pkg/registry/topology/topologyreview"
	"github.com/gridview/gridview/pkg/viewstore"
)

// Config is the configuration of gridview-apiserver.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	// Etcd reaches gridview's etcd, which holds the input log every
	// replica derives its views from, and elects the replica that writes
	// it and reconciles ServiceGrids on informer events.
	Etcd *clientv3.Client
	// EtcdPrefix is gridview's prefix in etcd (--etcd-prefix).
	EtcdPrefix string
	// Identity names this replica in the election.
	Identity string
	// RoutingMetricsInterval is how often the routing metrics are set; 0:
	// never, and no NoEndpointsForNodes Events.
	RoutingMetricsInterval time.Duration
}

// CompletedConfig is a Config whose defaults are filled in.
type CompletedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	// ClientConfig reaches the cluster's kube-apiserver (--kubeconfig).
	ClientConfig           *restclient.Config
	Etcd                   *clientv3.Client
	EtcdPrefix             string
	Identity               string
	RoutingMetricsInterval time.Duration
	// leading is set while this replica leads.
	leading *atomic.Bool
	// engines tells whether this replica's engine generation serves.
	engines *inputlog.Engines
}

// Server is a running gridview-apiserver.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// Complete fills in the defaults of the generic server.
func (c *Config) Complete() CompletedConfig {
	if c.GenericConfig.BuildHandlerChainFunc == nil {
		c.GenericConfig.BuildHandlerChainFunc = genericapiserver.DefaultBuildHandlerChain
	}
	engines := inputlog.NewEngines(c.Etcd, c.EtcdPrefix, c.Identity, viewstore.EngineGeneration)
	c.GenericConfig.BuildHandlerChainFunc = buildHandlerChain(c.GenericConfig.BuildHandlerChainFunc, newListSlots(), engines)
	return CompletedConfig{
		GenericConfig:          c.GenericConfig.Complete(),
		ClientConfig:           c.GenericConfig.ClientConfig,
		Etcd:                   c.Etcd,
		EtcdPrefix:             c.EtcdPrefix,
		Identity:               c.Identity,
		RoutingMetricsInterval: c.RoutingMetricsInterval,
		leading:                &atomic.Bool{},
		engines:                engines,
	}
}

// New builds the server and installs the topology.gridview.io group.
func (c CompletedConfig) New() (*Server, error) {
	generic, err := c.GenericConfig.New("gridview-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}

	// Admission and the reconciler get clients of their own, so that a busy
	// reconciler never throttles the requests users wait on.
	admissionKube, err := kubernetes.NewForConfig(kubeClientConfig(c.ClientConfig))
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	controllerKube, err := kubernetes.NewForConfig(kubeClientConfig(c.ClientConfig))
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	registerMetrics()
	inputlog.RegisterMetrics()
	inputsKube, err := kubernetes.NewForConfig(c.ClientConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	inputs := viewInputs(inputsKube)
	logPrefix, electionPrefix := inputlog.Prefixes(c.EtcdPrefix)
	writer, err := inputlog.NewWriter(c.Etcd, logPrefix, inputs.Core().V1().Nodes(), inputs.Core().V1().Services(),
		inputs.Discovery().V1().EndpointSlices(), inputs.Core().V1().Namespaces())
	if err != nil {
		return nil, err
	}
	views, installViews, err := nodeViews(c, controllerKube, inputs.Core().V1().Services(), logPrefix)
	if err != nil {
		return nil, err
	}
	if err := installViews(generic); err != nil {
		return nil, err
	}
	controller, installController, err := serviceGridController(c, controllerKube, inputs.Core().V1().Services())
	if err != nil {
		return nil, err
	}
	if err := installController(generic); err != nil {
		return nil, err
	}
	if err := runUntilShutdown(generic, "campaign", func(ctx context.Context) {
		inputlog.Campaign(ctx, c.Etcd, electionPrefix, c.Identity, func(ctx context.Context, fence clientv3.Cmp) {
			c.leading.Store(true)
			defer c.leading.Store(false)
			lead(ctx, func(ctx context.Context) error { return writer.Lead(ctx, fence) }, controller.Lead, func(ctx context.Context) error {
				ctx, cancel := context.WithTimeout(ctx, reachCheckInterval)
				defer cancel()
				return inputsKube.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error()
			})
		})
	}); err != nil {
		return nil, err
	}
	// Every informer of inputs is requested by now: a later one would not
	// start.
	if err := generic.AddPostStartHook("start-view-inputs", func(ctx genericapiserver.PostStartHookContext) error {
		inputs.Start(ctx.Done())
		return nil
	}); err != nil {
		return nil, err
	}
	checks := &servicegrid.ClusterChecks{Scheme: Scheme, Kube: admissionKube, Authorizer: c.GenericConfig.Authorization.Authorizer}
	serviceGrids, serviceGridStatus, err := servicegrid.NewREST(Scheme, c.GenericConfig.RESTOptionsGetter, controller.Enqueue, checks)
	if err != nil {
		return nil, err
	}
	apiGroupInfo := genericapiserver.NewDefaultAPIGroupInfo(topology.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	apiGroupInfo.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"servicegrids":        serviceGrids,
		"servicegrids/status": serviceGridStatus,
		"nodeendpoints":       nodeendpoints.NewStorage(views),
		"topologyreviews":     topologyreview.NewStorage(views, c.GenericConfig.Authorization.Authorizer),
		"serviceroutes":       serviceroutes.NewStorage(views),
	}
	if err := generic.InstallAPIGroup(&apiGroupInfo); err != nil {
		return nil, err
	}
	return &Server{GenericAPIServer: generic}, nil
}

// lead runs what the leader does, the log's writer and the ServiceGrid
// controller's reconciling on informer events, until ctx ends or the writer
// stops: it was deposed, and a replica that no longer writes the log must
// not reconcile either. A leader that cannot reach kube-apiserver for
// runUntilShutdown runs run from a post-start hook named name until the
// server starts to shut down, and waits for it to return, for up to 10 s, in
// a pre-shutdown hook: before the server closes its etcd client, so that
// run hands over what it holds in etcd (a leadership, an announcement) at
// once rather than when its etcd session expires.
func runUntilShutdown(server *genericapiserver.GenericAPIServer, name string, run func(context.Context)) error {
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	if err := server.AddPostStartHook(name, func(hookCtx genericapiserver.PostStartHookContext) error {
		go func() {
			<-hookCtx.Done()
			cancel()
		}()
		go func() {
			defer close(ended)
			run(ctx)
		}()
		return nil
	}); err != nil {
		return err
	}
	return server.AddPreShutdownHook("end-"+name, func() error {
		cancel()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			klog.InfoS("Did not end within 10 s; its etcd session expires", "hook", name)
		}
		return nil
	})
}

// unreachableLimit steps down too: its informers no longer see the cluster,
// and the log it writes would hold every replica's views still, while
// another replica may reach it.
func lead(ctx context.Context, write func(context.Context) error, reconcile func(context.Context), reachable func(context.Context) error) {
	// One that cannot reach it does not take over: it would write its
	// informers' old state over the log.
	if err := reachable(ctx); err != nil {
		klog.ErrorS(err, "Not leading: kube-apiserver cannot be reached")
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reconciled := make(chan struct{})
	go func() {
		defer close(reconciled)
		reconcile(ctx)
	}()
	go func() {
		reached := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(reachCheckInterval):
			}
			if err := reachable(ctx); err == nil {
				reached = time.Now()
			} else if time.Since(reached) >= unreachableLimit {
				klog.ErrorS(err, "Stepping down: kube-apiserver cannot be reached", "for", time.Since(reached).Round(time.Second))
				cancel()
				return
			}
		}
	}()
	if err := write(ctx); err != nil && ctx.Err() == nil {
		klog.ErrorS(err, "Stopped writing gridview's input log")
	}
	cancel()
	<-reconciled
}

// How often the leader checks it reaches kube-apiserver, and how long it
// leads without.
const (
	reachCheckInterval = 5 * time.Second
	unreachableLimit   = 30 * time.Second
)

// kubeClientConfig raises client-go's default of 5 requests per second, which
// a ServiceGrid write (a dry run) and its reconcile (an apply) exhaust fast.
func kubeClientConfig(cfg *restclient.Config) *restclient.Config {
	cfg = restclient.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	return cfg
}
