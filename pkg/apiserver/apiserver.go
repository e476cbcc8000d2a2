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
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/registry/topology/nodeendpoints"
	"github.com/gridview/gridview/pkg/registry/topology/servicegrid"
	"github.com/gridview/gridview/pkg/registry/topology/serviceroutes"
	"github.com/gridview/gridview/pkg/registry/topology/topologyreview"
)

// Config is the configuration of gridview-apiserver.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	// LeaderElectionNamespace holds the Lease that picks the replica that
	// reconciles on informer events and serves every replica's reads of
	// NodeEndpoints.
	LeaderElectionNamespace string
	// AdvertiseAddress (host:port) is where the other replicas reach this one.
	AdvertiseAddress string
	// RoutingMetricsInterval is how often the routing metrics are set; 0:
	// never, and no NoEndpointsForNodes Events.
	RoutingMetricsInterval time.Duration
}

// CompletedConfig is a Config whose defaults are filled in.
type CompletedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	// ClientConfig reaches the cluster's kube-apiserver (--kubeconfig).
	ClientConfig            *restclient.Config
	LeaderElectionNamespace string
	RoutingMetricsInterval  time.Duration
	leadership              *leadership
	leaderReads             *leaderReads
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
	// A follower reads the leader's inputs for as long as it follows.
	longRunning := c.GenericConfig.LongRunningFunc
	c.GenericConfig.LongRunningFunc = func(req *http.Request, info *request.RequestInfo) bool {
		return req.URL.Path == inputsPath || longRunning != nil && longRunning(req, info)
	}
	leadership := newLeadership(c.AdvertiseAddress)
	reads := newLeaderReads(leadership)
	c.GenericConfig.BuildHandlerChainFunc = buildHandlerChain(c.GenericConfig.BuildHandlerChainFunc, reads, newListSlots())
	return CompletedConfig{
		GenericConfig:           c.GenericConfig.Complete(),
		ClientConfig:            c.GenericConfig.ClientConfig,
		LeaderElectionNamespace: c.LeaderElectionNamespace,
		RoutingMetricsInterval:  c.RoutingMetricsInterval,
		leadership:              leadership,
		leaderReads:             reads,
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
	dynamicKube, err := dynamic.NewForConfig(c.ClientConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	registerMetrics()
	c.leaderReads.trust.Store(newPeerTrust(c.ClientConfig, dynamicKube))
	inputsKube, err := kubernetes.NewForConfig(c.ClientConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	inputs := viewInputs(inputsKube)
	views, installViews, err := nodeViews(c, controllerKube, inputs)
	if err != nil {
		return nil, err
	}
	c.leaderReads.servesWatch = views.ServesWatch
	if err := installViews(generic); err != nil {
		return nil, err
	}
	controller, installController, err := serviceGridController(c, controllerKube, inputs.Core().V1().Services(), views.Loaded)
	if err != nil {
		return nil, err
	}
	if err := installController(generic); err != nil {
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

// kubeClientConfig raises client-go's default of 5 requests per second, which
// a ServiceGrid write (a dry run) and its reconcile (an apply) exhaust fast.
func kubeClientConfig(cfg *restclient.Config) *restclient.Config {
	cfg = restclient.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	return cfg
}
