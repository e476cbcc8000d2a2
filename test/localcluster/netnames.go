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
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Every name this harness gives a network namespace or link carries the pid
// of the process that owns it, so a later run can tell leftovers of a dead
// run (removed) from a live concurrent run (left alone).
const (
	netnsPrefix    = "gridview-"
	hostVethPrefix = "gvh" // gvh<pid>-<suffix> is at most 15 characters, the kernel's limit
	nsVethPrefix   = "gvn"
)

// subnetPool is where each run's /30 between host and namespace comes from.
var subnetPool = netip.MustParsePrefix("10.250.0.0/16")

// network is a namespace of the run (gridview-apiserver's, or a node's) and
// the veth pair that joins it to the host.
type network struct {
	Netns    string
	HostVeth string
	NsVeth   string
	Subnet   netip.Prefix
	HostIP   netip.Addr // .1: kube-apiserver binds here (gridview's network)
	NsIP     netip.Addr // .2: gridview-apiserver binds here, or a node's address
}

// networkNames derives every name of a run from its owner pid and suffix.
func networkNames(pid int, suffix string) network {
	id := strconv.Itoa(pid) + "-" + suffix
	return network{Netns: netnsPrefix + id, HostVeth: hostVethPrefix + id, NsVeth: nsVethPrefix + id}
}

// ownerPID extracts the owner pid from a name networkNames produced.
func ownerPID(name string) (int, bool) {
	for _, prefix := range []string{netnsPrefix, hostVethPrefix, nsVethPrefix} {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		pidText, suffix, ok := strings.Cut(rest, "-")
		if !ok || len(suffix) != 4 {
			return 0, false
		}
		if _, err := hex.DecodeString(suffix); err != nil {
			return 0, false
		}
		pid, err := strconv.Atoi(pidText)
		return pid, err == nil && pid > 0
	}
	return 0, false
}

func randomSuffix() (string, error) {
	b := make([]byte, 2)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating run suffix: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// pickSubnet returns a /30 of pool that overlaps none of the used prefixes,
// starting the search at a random block so concurrent runs rarely race for
// the same one.
func pickSubnet(pool netip.Prefix, used []netip.Prefix, start uint64) (netip.Prefix, error) {
	if !pool.Addr().Is4() || pool.Bits() > 30 {
		return netip.Prefix{}, fmt.Errorf("subnet pool %s is not an IPv4 prefix of /30 or wider", pool)
	}
	blocks := uint64(1) << (30 - pool.Bits())
	base := pool.Masked().Addr().As4()
	baseNum := uint64(base[0])<<24 | uint64(base[1])<<16 | uint64(base[2])<<8 | uint64(base[3])
	for i := range blocks {
		n := baseNum + ((start+i)%blocks)*4
		candidate := netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), 30)
		if !overlapsAny(candidate, used) {
			return candidate, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("every /30 of %s overlaps an address assigned on this host", pool)
}

func overlapsAny(p netip.Prefix, used []netip.Prefix) bool {
	for _, u := range used {
		if u.Overlaps(p) {
			return true
		}
	}
	return false
}

// parseAddrPrefixes reads the prefixes out of `ip -o addr show` output.
func parseAddrPrefixes(output string) []netip.Prefix {
	var prefixes []netip.Prefix
	for line := range strings.Lines(output) {
		fields := strings.Fields(line)
		for i := 0; i+1 < len(fields); i++ {
			if fields[i] != "inet" && fields[i] != "inet6" {
				continue
			}
			if p, err := netip.ParsePrefix(fields[i+1]); err == nil {
				prefixes = append(prefixes, p)
			}
		}
	}
	return prefixes
}

// parseLinkNames reads interface names out of `ip -o link show` output,
// without the "@peer" part veth links carry.
func parseLinkNames(output string) []string {
	var names []string
	for line := range strings.Lines(output) {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(fields[1], ":"), "@")
		names = append(names, name)
	}
	return names
}
