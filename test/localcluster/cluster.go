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
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"k8s.io/client-go/rest"
)

// Cluster is a running local control plane. Its exported fields are set by
// Start and read-only afterwards.
type Cluster struct {
	// AdminKubeconfig is a system:masters kubeconfig for kubectl and tests;
	// AdminConfig is loaded from it.
	AdminKubeconfig string
	AdminConfig     *rest.Config
	// GridviewKubeconfig authenticates as ServiceAccount
	// gridview-system/gridview-apiserver, with exactly the deploy RBAC.
	GridviewKubeconfig string
	ServerURL          string // kube-apiserver, https://<HostIP>:<port>
	EtcdURL            string
	CACertFile         string // signs kube-apiserver's serving certificate
	// GridviewEtcdURL is gridview-apiserver's etcd with
	// Options.ExternalGridviewEtcd, on HostIP; empty otherwise.
	GridviewEtcdURL string
	// Netns is the network namespace gridview-apiserver runs in, reachable
	// at NetnsIP; HostIP is the host end of the veth pair.
	Netns   string
	HostIP  netip.Addr
	NetnsIP netip.Addr
	WorkDir string
	LogDir  string

	opts    Options
	pki     *pki
	net     *network
	applier *applier
	// gridviewBinary is gridview-apiserver, extracted from its image.
	gridviewBinary string

	stopOnce sync.Once
	stopErr  error

	// gridviewEtcdInstance is set once with Options.ExternalGridviewEtcd.
	gridviewEtcdInstance *etcdInstance
	// endpointsMu serializes syncGridviewEndpoints.
	endpointsMu sync.Mutex

	mu            sync.Mutex
	stopped       bool // refuses new processes once Stop began
	etcd          *Process
	gridviewEtcd  *Process
	kubeAPIServer *Process
	// controllerManager, scheduler and kwok run with Options.Workloads.
	controllerManager *Process
	scheduler         *Process
	kwok              *Process
	replicas          []*GridviewReplica // the cluster's own first
	wrapper           *Process           // on the host, for make run's demo
	nodes             []*NodeNetns       // not yet deleted
}

// Start brings up etcd, kube-apiserver and gridview-apiserver and returns
// once the APIService v1alpha1.topology.gridview.io is Available and its
// discovery document is served. On error everything started is torn down.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if err := Preflight(opts.BinDir, opts.Workloads); err != nil {
		return nil, err
	}
	if err := opts.createDirs(); err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts, WorkDir: opts.WorkDir, LogDir: opts.LogDir}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()
	binary, origin, err := extractGridviewBinary(gridviewImageLayout(opts.RepoRoot), filepath.Join(opts.WorkDir, "bin"))
	if err != nil {
		return nil, err
	}
	c.gridviewBinary = binary
	opts.Logf("gridview-apiserver is the binary of the image %s", origin)

	network, err := createNetwork(ctx, opts.Logf)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.net = network
	c.mu.Unlock()
	if err := network.forwardToPeers(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return nil, errors.New("local cluster stopped while starting")
	}
	c.Netns, c.HostIP, c.NetnsIP = c.net.Netns, c.net.HostIP, c.net.NsIP
	if c.pki, err = generatePKI(filepath.Join(opts.WorkDir, "pki"), c.HostIP, c.NetnsIP); err != nil {
		return nil, err
	}
	c.CACertFile = c.pki.CACert
	c.mu.Lock()
	c.replicas = []*GridviewReplica{c.newPrimaryReplica()}
	c.mu.Unlock()

	opts.Logf("starting etcd (logs in %s)", opts.LogDir)
	if err := c.startEtcd(ctx); err != nil {
		return nil, err
	}
	if opts.ExternalGridviewEtcd {
		opts.Logf("starting gridview-etcd for gridview-apiserver on %s", c.HostIP)
		if err := c.startGridviewEtcd(ctx); err != nil {
			return nil, err
		}
	}
	opts.Logf("starting kube-apiserver on %s", c.HostIP)
	if err := c.startKubeAPIServer(ctx); err != nil {
		return nil, err
	}
	opts.Logf("kube-apiserver ready at %s (admin kubeconfig %s)", c.ServerURL, c.AdminKubeconfig)
	if c.applier, err = newApplier(c.AdminConfig, fieldManager); err != nil {
		return nil, err
	}
	if opts.Workloads {
		opts.Logf("starting kube-controller-manager, kube-scheduler and kwok")
		if err := c.startWorkloads(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.prepareGridviewIdentity(ctx); err != nil {
		return nil, err
	}
	if err := c.registerGridview(ctx); err != nil {
		return nil, err
	}
	opts.Logf("starting gridview-apiserver in network namespace %s at %s", c.Netns, c.NetnsIP)
	if err := c.StartGridview(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// NetnsCommand prefixes argv so that it runs inside the cluster's network
// namespace. `ip netns exec` execs argv in place, so the pid stays the same.
func (c *Cluster) NetnsCommand(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", c.Netns}, argv...)
}

// launch starts a process and records it (keep runs under c.mu) so that a
// Stop running concurrently either sees it or prevents it from starting.
func (c *Cluster) launch(name string, argv []string, keep func(*Process)) (*Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, fmt.Errorf("starting %s: cluster is stopped", name)
	}
	proc, err := startProcess(name, c.opts.LogDir, argv)
	if err != nil {
		return nil, err
	}
	keep(proc)
	return proc, nil
}

// Stop deletes every NodeNetns left, stops every process (last started
// first), removes the network namespace and veth pair, and removes WorkDir
// unless Options.KeepWorkDir.
// It is idempotent and safe to call from t.Cleanup, defer or a signal
// handler goroutine: later and concurrent calls wait for the first one and
// return its result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	c.mu.Lock()
	c.stopped = true
	procs := []*Process{c.wrapper}
	var replicaNets []*network
	for _, r := range slices.Backward(c.replicas) {
		procs = append(procs, r.proc)
		r.proc, r.serving = nil, false
		if r.net != nil {
			replicaNets = append(replicaNets, r.net)
		}
	}
	procs = append(procs, c.kwok, c.scheduler, c.controllerManager, c.kubeAPIServer, c.gridviewEtcd, c.etcd)
	nodes := slices.Clone(c.nodes)
	c.mu.Unlock()

	var errs []error
	// Node-local processes first: they are clients of the control plane.
	for _, node := range nodes {
		errs = append(errs, node.Delete())
	}
	for _, proc := range procs {
		if proc != nil {
			errs = append(errs, proc.Stop())
		}
	}
	for _, n := range replicaNets {
		errs = append(errs, n.delete())
	}
	c.mu.Lock()
	network := c.net
	c.mu.Unlock()
	if network != nil {
		errs = append(errs, network.delete())
	}
	if !c.opts.KeepWorkDir && c.opts.WorkDir != "" {
		if err := os.RemoveAll(c.opts.WorkDir); err != nil {
			errs = append(errs, fmt.Errorf("removing work directory: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping local cluster: %w", err)
	}
	c.opts.Logf("local cluster stopped")
	return nil
}
