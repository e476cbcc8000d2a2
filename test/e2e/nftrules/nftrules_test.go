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

package nftrules

import (
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
)

// testdata/kube-proxy-v1.37.2.nft is `nft list ruleset` of a real
// kube-proxy v1.37.2 (nftables mode) for node a1 of namespace e2e-xk7jd,
// whose Services have endpoints on nodes a1, a2 and b1.
func TestServiceEndpoints(t *testing.T) {
	data, err := os.ReadFile("testdata/kube-proxy-v1.37.2.nft")
	if err != nil {
		t.Fatal(err)
	}
	ruleset := string(data)
	tests := []struct {
		name      string
		clusterIP string
		port      int32
		protocol  string
		want      []string
		wantErr   string
	}{
		{name: "three endpoints in a numgen map", clusterIP: "10.96.122.125", port: 80, protocol: "TCP",
			want: []string{"10.1.0.1:8080", "10.1.0.2:8080", "10.1.0.3:8080"}},
		{name: "two endpoints in a numgen map", clusterIP: "10.96.35.37", port: 80, protocol: "TCP",
			want: []string{"10.2.0.1:8080", "10.2.0.3:8080"}},
		{name: "a single endpoint DNATs directly", clusterIP: "10.96.104.95", port: 80, protocol: "TCP",
			want: []string{"10.3.0.1:8080"}},
		{name: "session affinity goes through endpoint chains", clusterIP: "10.96.192.207", port: 80, protocol: "TCP",
			want: []string{"10.4.0.1:8080", "10.4.0.2:8080"}},
		{name: "internalTrafficPolicy Local keeps the node's own", clusterIP: "10.96.175.243", port: 80, protocol: "TCP",
			want: []string{"10.5.0.1:8080", "10.5.0.2:8080"}},
		{name: "no endpoints is empty, not an error", clusterIP: "10.96.193.167", port: 80, protocol: "TCP",
			want: []string{}},
		{name: "the kubernetes Service", clusterIP: "10.96.0.1", port: 443, protocol: "TCP",
			want: []string{"10.250.117.113:35789"}},
		{name: "a port the Service lacks", clusterIP: "10.96.122.125", port: 81, protocol: "TCP",
			wantErr: "is in neither"},
		{name: "another protocol", clusterIP: "10.96.122.125", port: 80, protocol: "UDP",
			wantErr: "is in neither"},
		{name: "no IPv6 table entries", clusterIP: "fd00::1", port: 80, protocol: "TCP",
			wantErr: "is in neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ServiceEndpoints(ruleset, netip.MustParseAddr(tt.clusterIP), tt.port, tt.protocol)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ServiceEndpoints() = %v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ServiceEndpoints(): %v", err)
			}
			gotText := []string{}
			for _, ep := range got {
				gotText = append(gotText, ep.String())
			}
			if !slices.Equal(gotText, tt.want) {
				t.Errorf("ServiceEndpoints() = %v, want %v", gotText, tt.want)
			}
		})
	}
}

func TestEndpointIPs(t *testing.T) {
	ruleset := `table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 10.96.0.10 . udp . 53 : goto service-X-kube-system/dns/udp/dns,
			     10.96.0.10 . tcp . 53 : goto service-Y-kube-system/dns/tcp/dns-tcp }
	}

	chain service-X-kube-system/dns/udp/dns {
		meta l4proto udp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.2 . 53, 1 : 10.0.0.2 . 5353 }
	}

	chain service-Y-kube-system/dns/tcp/dns-tcp {
		jump missing-chain
	}
}
`
	got, err := EndpointIPs(ruleset, netip.MustParseAddr("10.96.0.10"), 53, "UDP")
	if err != nil || !slices.Equal(got, []string{"10.0.0.2"}) {
		t.Errorf("EndpointIPs() = %v, %v; want one address for two ports, and the newer nft syntax", got, err)
	}
	if _, err := EndpointIPs(ruleset, netip.MustParseAddr("10.96.0.10"), 53, "TCP"); err == nil || !strings.Contains(err.Error(), "missing-chain") {
		t.Errorf("EndpointIPs() through a missing chain: %v, want an error naming it", err)
	}
	if _, err := EndpointIPs("table inet filter {\n}\n", netip.MustParseAddr("10.96.0.10"), 53, "UDP"); err == nil || !strings.Contains(err.Error(), "no table ip kube-proxy") {
		t.Errorf("EndpointIPs() without kube-proxy's table: %v", err)
	}
}
