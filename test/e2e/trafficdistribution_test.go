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

package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A Service with spec.trafficDistribution is pruned centrally to the keys
// it implies; a real kube-proxy reading gridview's views through the
// wrapper must program exactly what a real kube-proxy reading kube-apiserver
// programs from the hints the EndpointSlice controller writes, for the same
// node, on the preferred tier and on every fallback.
func TestTrafficDistributionParityWithKubeProxyHints(t *testing.T) {
	// z1a views; z1b shares its zone; z2a is in another zone. z1a gets its
	// zone only once both kube-proxies run: kube-proxy v1.37 may handle its
	// Node's first event before the proxier registers for topology labels
	// (cmd/kube-proxy/app/server.go), and then drops every later event with
	// the same zone as no change, ignoring zone hints until the zone
	// changes. A zone set after start always reaches it.
	s := newRuleSite(t, map[string]map[string]string{"z1a": {}, "z1b": {zoneKey: "z1"}, "z2a": {zoneKey: "z2"}})
	proxies := startProxyPair(t, s.ns, s.node("z1a"))
	proxies.awaitSynced(t)
	s.label(t, "z1a", zoneKey, "z1")
	sameNode := corev1.ServiceTrafficDistributionPreferSameNode
	sameZone := corev1.ServiceTrafficDistributionPreferSameZone
	services := []struct {
		name, distribution string
		endpoints          []endpoint
		want               []string
	}{
		{name: "node-local", distribution: sameNode, endpoints: []endpoint{
			{"10.11.0.1", "z1a", true}, {"10.11.0.2", "z1b", true}, {"10.11.0.3", "z2a", true},
		}, want: []string{"10.11.0.1"}},
		// The node's own endpoint is not ready: its zone takes over.
		{name: "node-to-zone", distribution: sameNode, endpoints: []endpoint{
			{"10.12.0.1", "z1a", false}, {"10.12.0.2", "z1b", true}, {"10.12.0.3", "z2a", true},
		}, want: []string{"10.12.0.2"}},
		// Neither the node nor its zone has a ready endpoint: every ready one.
		{name: "node-to-cluster", distribution: sameNode, endpoints: []endpoint{
			{"10.13.0.2", "z1b", false}, {"10.13.0.3", "z2a", true}, {"10.13.0.4", "z2a", true},
		}, want: []string{"10.13.0.3", "10.13.0.4"}},
		{name: "zone-local", distribution: sameZone, endpoints: []endpoint{
			{"10.14.0.1", "z1a", true}, {"10.14.0.2", "z1b", true}, {"10.14.0.3", "z2a", true},
		}, want: []string{"10.14.0.1", "10.14.0.2"}},
		{name: "zone-to-cluster", distribution: sameZone, endpoints: []endpoint{
			{"10.15.0.2", "z1b", false}, {"10.15.0.3", "z2a", true}, {"10.15.0.4", "z2a", true},
		}, want: []string{"10.15.0.3", "10.15.0.4"}},
	}
	for _, svc := range services {
		s.createService(t, svc.name, func(service *corev1.Service) { service.Spec.TrafficDistribution = &svc.distribution })
		s.applySlice(t, svc.name, svc.distribution, svc.endpoints...)
	}
	// topology-mode Auto: gridview leaves the hints to kube-proxy, which
	// applies them the same on both paths.
	s.createService(t, "auto", func(service *corev1.Service) {
		service.Annotations[corev1.AnnotationTopologyMode] = "Auto"
	})
	s.applySlice(t, "auto", sameZone, endpoint{"10.16.0.1", "z1a", true}, endpoint{"10.16.0.2", "z1b", true}, endpoint{"10.16.0.3", "z2a", true})

	for _, svc := range services {
		t.Run(svc.name, func(t *testing.T) { proxies.expect(t, s.ns, svc.name, svc.want...) })
	}
	t.Run("auto", func(t *testing.T) { proxies.expect(t, s.ns, "auto", "10.16.0.1", "10.16.0.2") })

	// The views are pruned centrally, the tier chosen named; a tier's
	// endpoints that are not ready stay in it, for kube-proxy to skip.
	s.expectNep(t, "z1a", "node-local", "Ordered(kubernetes.io/hostname) Native(PreferSameNode)", "10.11.0.1")
	s.expectNep(t, "z1a", "node-to-zone", "Ordered("+zoneKey+") Native(PreferSameNode)", "10.12.0.1", "10.12.0.2")
	s.expectNep(t, "z1a", "zone-local", "Ordered("+zoneKey+") Native(PreferSameZone)", "10.14.0.1", "10.14.0.2")
	s.expectNep(t, "z1a", "zone-to-cluster", "Ordered(*) Native(PreferSameZone)", "10.15.0.2", "10.15.0.3", "10.15.0.4")
	s.expectNep(t, "z1a", "auto", "Hints", "10.16.0.1", "10.16.0.2", "10.16.0.3")

	// Readiness returns live: the preferred tier takes over again.
	t.Run("node endpoint ready again", func(t *testing.T) {
		s.applySlice(t, "node-to-zone", sameNode, endpoint{"10.12.0.1", "z1a", true}, endpoint{"10.12.0.2", "z1b", true}, endpoint{"10.12.0.3", "z2a", true})
		proxies.expect(t, s.ns, "node-to-zone", "10.12.0.1")
	})
	t.Run("zone endpoint ready again", func(t *testing.T) {
		s.applySlice(t, "zone-to-cluster", sameZone, endpoint{"10.15.0.2", "z1b", true}, endpoint{"10.15.0.3", "z2a", true}, endpoint{"10.15.0.4", "z2a", true})
		proxies.expect(t, s.ns, "zone-to-cluster", "10.15.0.2")
	})
}
