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
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// NodeNetns is a network namespace standing in for one node: kube-proxy and
// node-local servers (such as gridview-wrapper) run inside it and reach each
// other on its 127.0.0.1. Its default route leads to the host, so the
// host's own addresses (kube-apiserver's HostIP among them) are reachable;
// other namespaces' addresses are not, as the host does not forward. A new
// namespace has no listener but kube-proxy's 127.0.0.1:10249 and :10256 once
// it runs, so a node-local server may take any other fixed port. Delete it
// when done; Cluster.Stop deletes whatever is left.
type NodeNetns struct {
	// NodeName names the Node the namespace stands for.
	NodeName string
	// Netns is the namespace's name, for `ip netns exec`.
	Netns string
	// IP is the namespace's end of its veth pair: the node's address, e.g.
	// for SetNodeInternalIP. HostIP is the host's end.
	IP     netip.Addr
	HostIP netip.Addr

	cluster *Cluster
	net     *network

	mu      sync.Mutex
	deleted bool // refuses new processes once Delete began
	procs   []*Process

	deleteOnce sync.Once
	deleteErr  error
}

// NewNodeNetns creates a network namespace of its own for node nodeName,
// joined to the host by a veth pair with a free /30. The Node object is not
// created: that is the caller's business.
func (c *Cluster) NewNodeNetns(ctx context.Context, nodeName string) (*NodeNetns, error) {
	network, err := createNetwork(ctx, c.opts.Logf)
	if err != nil {
		return nil, fmt.Errorf("creating the network namespace of node %s: %w", nodeName, err)
	}
	n := &NodeNetns{
		NodeName: nodeName, Netns: network.Netns, IP: network.NsIP, HostIP: network.HostIP,
		cluster: c, net: network,
	}
	c.mu.Lock()
	stopped := c.stopped
	if !stopped {
		c.nodes = append(c.nodes, n)
	}
	c.mu.Unlock()
	if stopped {
		return nil, errors.Join(errors.New("local cluster is stopped"), network.delete())
	}
	c.opts.Logf("node %s: network namespace %s at %s", nodeName, n.Netns, n.IP)
	return n, nil
}

// Command prefixes argv so that it runs inside the namespace. `ip netns
// exec` execs argv in place, so the pid stays the same.
func (n *NodeNetns) Command(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", n.Netns}, argv...)
}

// Run runs argv inside the namespace to completion and returns its
// standard output; a failure carries standard error.
func (n *NodeNetns) Run(ctx context.Context, argv ...string) (string, error) {
	full := n.Command(argv...)
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s in %s: %w: %s", strings.Join(argv, " "), n.Netns, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Start runs argv inside the namespace in the background, with its output
// in <LogDir>/<name>-<node>.log. Delete stops it; stop it earlier with
// Process.Stop.
func (n *NodeNetns) Start(name string, argv ...string) (*Process, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.deleted {
		return nil, fmt.Errorf("starting %s: the network namespace of node %s is deleted", name, n.NodeName)
	}
	proc, err := startProcess(name+"-"+n.NodeName, n.cluster.opts.LogDir, n.Command(argv...))
	if err != nil {
		return nil, err
	}
	n.procs = append(n.procs, proc)
	return proc, nil
}

// NftRuleset returns `nft list ruleset` as seen inside the namespace.
func (n *NodeNetns) NftRuleset(ctx context.Context) (string, error) {
	return n.Run(ctx, "nft", "list", "ruleset")
}

// Delete stops the namespace's processes (last started first), then
// removes the namespace and its veth pair. It is idempotent; later and
// concurrent calls return the first call's result.
func (n *NodeNetns) Delete() error {
	n.deleteOnce.Do(func() { n.deleteErr = n.delete() })
	return n.deleteErr
}

func (n *NodeNetns) delete() error {
	n.mu.Lock()
	n.deleted = true
	procs := slices.Clone(n.procs)
	n.mu.Unlock()
	slices.Reverse(procs)

	var errs []error
	for _, proc := range procs {
		errs = append(errs, proc.Stop())
	}
	errs = append(errs, n.net.delete())

	c := n.cluster
	c.mu.Lock()
	c.nodes = slices.DeleteFunc(c.nodes, func(other *NodeNetns) bool { return other == n })
	c.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting the network namespace of node %s: %w", n.NodeName, err)
	}
	return nil
}
