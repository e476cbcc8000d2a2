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

// Package wrapper is the gridview-wrapper command: options and run.
package wrapper

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/pflag"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/wrapper"
)

// defaultMemoryLimit is the Go runtime's soft memory limit unless GOMEMLIMIT
// sets one: an edge-10k node's state fits well below it (docs/performance.md,
// "gridview-wrapper at edge-10k, one node"), and the limit makes the
// collector work harder rather than let the heap double, as it would by GOGC
// alone, on nodes that run the wrapper beside their workloads. A node whose state is larger than the limit is still served:
// the limit is soft, and the runtime caps the collector's share of the CPU;
// set GOMEMLIMIT above twice the state for such clusters.
const defaultMemoryLimit = 40 << 20

// Options are gridview-wrapper's flags.
type Options struct {
	Kubeconfig string
	NodeName   string
	Listen     string
	CacheDir   string
	// KubernetesEndpoint, <ip>:<port>, replaces the endpoints of
	// default/kubernetes; it wins over SuperEdge's annotations.
	KubernetesEndpoint string
	// UpstreamWatchTimeout, when set, ends upstream watches after between it
	// and twice it, for load balancers that cut long connections.
	UpstreamWatchTimeout time.Duration
	// ClientCredentialsDir holds kube-proxy's token and the certificate it
	// trusts; empty: under CacheDir (wrapper.ClientCredentialsDir).
	ClientCredentialsDir string
	Logs                 *logsapi.LoggingConfiguration

	localEndpoint *wrapper.LocalEndpoint
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{Listen: "127.0.0.1:51006", CacheDir: "/var/lib/gridview-wrapper", Logs: logsapi.NewLoggingConfiguration()}
}

// AddFlags adds the options' flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the cluster, reached through kube-apiserver; empty: the in-cluster configuration.")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "Name of the Node this wrapper serves kube-proxy for (required).")
	fs.StringVar(&o.Listen, "listen", o.Listen, "Address kube-proxy reaches the wrapper at, over TLS (see --client-credentials-dir): keep it on loopback.")
	fs.StringVar(&o.CacheDir, "cache-dir", o.CacheDir, "Directory where the last state is kept, to serve kube-proxy through WAN outages and restarts.")
	fs.StringVar(&o.KubernetesEndpoint, "kubernetes-endpoint", o.KubernetesEndpoint,
		"<ip>:<port> of an edge-local API server that replaces, for this node's kube-proxy, the endpoints of the default/kubernetes Service; "+
			"wins over the "+wrapper.AnnotationLocalEndpoint+" and "+wrapper.AnnotationLocalPort+" annotations.")
	fs.DurationVar(&o.UpstreamWatchTimeout, "upstream-watch-timeout", o.UpstreamWatchTimeout,
		"Upstream watches end after between this and twice this, and resume where they ended: set it below half the time a load balancer "+
			"on the way lets a connection live. It must exceed the time the node's first list takes. 0: client-go's 5 to 10 minutes.")
	// SuperEdge's application-grid-wrapper names, so that its DaemonSets work
	// with only the image changed.
	fs.StringVar(&o.ClientCredentialsDir, "client-credentials-dir", o.ClientCredentialsDir,
		"Directory of kube-proxy's credentials, which the wrapper writes when missing: the bearer token it accepts (token, readable by root only, "+
			"the tokenFile of kube-proxy's kubeconfig) and the certificate it serves (tls.crt, its certificate-authority). "+
			"Default: <cache-dir>/client. Every path but /healthz, /livez, /readyz and /metrics needs the token.")
	fs.StringVar(&o.NodeName, "hostname", o.NodeName, "Alias of --node-name (SuperEdge's name).")
	fs.StringVar(&o.Listen, "bind-address", o.Listen, "Alias of --listen (SuperEdge's name).")
	logsapi.AddFlags(o.Logs, fs)
}

// Validate checks the flags; errors name the flag.
func (o *Options) Validate() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name is required"))
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen %q: %w", o.Listen, err))
	}
	if o.KubernetesEndpoint != "" {
		local, err := wrapper.ParseLocalEndpoint(o.KubernetesEndpoint)
		if err != nil {
			errs = append(errs, fmt.Errorf("--kubernetes-endpoint: %w", err))
		}
		o.localEndpoint = &local
	}
	// The server takes whole seconds, and 0 seconds would mean its own
	// default, not a shorter watch.
	if o.UpstreamWatchTimeout != 0 && o.UpstreamWatchTimeout < time.Second {
		errs = append(errs, fmt.Errorf("--upstream-watch-timeout %s: want 0 (client-go's 5 to 10 minutes) or at least 1s", o.UpstreamWatchTimeout))
	}
	if err := os.MkdirAll(o.CacheDir, 0o700); err != nil {
		errs = append(errs, fmt.Errorf("--cache-dir: %w", err))
	}
	return errors.Join(errs...)
}

// ApplyLogging configures the process's logging; once per process.
func (o *Options) ApplyLogging() error {
	return logsapi.ValidateAndApply(o.Logs, loggingFeatures())
}

// loggingFeatures holds the logging feature gates only: the wrapper has no
// others.
func loggingFeatures() featuregate.FeatureGate {
	gate := featuregate.NewFeatureGate()
	utilruntime.Must(logsapi.AddFeatureGates(gate))
	return gate
}

func (o *Options) restConfig() (*rest.Config, error) {
	if o.Kubeconfig == "" {
		return rest.InClusterConfig()
	}
	return clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
}

// Run serves kube-proxy until ctx ends: from the cache at once when there is
// one, from the cluster as soon as it answers. It returns once the state
// has been saved a last time.
func (o *Options) Run(ctx context.Context) error {
	config, err := o.restConfig()
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	config.QPS, config.Burst = 20, 40
	credentialsDir := o.ClientCredentialsDir
	if credentialsDir == "" {
		credentialsDir = wrapper.ClientCredentialsDir(o.CacheDir)
	}
	credentials, err := wrapper.LoadClientCredentials(credentialsDir, wrapper.ServingHosts(o.Listen))
	if err != nil {
		return fmt.Errorf("--client-credentials-dir: %w", err)
	}
	listener, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}

	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	wrapper.RegisterMetrics()
	saved, objects, loaded := wrapper.LoadCache(o.CacheDir, o.NodeName)
	state := wrapper.NewState(wrapper.StartRV(saved, loaded), objects)
	klog.InfoS("Starting gridview-wrapper", "node", o.NodeName, "listen", o.Listen, "cachedObjects", len(objects), "clientCredentialsDir", credentialsDir)

	upstream, err := wrapper.NewUpstream(config, o.NodeName, state, o.localEndpoint)
	if err != nil {
		return err
	}
	upstream.SetWatchTimeout(o.UpstreamWatchTimeout)
	forward, err := wrapper.NewForwarder(config)
	if err != nil {
		return err
	}
	go upstream.Run(ctx)
	go state.Run(ctx)
	// The last save, when ctx ends, is awaited: the next start loads it.
	cached := make(chan struct{})
	go func() {
		defer close(cached)
		wrapper.KeepCached(ctx, state, o.CacheDir, o.NodeName)
	}()

	server := &http.Server{
		Handler:           credentials.Require(wrapper.NewServer(o.NodeName, state, forward)),
		TLSConfig:         credentials.TLSConfig(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		state.Close()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.ServeTLS(listener, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-cached
	return nil
}
