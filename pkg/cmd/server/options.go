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

// Package server holds the command line of gridview-apiserver: options that
// are completed, validated, turned into a config and run.
package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	logsapi "k8s.io/component-base/logs/api/v1"
	baseversion "k8s.io/component-base/version"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	generatedopenapi "github.com/gridview/gridview/generated/openapi"
	"github.com/gridview/gridview/pkg/apiserver"
	"github.com/gridview/gridview/pkg/embeddedetcd"
	"github.com/gridview/gridview/pkg/registry/topology/nodeendpoints"
)

const etcdPathPrefix = "/registry/topology.gridview.io"

func init() {
	// The logging flags read their feature gates from the process-wide gate.
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
}

// Options are the command-line options of gridview-apiserver.
type Options struct {
	RecommendedOptions *genericoptions.RecommendedOptions
	Logs               *logsapi.LoggingConfiguration
	// DataDir is where the embedded etcd keeps ServiceGrids when no external
	// etcd is given with --etcd-servers.
	DataDir string
	// ServingCertSecret ("<namespace>/<name>") holds the CA and serving
	// certificate gridview-apiserver manages itself; empty: it serves
	// --tls-cert-file or a self-signed certificate of --cert-dir.
	ServingCertSecret string
	// APIServiceName gets the CA of ServingCertSecret as its caBundle.
	APIServiceName string
	// RoutingMetricsInterval is how often the routing metrics are set and
	// the NoEndpointsForNodes Warnings decided; 0 turns both off.
	RoutingMetricsInterval time.Duration

	// etcdReachTimeout bounds how long start-up waits for an external etcd.
	etcdReachTimeout time.Duration
	// embeddedEtcd is set by Complete when ServiceGrids live in the embedded etcd.
	embeddedEtcd *embeddedetcd.Config
}

// NewOptions returns the default options.
func NewOptions() *Options {
	o := &Options{
		RecommendedOptions:     genericoptions.NewRecommendedOptions(etcdPathPrefix, apiserver.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion)),
		Logs:                   logsapi.NewLoggingConfiguration(),
		DataDir:                "/var/lib/gridview/etcd",
		etcdReachTimeout:       20 * time.Second,
		RoutingMetricsInterval: 30 * time.Second,
	}
	o.RecommendedOptions.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(v1alpha1.SchemeGroupVersion,
		schema.GroupKind{Group: v1alpha1.GroupName})
	return o
}

// AddFlags adds the options' flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.RecommendedOptions.AddFlags(fs)
	logsapi.AddFlags(o.Logs, fs)
	utilfeature.DefaultMutableFeatureGate.AddFlag(fs)
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Directory of the embedded etcd that stores ServiceGrids when --etcd-servers is not set. Its content survives restarts.")
	fs.DurationVar(&o.RoutingMetricsInterval, "routing-metrics-interval", o.RoutingMetricsInterval,
		"How often every Service's routes are read to set the gridview_routing_* metrics and gridview_service_nodes_without_endpoints, and to send the NoEndpointsForNodes Warnings (the leader only). Each pass reads one Service at a time. 0 turns them off.")
	o.addServingCertFlags(fs)
}

// ApplyLogging configures the process's logging; once per process.
func (o *Options) ApplyLogging() error {
	return logsapi.ValidateAndApply(o.Logs, utilfeature.DefaultFeatureGate)
}

// Complete chooses the embedded etcd when no external one is given.
func (o *Options) Complete() error {
	if len(o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList) > 0 {
		return nil
	}
	cfg, err := embeddedetcd.NewConfig(o.DataDir)
	if err != nil {
		return err
	}
	o.embeddedEtcd = cfg
	o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{cfg.ClientURL.String()}
	return nil
}

// Validate reports every invalid option at once.
func (o *Options) Validate() error {
	errs := o.RecommendedOptions.Validate()
	if o.RoutingMetricsInterval < 0 {
		errs = append(errs, fmt.Errorf("--routing-metrics-interval must not be negative (0 turns the routing metrics off), got %s", o.RoutingMetricsInterval))
	}
	errs = append(errs, o.validateServingCert()...)
	if o.embeddedEtcd != nil {
		if err := embeddedetcd.ValidateDataDir(o.DataDir); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// Config builds the server's configuration.
func (o *Options) Config() (*apiserver.Config, error) {
	// Without --tls-cert-file or a managed certificate, a self-signed one
	// that names the in-cluster Service of artifacts/deploy.
	if o.ServingCertSecret == "" {
		if err := o.RecommendedOptions.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost",
			serviceDNSNames("gridview-system"), []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
			return nil, fmt.Errorf("creating self-signed serving certificates: %w", err)
		}
	}

	cfg := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	namer := openapi.NewDefinitionNamer(apiserver.Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title = "gridview"
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title = "gridview"
	cfg.FeatureGate = utilfeature.DefaultFeatureGate
	cfg.EffectiveVersion = basecompatibility.NewEffectiveVersionFromString(baseversion.DefaultKubeBinaryVersion, "", "")

	if err := o.RecommendedOptions.ApplyTo(cfg); err != nil {
		return nil, err
	}
	if o.ServingCertSecret != "" {
		// Secure serving runs the controller and reloads what it serves.
		certs, err := o.servingCertController(cfg.ClientConfig)
		if err != nil {
			return nil, err
		}
		cfg.SecureServing.Cert = certs
	}
	// Nodes read their own views only, whatever the cluster's RBAC says;
	// everyone else is authorized by the cluster.
	authz, err := union.New(
		union.NamedAuthorizer{AuthorizerName: "gridview-node-views", Authorizer: nodeendpoints.NewNodeAuthorizer()},
		union.NamedAuthorizer{AuthorizerName: "cluster", Authorizer: cfg.Authorization.Authorizer})
	if err != nil {
		return nil, fmt.Errorf("composing the authorizers: %w", err)
	}
	cfg.Authorization.Authorizer = authz
	return &apiserver.Config{
		GenericConfig:          cfg,
		RoutingMetricsInterval: o.RoutingMetricsInterval,
	}, nil
}

// defaultGCPercent is the collector's target unless GOGC sets one. Most of
// gridview-apiserver's heap lives as long as the cluster's objects do (the
// views, their history, the informers' caches), so Go's default of 100 only
// lets the process grow to twice that before collecting. 50 keeps it at one
// and a half times, for a few percent more CPU; docs/performance.md gives the
// resident size this yields at edge-10k.
const defaultGCPercent = 50

// tuneCollector sets the collector's target to defaultGCPercent unless GOGC
// sets one.
func tuneCollector() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// Run starts the storage, then serves until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	tuneCollector()
	if o.embeddedEtcd != nil {
		etcd, err := embeddedetcd.Start(ctx, o.embeddedEtcd)
		if err != nil {
			return err
		}
		defer etcd.Close()
	} else if err := o.waitForExternalEtcd(ctx); err != nil {
		return err
	}

	cfg, err := o.Config()
	if err != nil {
		return err
	}
	if cfg.Etcd, err = newEtcdClient(o.RecommendedOptions.Etcd.StorageConfig.Transport); err != nil {
		return err
	}
	defer cfg.Etcd.Close()
	cfg.EtcdPrefix = o.RecommendedOptions.Etcd.StorageConfig.Prefix
	if cfg.Identity, err = identity(); err != nil {
		return err
	}
	generic := &cfg.GenericConfig.Config
	if generic.RESTOptionsGetter, err = guardStorage(ctx, generic.RESTOptionsGetter, o.RecommendedOptions.Etcd.StorageConfig); err != nil {
		return err
	}
	server, err := cfg.Complete().New()
	if err != nil {
		return err
	}
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// waitForExternalEtcd fails start-up when --etcd-servers cannot be reached,
// instead of serving a group whose every request would fail.
func (o *Options) waitForExternalEtcd(ctx context.Context) error {
	storage := o.RecommendedOptions.Etcd.StorageConfig
	// The check's client lives until this wait ends.
	stop := make(chan struct{})
	defer close(stop)
	ready, err := factory.CreateReadyCheck(storage, stop)
	if err != nil {
		return fmt.Errorf("connecting to etcd at %v: %w", storage.Transport.ServerList, err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.etcdReachTimeout)
	defer cancel()
	lastErr := context.DeadlineExceeded
	unreachable := func() error {
		return fmt.Errorf("cannot reach etcd at %v within %s: %w", storage.Transport.ServerList, o.etcdReachTimeout, lastErr)
	}
	for {
		// One check may block longer than the whole budget, so it runs aside.
		result := make(chan error, 1)
		go func() { result <- ready() }()
		select {
		case lastErr = <-result:
			if lastErr == nil {
				klog.InfoS("External etcd is reachable", "servers", storage.Transport.ServerList)
				return nil
			}
		case <-ctx.Done():
			return unreachable()
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return unreachable()
		}
	}
}
