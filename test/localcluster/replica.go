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

package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

// endpointUpdateTimeout bounds one update of the Service's endpoints.
const endpointUpdateTimeout = 30 * time.Second

// GridviewReplica is one gridview-apiserver process slot: the cluster's own
// (in Cluster.Netns) or one added by AddGridviewReplica, each in a network
// namespace of its own on the same port, so that all of them are endpoints
// of the one Service behind the APIService, as the Pods of a Deployment are.
// A replica is an endpoint of that Service while it runs and has passed its
// own /readyz, as the endpoints controller would make it.
type GridviewReplica struct {
	// Name is the process name; its log is <LogDir>/<Name>.log.
	Name    string
	LogFile string
	// Netns is the replica's network namespace and IP its address there.
	Netns string
	IP    netip.Addr

	cluster  *Cluster
	net      *network // nil for the cluster's own namespace, which Stop deletes
	certFile string
	keyFile  string
	dataDir  string // the embedded etcd's, without Options.ExternalGridviewEtcd

	// managedCert runs the replica with the serving certificate it manages
	// itself (UseManagedServingCert); managedCA is the caBundle that
	// verified it. Guarded by cluster.mu.
	managedCert bool
	managedCA   []byte

	// Guarded by cluster.mu.
	proc    *Process
	serving bool // an endpoint of the Service
	binary  string
}

// UseBinary makes the replica's next starts run binary, another build of
// gridview-apiserver, as a rolling update to another version would; "" goes
// back to the cluster's.
func (r *GridviewReplica) UseBinary(binary string) {
	r.cluster.mu.Lock()
	defer r.cluster.mu.Unlock()
	r.binary = binary
}

// GridviewReplicas returns every replica, the cluster's own first.
func (c *Cluster) GridviewReplicas() []*GridviewReplica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*GridviewReplica(nil), c.replicas...)
}

// AddGridviewReplica starts one more gridview-apiserver in a new network
// namespace, on the same external etcd, and returns once it is an endpoint
// of the APIService's Service and the group is served. It needs
// Options.ExternalGridviewEtcd: embedded etcds would be separate stores.
// Cluster.Stop stops it and deletes its namespace.
func (c *Cluster) AddGridviewReplica(ctx context.Context) (*GridviewReplica, error) {
	if c.gridviewEtcdInstance == nil {
		return nil, errors.New("replicas share an external etcd: start the cluster with Options.ExternalGridviewEtcd")
	}
	network, err := createNetwork(ctx, c.opts.Logf)
	if err != nil {
		return nil, fmt.Errorf("creating a network namespace for a gridview-apiserver replica: %w", err)
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, errors.Join(errors.New("local cluster is stopped"), network.delete())
	}
	name := "gridview-apiserver-" + strconv.Itoa(len(c.replicas))
	r := &GridviewReplica{
		Name: name, LogFile: filepath.Join(c.opts.LogDir, name+".log"),
		Netns: network.Netns, IP: network.NsIP, cluster: c, net: network,
		certFile: filepath.Join(c.opts.WorkDir, "pki", name+".crt"),
		keyFile:  filepath.Join(c.opts.WorkDir, "pki", name+".key"),
	}
	c.replicas = append(c.replicas, r)
	c.mu.Unlock()
	if err := network.forwardToPeers(); err != nil {
		return nil, err
	}
	// The aggregator verifies every endpoint as the Service's DNS name; the
	// IP SAN is for direct clients (Config).
	if err := c.pki.gridviewCA.issue(gridviewSANs(r.IP), r.certFile, r.keyFile); err != nil {
		return nil, fmt.Errorf("issuing the serving certificate of %s: %w", name, err)
	}
	c.opts.Logf("starting %s in network namespace %s at %s", name, r.Netns, r.IP)
	if err := r.Start(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Start starts the replica and waits until it is an endpoint of the
// APIService's Service and kube-apiserver serves the group. If it does not
// get there, the process is stopped again.
func (r *GridviewReplica) Start(ctx context.Context) error {
	c := r.cluster
	c.mu.Lock()
	running, managed, binary := r.proc != nil, r.managedCert, r.binary
	c.mu.Unlock()
	if binary == "" {
		binary = c.gridviewBinary
	}
	if running {
		return fmt.Errorf("%s is already running: stop it first", r.Name)
	}
	argv := []string{"ip", "netns", "exec", r.Netns, binary,
		"--bind-address", r.IP.String(),
		"--secure-port", strconv.Itoa(gridviewPort),
		"--kubeconfig", c.GridviewKubeconfig,
		"--authentication-kubeconfig", c.GridviewKubeconfig,
		"--authorization-kubeconfig", c.GridviewKubeconfig,
		"--routing-metrics-interval", c.opts.RoutingMetricsInterval.String(),
		"-v=2",
	}
	if c.gridviewEtcdInstance != nil {
		argv = append(argv, "--etcd-servers", c.GridviewEtcdURL)
	} else {
		argv = append(argv, "--data-dir", r.dataDir)
	}
	wait := c.waitGridviewServing
	if managed {
		argv, wait = append(argv, managedArgs()...), c.waitManagedServing
	} else {
		argv = append(argv, "--tls-cert-file", r.certFile, "--tls-private-key-file", r.keyFile)
	}
	argv = append(argv, c.opts.GridviewArgs...)
	proc, err := c.launch(r.Name, argv, func(p *Process) { r.proc = p })
	if err != nil {
		return err
	}
	if err := wait(ctx, r, proc); err != nil {
		return errors.Join(err, r.Stop())
	}
	c.opts.Logf("%s (pid %d) serves %s through %s", r.Name, proc.Pid(), gridviewGroupVersion, c.ServerURL)
	return nil
}

// Stop takes the replica out of the Service's endpoints, then stops it
// (SIGTERM, then SIGKILL after a grace period) and waits until it has
// exited, as Kubernetes does with a terminating Pod. Its data is kept.
func (r *GridviewReplica) Stop() error {
	return r.end(false)
}

// Kill crashes the replica (SIGKILL: no Lease released, no connection
// drained), then takes it out of the Service's endpoints, as the endpoints
// controller does once the Pod's readiness probe fails.
func (r *GridviewReplica) Kill() error {
	return r.end(true)
}

func (r *GridviewReplica) end(kill bool) error {
	c := r.cluster
	c.mu.Lock()
	proc := r.proc
	r.proc = nil
	wasServing := r.serving
	r.serving = false
	c.mu.Unlock()
	if proc == nil {
		return nil
	}
	var errs []error
	if wasServing && !kill {
		errs = append(errs, c.syncGridviewEndpoints())
	}
	if kill {
		errs = append(errs, proc.Kill())
	} else {
		errs = append(errs, proc.Stop())
	}
	if wasServing && kill {
		errs = append(errs, c.syncGridviewEndpoints())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping %s: %w", r.Name, err)
	}
	return nil
}

// Running reports whether the replica's process was started and not
// stopped by the harness.
func (r *GridviewReplica) Running() bool {
	r.cluster.mu.Lock()
	defer r.cluster.mu.Unlock()
	return r.proc != nil
}

// Config is a client config that talks to this replica directly, bypassing
// the aggregator, with the admin's credentials.
func (r *GridviewReplica) Config() *rest.Config {
	cfg := rest.CopyConfig(r.cluster.AdminConfig)
	cfg.Host = "https://" + net.JoinHostPort(r.IP.String(), strconv.Itoa(gridviewPort))
	cfg.CAFile = r.cluster.pki.GridviewCACert
	cfg.CAData = nil
	cfg.ServerName = ""
	r.cluster.mu.Lock()
	defer r.cluster.mu.Unlock()
	if r.managedCA != nil {
		// The managed certificate names the Service only.
		cfg.CAFile, cfg.CAData = "", r.managedCA
		cfg.ServerName = GridviewServiceDNSName
	}
	return cfg
}

// servingAddresses lists the replicas that are endpoints of the Service.
func (c *Cluster) servingAddresses() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ips []string
	for _, r := range c.replicas {
		if r.serving {
			ips = append(ips, r.IP.String())
		}
	}
	return ips
}
