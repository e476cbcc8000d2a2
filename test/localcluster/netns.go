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
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// createMu serializes createNetwork within the process: a run creates
// several namespaces (gridview-apiserver's, one per node), possibly from
// parallel tests, and two of them must never pick the same names or /30.
var createMu sync.Mutex

// createNetwork removes leftovers of dead runs, then creates a namespace and
// veth pair with a free /30. The namespace's default route points at the
// host end, so processes inside reach every address of the host, among them
// kube-apiserver on the host end of another namespace's veth pair.
func createNetwork(ctx context.Context, logf func(string, ...any)) (*network, error) {
	createMu.Lock()
	defer createMu.Unlock()
	removeStaleNetworks(ctx, logf)
	n, err := unusedNetworkNames(ctx)
	if err != nil {
		return nil, err
	}
	addrs, err := ipOutput(ctx, "-o", "addr", "show")
	if err != nil {
		return nil, err
	}
	start, err := rand.Int(rand.Reader, big.NewInt(1<<20))
	if err != nil {
		return nil, fmt.Errorf("choosing a subnet: %w", err)
	}
	if n.Subnet, err = pickSubnet(subnetPool, parseAddrPrefixes(addrs), start.Uint64()); err != nil {
		return nil, err
	}
	n.HostIP = n.Subnet.Addr().Next()
	n.NsIP = n.HostIP.Next()

	steps := [][]string{
		{"netns", "add", n.Netns},
		{"link", "add", n.HostVeth, "type", "veth", "peer", "name", n.NsVeth},
		{"link", "set", n.NsVeth, "netns", n.Netns},
		{"addr", "add", netip.PrefixFrom(n.HostIP, 30).String(), "dev", n.HostVeth},
		{"link", "set", n.HostVeth, "up"},
		{"-n", n.Netns, "addr", "add", netip.PrefixFrom(n.NsIP, 30).String(), "dev", n.NsVeth},
		{"-n", n.Netns, "link", "set", n.NsVeth, "up"},
		// gridview-apiserver's embedded etcd and loopback client use
		// 127.0.0.1, and so does kube-proxy talking to a node-local server.
		{"-n", n.Netns, "link", "set", "lo", "up"},
		{"-n", n.Netns, "route", "add", "default", "via", n.HostIP.String()},
	}
	for _, args := range steps {
		if _, err := ipOutput(ctx, args...); err != nil {
			return nil, errors.Join(err, n.delete())
		}
	}
	logf("network namespace %s: host %s (%s), namespace %s (%s)", n.Netns, n.HostIP, n.HostVeth, n.NsIP, n.NsVeth)
	return &n, nil
}

// unusedNetworkNames picks names no namespace or link of this host has:
// delete removes whatever carries a network's names, so a clash with a live
// network of the same process must be ruled out before creating anything.
func unusedNetworkNames(ctx context.Context) (network, error) {
	for range 8 {
		suffix, err := randomSuffix()
		if err != nil {
			return network{}, err
		}
		n := networkNames(os.Getpid(), suffix)
		if !namespaceExists(ctx, n.Netns) && !linkExists(ctx, n.HostVeth) && !linkExists(ctx, n.NsVeth) {
			return n, nil
		}
	}
	return network{}, errors.New("no unused network namespace name found in 8 attempts")
}

// forwardToPeers lets packets that enter the host on this network's veth be
// routed out of another's, so that gridview-apiserver replicas reach each
// other as Pods do. Only this interface forwards: the host's
// net.ipv4.ip_forward is left as it is, and the setting goes with the veth.
func (n *network) forwardToPeers() error {
	name := "/proc/sys/net/ipv4/conf/" + n.HostVeth + "/forwarding"
	if err := os.WriteFile(name, []byte("1"), 0o644); err != nil {
		return fmt.Errorf("letting gridview-apiserver replicas reach each other: %w", err)
	}
	return nil
}

// delete removes the namespace and both veth ends; missing ones are fine.
func (n *network) delete() error {
	var errs []error
	ctx := context.Background()
	if namespaceExists(ctx, n.Netns) {
		// Deleting the namespace destroys the veth end inside it, and with
		// it the host end.
		if _, err := ipOutput(ctx, "netns", "delete", n.Netns); err != nil {
			errs = append(errs, err)
		}
	}
	// The kernel removes the host end asynchronously after the namespace
	// goes, so it may vanish between the check and the delete.
	if linkExists(ctx, n.HostVeth) {
		if _, err := ipOutput(ctx, "link", "delete", n.HostVeth); err != nil && linkExists(ctx, n.HostVeth) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeStaleNetworks deletes namespaces and links whose owner is dead.
func removeStaleNetworks(ctx context.Context, logf func(string, ...any)) {
	if out, err := ipOutput(ctx, "netns", "list"); err == nil {
		for line := range strings.Lines(out) {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			if pid, ok := ownerPID(fields[0]); ok && !processAlive(pid) {
				logf("removing network namespace %s left by dead process %d", fields[0], pid)
				_, _ = ipOutput(ctx, "netns", "delete", fields[0])
			}
		}
	}
	if out, err := ipOutput(ctx, "-o", "link", "show"); err == nil {
		for _, name := range parseLinkNames(out) {
			if pid, ok := ownerPID(name); ok && !processAlive(pid) {
				logf("removing link %s left by dead process %d", name, pid)
				_, _ = ipOutput(ctx, "link", "delete", name)
			}
		}
	}
}

func namespaceExists(ctx context.Context, name string) bool {
	out, err := ipOutput(ctx, "netns", "list")
	if err != nil {
		return false
	}
	for line := range strings.Lines(out) {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] == name {
			return true
		}
	}
	return false
}

func linkExists(ctx context.Context, name string) bool {
	_, err := ipOutput(ctx, "link", "show", "dev", name)
	return err == nil
}

// processAlive reports whether pid exists (EPERM still means it does).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func ipOutput(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
