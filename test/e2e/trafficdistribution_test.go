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
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gridview/gridview/test/localcluster"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Service with spec.trafficDistribution is pruned centrally to the keys
// it implies; a real kube-proxy reading gridview's views through the
// wrapper must program exactly what a real kube-proxy reading kube-apiserver
// programs from the hints the EndpointSlice controller writes for the
// Services' Pods, for the same node, on the preferred tier and on every
// fallback.
func TestTrafficDistributionParityWithKubeProxyHints(t *testing.T) {
	// z1a views; z1b shares its zone; z2a is in another zone. z1a gets its
	// zone only once both kube-proxies run: kube-proxy v1.37 may handle its
	// Node's first event before the proxier registers for topology labels
	// (cmd/kube-proxy/app/server.go), and then drops every later event with
	// the same zone as no change, ignoring zone hints until the zone
	// changes. A zone set after start always reaches it.
	s := newRuleSite(t, map[string]map[string]string{"z1a": {}, "z1b": {zoneKey: "z1"}, "z2a": {zoneKey: "z2"}})
	proxies := startProxyPair(t, s.NS, s.Node("z1a"))
	proxies.awaitSynced(t)
	s.label(t, "z1a", zoneKey, "z1")
	sameNode := corev1.ServiceTrafficDistributionPreferSameNode
	sameZone := corev1.ServiceTrafficDistributionPreferSameZone
	services := []struct {
		name, distribution string
		pods               []podOn
		// want and view are the nodes whose Pods kube-proxy routes to and
		// the view holds.
		want, view []string
		rule       string
	}{
		{name: "node-local", distribution: sameNode, pods: []podOn{{"z1a", true}, {"z1b", true}, {"z2a", true}},
			want: []string{"z1a"}, view: []string{"z1a"}, rule: "Ordered(kubernetes.io/hostname) Native(PreferSameNode)"},
		// The node's own Pod is not ready: its zone takes over.
		{name: "node-to-zone", distribution: sameNode, pods: []podOn{{"z1a", false}, {"z1b", true}, {"z2a", true}},
			want: []string{"z1b"}, view: []string{"z1a", "z1b"}, rule: "Ordered(" + zoneKey + ") Native(PreferSameNode)"},
		// Neither the node nor its zone has a ready Pod: every ready one.
		{name: "node-to-cluster", distribution: sameNode, pods: []podOn{{"z1b", false}, {"z2a", true}},
			want: []string{"z2a"}},
		{name: "zone-local", distribution: sameZone, pods: []podOn{{"z1a", true}, {"z1b", true}, {"z2a", true}},
			want: []string{"z1a", "z1b"}, view: []string{"z1a", "z1b"}, rule: "Ordered(" + zoneKey + ") Native(PreferSameZone)"},
		{name: "zone-to-cluster", distribution: sameZone, pods: []podOn{{"z1b", false}, {"z2a", true}},
			want: []string{"z2a"}, view: []string{"z1b", "z2a"}, rule: "Ordered(*) Native(PreferSameZone)"},
	}
	for _, svc := range services {
		s.createService(t, svc.name, func(service *corev1.Service) { service.Spec.TrafficDistribution = &svc.distribution })
		s.runPods(t, svc.name, svc.pods...)
	}
	// topology-mode Auto: gridview leaves the hints, which the controller
	// gives in proportion to each zone's CPUs, to kube-proxy, which applies
	// them the same on both paths.
	s.createService(t, "auto", func(service *corev1.Service) { service.Annotations[corev1.AnnotationTopologyMode] = "Auto" })
	s.runPods(t, "auto", podOn{"z1a", true}, podOn{"z1b", true}, podOn{"z2a", true})
	// The controller gives topology-mode Auto's hints only while every
	// Ready Node of the cluster has a zone and CPUs: another test's Node
	// left behind would take them away.
	localcluster.Eventually(t, 30*time.Second, "the EndpointSlice controller's zone hints for auto", func(ctx context.Context) error {
		list, err := kubeClient.DiscoveryV1().EndpointSlices(s.NS).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=auto"})
		if err != nil {
			return err
		}
		for _, slice := range list.Items {
			for _, ep := range slice.Endpoints {
				if ep.Hints == nil || len(ep.Hints.ForZones) == 0 {
					return fmt.Errorf("endpoint %v has no zone hint (is every Ready Node zoned? kubectl get nodes -L %s)", ep.Addresses, zoneKey)
				}
			}
		}
		return nil
	})

	for _, svc := range services {
		t.Run(svc.name, func(t *testing.T) { proxies.expect(t, s.NS, svc.name, s.podIPs(t, svc.name, svc.want...)...) })
	}
	t.Run("auto", func(t *testing.T) { proxies.expect(t, s.NS, "auto", s.podIPs(t, "auto", "z1a", "z1b")...) })

	// The views are pruned centrally, the tier chosen named; a tier's
	// endpoints that are not ready stay in it, for kube-proxy to skip.
	for _, svc := range services {
		if svc.view != nil {
			s.expectNep(t, "z1a", svc.name, svc.rule, s.podIPs(t, svc.name, svc.view...)...)
		}
	}
	s.expectNep(t, "z1a", "auto", "Hints", s.podIPs(t, "auto", "z1a", "z1b", "z2a")...)

	// Readiness returns live: the preferred tier takes over again.
	t.Run("node endpoint ready again", func(t *testing.T) {
		s.setReady(t, "node-to-zone", "z1a", true)
		proxies.expect(t, s.NS, "node-to-zone", s.podIPs(t, "node-to-zone", "z1a")...)
	})
	t.Run("zone endpoint ready again", func(t *testing.T) {
		s.setReady(t, "zone-to-cluster", "z1b", true)
		proxies.expect(t, s.NS, "zone-to-cluster", s.podIPs(t, "zone-to-cluster", "z1b")...)
	})
}
