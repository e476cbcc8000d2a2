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

// Package nftrules reads, from the output of `nft list ruleset`, which
// endpoints kube-proxy's nftables mode sends a Service's ClusterIP to. It is
// how the end-to-end tests observe what a real kube-proxy programmed.
package nftrules

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// kube-proxy (pkg/proxy/nftables, v1.37) sends a ClusterIP through the
// service-ips verdict map to a policy chain, which either DNATs directly
//
//	meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.1.0.1 . 8080, 1 : 10.1.0.2 . 8080 }
//	meta l4proto tcp dnat to 10.1.0.1:8080
//
// or, with session affinity, jumps to one chain per endpoint, each with a
// single-endpoint DNAT:
//
//	numgen random mod 2 vmap { 0 : goto endpoint-..., 1 : goto endpoint-... }
//
// Chains are followed from the map by reference, not found by name: chains
// of removed endpoints are only flushed at first and linger for a while.
var (
	dnatMapRule   = regexp.MustCompile(`dnat (?:ip6? )?(?:addr \. port )?to numgen random mod \d+ map \{([^}]*)\}`)
	dnatOneRule   = regexp.MustCompile(`dnat (?:ip6? )?to (\S+)`)
	chainRef      = regexp.MustCompile(`(?:goto|jump) ([^\s,{}]+)`)
	blockStart    = regexp.MustCompile(`^(table|chain|map|set) (.+) \{$`)
	elementsStart = "elements = {"
)

const (
	serviceIPsMap         = "service-ips"
	noEndpointServicesMap = "no-endpoint-services"
	// maxChainDepth bounds following references; kube-proxy uses at most
	// three levels (policy chain, endpoint chain).
	maxChainDepth = 8
)

// ServiceEndpoints returns the endpoints (address and port, sorted) that the
// ruleset DNATs traffic for clusterIP:port/protocol to. A Service that
// kube-proxy programmed with no endpoints (it rejects or drops its traffic)
// gives an empty list; one it has not programmed at all is an error.
func ServiceEndpoints(ruleset string, clusterIP netip.Addr, port int32, protocol string) ([]netip.AddrPort, error) {
	family := "ip"
	if clusterIP.Is6() {
		family = "ip6"
	}
	table, ok := parseTables(ruleset)[family+" kube-proxy"]
	if !ok {
		return nil, fmt.Errorf("the ruleset has no table %s kube-proxy", family)
	}
	key := fmt.Sprintf("%s . %s . %d", clusterIP, strings.ToLower(protocol), port)
	verdict, ok := mapElements(table[serviceIPsMap])[key]
	if !ok {
		if _, rejected := mapElements(table[noEndpointServicesMap])[key]; rejected {
			return []netip.AddrPort{}, nil
		}
		return nil, fmt.Errorf("%s is in neither %s nor %s", key, serviceIPsMap, noEndpointServicesMap)
	}
	found := map[netip.AddrPort]bool{}
	if err := collect(table, verdict, 0, found); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	endpoints := make([]netip.AddrPort, 0, len(found))
	for ep := range found {
		endpoints = append(endpoints, ep)
	}
	slices.SortFunc(endpoints, func(a, b netip.AddrPort) int { return a.Compare(b) })
	return endpoints, nil
}

// EndpointIPs is ServiceEndpoints' addresses alone, distinct and sorted as
// strings, as tests write their expectations.
func EndpointIPs(ruleset string, clusterIP netip.Addr, port int32, protocol string) ([]string, error) {
	endpoints, err := ServiceEndpoints(ruleset, clusterIP, port, protocol)
	if err != nil {
		return nil, err
	}
	ips := []string{}
	for _, ep := range endpoints {
		ips = append(ips, ep.Addr().String())
	}
	slices.Sort(ips)
	return slices.Compact(ips), nil
}

// collect adds the endpoints that rules reaches, directly or through the
// chains it goes to, to found.
func collect(table map[string][]string, rules []string, depth int, found map[netip.AddrPort]bool) error {
	if depth > maxChainDepth {
		return fmt.Errorf("chains nest deeper than %d", maxChainDepth)
	}
	for _, rule := range rules {
		if m := dnatMapRule.FindStringSubmatch(rule); m != nil {
			for element := range strings.SplitSeq(m[1], ",") {
				_, value, _ := strings.Cut(element, ":")
				addr, portText, ok := strings.Cut(strings.TrimSpace(value), " . ")
				if !ok {
					return fmt.Errorf("unexpected DNAT map element %q", element)
				}
				ep, err := parseAddrPort(addr, portText)
				if err != nil {
					return err
				}
				found[ep] = true
			}
			continue
		}
		if m := dnatOneRule.FindStringSubmatch(rule); m != nil {
			ep, err := netip.ParseAddrPort(m[1])
			if err != nil {
				return fmt.Errorf("unexpected DNAT target in %q: %w", rule, err)
			}
			found[ep] = true
			continue
		}
		for _, ref := range chainRef.FindAllStringSubmatch(rule, -1) {
			chain, ok := table[ref[1]]
			if !ok {
				return fmt.Errorf("rule %q refers to chain %s, which is missing", rule, ref[1])
			}
			if err := collect(table, chain, depth+1, found); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseAddrPort(addr, port string) (netip.AddrPort, error) {
	ip, err := netip.ParseAddr(strings.TrimSpace(addr))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("unexpected endpoint address: %w", err)
	}
	p, err := strconv.ParseUint(strings.TrimSpace(port), 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("unexpected endpoint port: %w", err)
	}
	return netip.AddrPortFrom(ip, uint16(p)), nil
}

// parseTables splits a ruleset into tables ("ip kube-proxy") of blocks:
// each chain by name with one rule per line, and each set or map by name
// with its definition joined into one line, as nft wraps long element lists.
func parseTables(ruleset string) map[string]map[string][]string {
	tables := map[string]map[string][]string{}
	var table map[string][]string
	var block string // chain, map or set being read
	var joined []string
	depth := 0
	for line := range strings.Lines(ruleset) {
		line = strings.TrimSpace(line)
		if m := blockStart.FindStringSubmatch(line); m != nil && depth <= 1 {
			depth++
			if m[1] == "table" {
				table = map[string][]string{}
				tables[m[2]] = table
			} else {
				block = m[2]
				joined = nil
			}
			continue
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		switch {
		case block == "" || table == nil:
		case depth <= 1:
			// The block's closing brace.
			if joined != nil {
				table[block] = []string{strings.Join(joined, " ")}
			}
			block = ""
		case line == "":
		case strings.HasPrefix(line, elementsStart) || joined != nil:
			joined = append(joined, line)
		default:
			table[block] = append(table[block], line)
		}
	}
	return tables
}

// mapElements returns a map's elements, key to value, from its joined
// definition.
func mapElements(definition []string) map[string][]string {
	elements := map[string][]string{}
	for _, line := range definition {
		_, list, ok := strings.Cut(line, elementsStart)
		if !ok {
			continue
		}
		list, _, _ = strings.Cut(list, "}")
		for element := range strings.SplitSeq(list, ",") {
			key, value, ok := strings.Cut(element, " : ")
			// no-endpoint-services elements carry a comment naming the
			// Service port: `<ip> . tcp . 80 comment "ns/name:port" : ...`.
			key, _, _ = strings.Cut(key, " comment ")
			if ok {
				elements[strings.TrimSpace(key)] = []string{strings.TrimSpace(value)}
			}
		}
	}
	return elements
}
