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
	"os/exec"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// kubeProxyArgs are the flags every kube-proxy of the harness runs with,
// besides node name and kubeconfig: each keeps kube-proxy from dying in a
// network namespace or from touching the host.
var kubeProxyArgs = []string{
	"--proxy-mode", "nftables",
	// By default kube-proxy raises nf_conntrack_max to 32768 per core (at
	// least 131072) and the global nf_conntrack hashsize module parameter
	// with it. nf_conntrack_max is read-only outside the initial network
	// namespace, so wherever the host's value is lower (more cores, a
	// smaller default) kube-proxy exits with "could not set conntrack
	// parameters"; and hashsize is shared with the host. 0 leaves both.
	"--conntrack-max-per-core", "0",
	// The TCP timeouts are per namespace and settable, but nothing lives
	// long enough here for them to matter: 0 leaves the kernel's.
	"--conntrack-tcp-timeout-established", "0",
	"--conntrack-tcp-timeout-close-wait", "0",
	// The default -999 would shield a test process from the OOM killer
	// (and is refused in some containers, with an error in the log).
	"--oom-score-adj", "0",
	// The namespace's own loopback. Each kube-proxy has a namespace of its
	// own, so the fixed ports never collide between nodes or runs, and
	// healthz does not listen on the node's address (default 0.0.0.0).
	"--metrics-bind-address", "127.0.0.1:10249",
	"--healthz-bind-address", "127.0.0.1:10256",
	// The cluster's pod range, as a real node has: it keeps kube-proxy from
	// warning that it cannot tell local traffic apart.
	"--cluster-cidr", PodCIDR,
	"--v=2",
}

// StartKubeProxy runs the real kube-proxy in nftables mode inside the
// namespace as node n.NodeName, reading Services and EndpointSlices from
// whatever server kubeconfig names: kube-apiserver itself, or a node-local
// server listening on 127.0.0.1 inside the namespace. extraArgs are
// appended (a later flag wins). Its log is <LogDir>/kube-proxy-<node>.log.
//
// kube-proxy programs nothing until its Node has an address: see
// SetNodeInternalIP. Read what it programmed with NftRuleset.
func (n *NodeNetns) StartKubeProxy(kubeconfig string, extraArgs ...string) (*Process, error) {
	if err := NodePreflight(n.cluster.opts.BinDir); err != nil {
		return nil, err
	}
	argv := []string{filepath.Join(n.cluster.opts.BinDir, "kube-proxy"),
		"--hostname-override", n.NodeName,
		"--kubeconfig", kubeconfig,
	}
	argv = append(argv, kubeProxyArgs...)
	argv = append(argv, extraArgs...)
	proc, err := n.Start("kube-proxy", argv...)
	if err != nil {
		return nil, err
	}
	n.cluster.opts.Logf("node %s: kube-proxy (pid %d) started, log %s", n.NodeName, proc.Pid(), proc.LogFile)
	return proc, nil
}

// NodePreflight reports, in one error, what is missing to run kube-proxy
// in a node namespace, with the command that fixes each problem.
func NodePreflight(binDir string) error {
	var problems []error
	if !isExecutable(filepath.Join(binDir, "kube-proxy")) {
		problems = append(problems, fmt.Errorf("kube-proxy not found in %s: run `make tools`", binDir))
	}
	if os.Geteuid() != 0 {
		problems = append(problems, errors.New("network namespaces and nftables need root: run as root"))
	}
	if _, err := exec.LookPath("ip"); err != nil {
		problems = append(problems, errors.New("the `ip` command is missing: apt-get install iproute2"))
	}
	// kube-proxy talks to the kernel through netlink, but the harness reads
	// what it programmed with nft.
	if _, err := exec.LookPath("nft"); err != nil {
		problems = append(problems, errors.New("the `nft` command is missing: apt-get install nftables"))
	}
	if err := errors.Join(problems...); err != nil {
		return fmt.Errorf("kube-proxy preflight failed:\n%w", err)
	}
	return nil
}

// SetNodeInternalIP sets the InternalIP of Node name's status to ip, which
// kube-proxy waits for before it programs anything: the namespace's address,
// which no simulated kubelet knows.
func (c *Cluster) SetNodeInternalIP(ctx context.Context, name string, ip netip.Addr) error {
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return fmt.Errorf("creating admin client: %w", err)
	}
	patch := fmt.Sprintf(`{"status":{"addresses":[{"type":"InternalIP","address":%q}]}}`, ip)
	if _, err := client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(patch),
		metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("setting the InternalIP of node %s: %w", name, err)
	}
	return nil
}
