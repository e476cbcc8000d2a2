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
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNetworkNames(t *testing.T) {
	tests := []struct {
		name string
		pid  int
	}{
		{name: "small pid", pid: 7},
		{name: "largest linux pid", pid: 4194304},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := networkNames(tt.pid, "beef")
			for _, link := range []string{n.HostVeth, n.NsVeth} {
				if len(link) > 15 {
					t.Errorf("interface name %q is longer than 15 characters", link)
				}
			}
			for _, name := range []string{n.Netns, n.HostVeth, n.NsVeth} {
				if pid, ok := ownerPID(name); !ok || pid != tt.pid {
					t.Errorf("ownerPID(%q) = %d, %v; want %d, true", name, pid, ok, tt.pid)
				}
			}
		})
	}
}

func TestOwnerPIDRejectsForeignNames(t *testing.T) {
	for _, name := range []string{"eth0", "gridview-", "gridview-12", "gridview-12-zzzz", "gvh12-abc", "gvhx-abcd", "gvn-1-abcd", "cni0"} {
		t.Run(name, func(t *testing.T) {
			if pid, ok := ownerPID(name); ok {
				t.Errorf("ownerPID(%q) = %d, true; want false", name, pid)
			}
		})
	}
}

func TestPickSubnet(t *testing.T) {
	pool := netip.MustParsePrefix("10.250.0.0/16")
	tests := []struct {
		name    string
		pool    netip.Prefix
		used    []string
		start   uint64
		want    string
		wantErr bool
	}{
		{name: "nothing used", pool: pool, start: 0, want: "10.250.0.0/30"},
		{name: "start offset", pool: pool, start: 3, want: "10.250.0.12/30"},
		{name: "start wraps around", pool: pool, start: 16384 + 1, want: "10.250.0.4/30"},
		{name: "skips a used address", pool: pool, used: []string{"10.250.0.1/30"}, want: "10.250.0.4/30"},
		{name: "skips a wider used prefix", pool: pool, used: []string{"10.250.0.5/24"}, want: "10.250.1.0/30"},
		{name: "ignores other networks", pool: pool, used: []string{"192.0.2.2/24", "127.0.0.1/8", "fd00::2/64"}, want: "10.250.0.0/30"},
		{name: "pool covered by a host route", pool: pool, used: []string{"10.0.0.1/8"}, wantErr: true},
		{name: "last block free", pool: netip.MustParsePrefix("10.250.0.0/29"), used: []string{"10.250.0.2/30"}, want: "10.250.0.4/30"},
		{name: "pool narrower than /30", pool: netip.MustParsePrefix("10.250.0.0/31"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var used []netip.Prefix
			for _, u := range tt.used {
				used = append(used, netip.MustParsePrefix(u))
			}
			got, err := pickSubnet(tt.pool, used, tt.start)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("pickSubnet() = %s, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("pickSubnet(): %v", err)
			}
			if got.String() != tt.want {
				t.Errorf("pickSubnet() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseIPOutput(t *testing.T) {
	addrs := `1: lo    inet 127.0.0.1/8 scope host lo\       valid_lft forever preferred_lft forever
4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\       valid_lft forever preferred_lft forever
4: eth0    inet6 fd00::2/64 scope global nodad \       valid_lft forever preferred_lft forever
`
	gotAddrs := parseAddrPrefixes(addrs)
	wantAddrs := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("192.0.2.2/24"), netip.MustParsePrefix("fd00::2/64")}
	if !slices.Equal(gotAddrs, wantAddrs) {
		t.Errorf("parseAddrPrefixes() = %v, want %v", gotAddrs, wantAddrs)
	}

	links := `1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
7: gvh123-beef@if6: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000\    link/ether 2e:1c:aa:00:00:01 brd ff:ff:ff:ff:ff:ff link-netns gridview-123-beef
`
	gotLinks := parseLinkNames(links)
	if want := []string{"lo", "gvh123-beef"}; !slices.Equal(gotLinks, want) {
		t.Errorf("parseLinkNames() = %v, want %v", gotLinks, want)
	}
}

func TestDecodeManifests(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    []string
		wantErr bool
	}{
		{name: "comment-only documents are skipped", data: "# header\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n# trailer\n", want: []string{"Namespace/a"}},
		{name: "several documents keep their order", data: "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n", want: []string{"Namespace/a", "Node/b"}},
		{name: "missing name", data: "apiVersion: v1\nkind: Namespace\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objects, err := decodeManifests([]byte(tt.data))
			if tt.wantErr {
				if err == nil {
					t.Fatal("decodeManifests() succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeManifests(): %v", err)
			}
			var got []string
			for _, obj := range objects {
				got = append(got, obj.GetKind()+"/"+obj.GetName())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("decodeManifests() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDeployManifestsDecode(t *testing.T) {
	root, err := FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pattern := range []string{"*/*.yaml", "*/*/*.yaml"} {
		matches, err := filepath.Glob(filepath.Join(root, "artifacts", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	if !slices.Contains(files, filepath.Join(root, "artifacts", "deploy", "wrapper", "daemonset.yaml")) {
		t.Fatalf("the manifests under %s/artifacts do not include the wrapper's: %v", root, files)
	}
	for _, file := range files {
		name, _ := filepath.Rel(filepath.Join(root, "artifacts"), file)
		if strings.HasPrefix(name, "charts"+string(filepath.Separator)) {
			// A chart's files are Helm's: values and templates, which
			// test/manifests renders and checks.
			continue
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := decodeManifests(data); err != nil && filepath.Base(file) != "kustomization.yaml" {
				t.Errorf("decodeManifests(%s): %v", file, err)
			}
		})
	}
}

func TestFailedReadyzChecks(t *testing.T) {
	base := errors.New("the server is not ready")
	tests := []struct {
		name string
		body string
		want string
	}{
		{name: "failing checks listed", body: "[+]ping ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n[+]log ok\n[-]etcd failed: reason withheld\nreadyz check failed\n",
			want: "not ready: [-]poststarthook/rbac/bootstrap-roles failed: reason withheld; [-]etcd failed: reason withheld"},
		{name: "no body keeps the error", body: "", want: base.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failedReadyzChecks([]byte(tt.body), base).Error(); got != tt.want {
				t.Errorf("failedReadyzChecks() = %q, want %q", got, tt.want)
			}
		})
	}
}
