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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// reviewSite is two units of one zone and a third in another zone, for a
// Service that prefers the unit, then the zone, then any endpoint: a1 and
// a2 in u1 (z1), b1 in u2 (z1), c1 in u3 (z2); two Pods on a2, one on c1.
func reviewSite(t *testing.T) ruleSite {
	t.Helper()
	s := newRuleSite(t, map[string]map[string]string{
		"a1": {framework.UnitKey: "u1", zoneKey: "z1"}, "a2": {framework.UnitKey: "u1", zoneKey: "z1"},
		"b1": {framework.UnitKey: "u2", zoneKey: "z1"}, "c1": {framework.UnitKey: "u3", zoneKey: "z2"},
	})
	s.createService(t, "web", func(svc *corev1.Service) {
		svc.Annotations[topology.AnnotationGridviewKeys] = framework.UnitKey + "," + zoneKey + ",*"
	})
	s.runPods(t, "web", podOn{"a2", true}, podOn{"a2", true}, podOn{"c1", true})
	s.expectNep(t, "b1", "web", "Ordered("+zoneKey+")", s.podIPs(t, "web", "a2")...)
	return s
}

// review creates a TopologyReview as the e2e's admin, retrying while the
// views catch up with what the test wrote.
func (s ruleSite) review(t *testing.T, spec topologyv1alpha1.TopologyReviewSpec, check func(topologyv1alpha1.TopologyReviewStatus) error) topologyv1alpha1.TopologyReviewStatus {
	t.Helper()
	var got topologyv1alpha1.TopologyReviewStatus
	localcluster.Eventually(t, 10*time.Second, fmt.Sprintf("a review of %s/%s answering as expected", spec.NodeName, spec.ServiceName), func(ctx context.Context) error {
		review, err := gridview.TopologyV1alpha1().TopologyReviews(s.NS).Create(ctx, &topologyv1alpha1.TopologyReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		got = review.Status
		if err := check(got); err != nil {
			return fmt.Errorf("%w; status %+v", err, got)
		}
		return nil
	})
	return got
}

func TestTopologyReview(t *testing.T) {
	s := reviewSite(t)
	unit := func(name string) string { return framework.UnitKey + "=" + s.Unit(name) }

	t.Run("a node in a unit with ready endpoints routes inside it", func(t *testing.T) {
		s.review(t, topologyv1alpha1.TopologyReviewSpec{NodeName: s.Node("a1"), ServiceName: "web"}, func(st topologyv1alpha1.TopologyReviewStatus) error {
			switch {
			case st.Rule != topology.RuleGridview || st.Mode != topologyv1alpha1.TopologyModeOrdered || st.Route != topologyv1alpha1.RouteLocal:
				return fmt.Errorf("want rule Gridview, Ordered, route local")
			case len(st.Tiers) != 3 || st.Tiers[0].Key != framework.UnitKey || st.Tiers[0].Value != s.Unit("u1") || st.Tiers[0].Ready != 2 || st.Tiers[0].Total != 2 || !st.Tiers[0].Chosen || st.Tiers[1].Chosen:
				return fmt.Errorf("want the unit tier u1 with 2 of 2 ready, chosen alone")
			case !slices.Equal(st.Addresses, s.podIPs(t, "web", "a2")):
				return fmt.Errorf("want the addresses of a2")
			case !strings.Contains(st.Reason, unit("u1")):
				return fmt.Errorf("the reason does not name %s", unit("u1"))
			}
			return nil
		})
	})
	t.Run("what if it moved to a unit without endpoints", func(t *testing.T) {
		st := s.review(t, topologyv1alpha1.TopologyReviewSpec{NodeName: s.Node("a1"), ServiceName: "web",
			NodeLabels: map[string]string{framework.UnitKey: s.Unit("u2"), zoneKey: s.Unit("z1")}}, func(st topologyv1alpha1.TopologyReviewStatus) error {
			if st.Route != "fallback-1" || st.Tiers[0].Value != s.Unit("u2") || st.Tiers[0].Ready != 0 || !st.Tiers[1].Chosen || st.Tiers[1].Ready != 2 {
				return fmt.Errorf("want u2 empty and a fallback to the zone's 2 ready endpoints")
			}
			return nil
		})
		if zone := zoneKey + "=" + s.Unit("z1"); !strings.Contains(st.Reason, "fell back") || !strings.Contains(st.Reason, zone) || !strings.Contains(st.Reason, unit("u2")) {
			t.Errorf("the reason %q does not say it fell back from %s to %s", st.Reason, unit("u2"), zone)
		}
		// A what-if changes nothing: a1 still routes inside u1.
		s.expectNep(t, "a1", "web", "Ordered("+framework.UnitKey+")", s.podIPs(t, "web", "a2")...)
	})
	t.Run("what if the nodes of its unit went down", func(t *testing.T) {
		st := s.review(t, topologyv1alpha1.TopologyReviewSpec{NodeName: s.Node("a1"), ServiceName: "web", UnreadyNodes: []string{s.Node("a2")}},
			func(st topologyv1alpha1.TopologyReviewStatus) error {
				if st.Route != "fallback-2" || st.Tiers[0].Ready != 0 || st.Tiers[0].Total != 2 || st.Tiers[1].Ready != 0 || !st.Tiers[2].Chosen ||
					!slices.Equal(st.Addresses, s.podIPs(t, "web", "c1")) {
					return fmt.Errorf("want u1 and z1 without a ready endpoint and a fallback to c1's")
				}
				return nil
			})
		if !strings.Contains(st.Reason, unit("u1")) || !strings.Contains(st.Reason, "0 ready") {
			t.Errorf("the reason %q does not say %s has 0 ready endpoints", st.Reason, unit("u1"))
		}
	})
	t.Run("kubectl create -f prints the answer", func(t *testing.T) {
		manifest := filepath.Join(t.TempDir(), "review.yaml")
		if err := os.WriteFile(manifest, []byte(fmt.Sprintf("apiVersion: topology.gridview.io/v1alpha1\nkind: TopologyReview\nspec:\n  nodeName: %s\n  serviceName: web\n", s.Node("b1"))), 0o600); err != nil {
			t.Fatal(err)
		}
		out := mustKubectl(t, "create", "-n", s.NS, "-f", manifest, "-o", "yaml")
		if !strings.Contains(out, "route: fallback-1") || !strings.Contains(out, "reason:") {
			t.Errorf("kubectl create -o yaml printed no fallback-1 route and reason:\n%s", out)
		}
	})

	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		spec   topologyv1alpha1.TopologyReviewSpec
		code   int32
		inText string
	}{
		{name: "an unknown Service", spec: topologyv1alpha1.TopologyReviewSpec{NodeName: s.Node("a1"), ServiceName: "nothere"}, code: 404, inText: `services "nothere" not found`},
		{name: "an unknown node", spec: topologyv1alpha1.TopologyReviewSpec{NodeName: s.Node("zz"), ServiceName: "web"}, code: 404, inText: fmt.Sprintf("nodes %q not found", s.Node("zz"))},
		{name: "a bad spec", spec: topologyv1alpha1.TopologyReviewSpec{ServiceName: "web", UnreadyNodes: []string{"Not_A_Node"}}, code: 422, inText: "spec.nodeName: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gridview.TopologyV1alpha1().TopologyReviews(s.NS).Create(ctx, &topologyv1alpha1.TopologyReview{Spec: tc.spec}, metav1.CreateOptions{})
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != tc.code || !strings.Contains(status.Status().Message, tc.inText) {
				t.Fatalf("got %v, want a %d saying %q", err, tc.code, tc.inText)
			}
			if tc.code == 422 && !strings.Contains(status.Status().Message, "spec.unreadyNodes[0]") {
				t.Errorf("the 422 does not name spec.unreadyNodes[0]: %s", status.Status().Message)
			}
		})
	}

	t.Run("a node reviews itself only", func(t *testing.T) {
		applyWrapperRBAC(t)
		b1 := nodeClient(t, s.Node("b1")).TopologyV1alpha1().TopologyReviews(s.NS)
		own, err := b1.Create(ctx, &topologyv1alpha1.TopologyReview{Spec: topologyv1alpha1.TopologyReviewSpec{NodeName: s.Node("b1"), ServiceName: "web"}}, metav1.CreateOptions{})
		if err != nil || own.Status.Route != "fallback-1" {
			t.Fatalf("b1 reviewing itself: %v, %+v", err, own)
		}
		_, err = b1.Create(ctx, &topologyv1alpha1.TopologyReview{Spec: topologyv1alpha1.TopologyReviewSpec{NodeName: s.Node("a1"), ServiceName: "web"}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "may review only itself") {
			t.Fatalf("b1 reviewing a1: got %v, want 403 saying it may review only itself", err)
		}
		// A what-if's answer holds other units' endpoints, which a node's
		// identity may not list.
		_, err = b1.Create(ctx, &topologyv1alpha1.TopologyReview{Spec: topologyv1alpha1.TopologyReviewSpec{NodeName: s.Node("b1"), ServiceName: "web",
			NodeLabels: map[string]string{framework.UnitKey: s.Unit("u1")}}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "cannot list endpointslices") {
			t.Fatalf("b1 asking what if it moved to u1: got %v, want 403 saying it cannot list endpointslices", err)
		}
	})
}

// Every group of nodes routes as its unit's endpoints allow, and kubectl
// shows it in a row.
func TestServiceRoutes(t *testing.T) {
	s := reviewSite(t)
	want := map[string]string{s.Unit("u1"): "local 2", s.Unit("u2"): "fallback-1 1", s.Unit("u3"): "local 1"}
	localcluster.Eventually(t, 10*time.Second, "the routes of web by unit", func(ctx context.Context) error {
		routes, err := gridview.TopologyV1alpha1().ServiceRoutes(s.NS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, g := range routes.Groups {
			if unit, ok := g.Labels[framework.UnitKey]; ok && strings.HasPrefix(unit, s.NS) {
				got[unit] = fmt.Sprintf("%s %d", g.Route, g.Nodes)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || routes.ReadyEndpoints != 3 || routes.Rule != topology.RuleGridview {
			return fmt.Errorf("got groups %v of %+v, want %v", got, routes, want)
		}
		return nil
	})
	out := mustKubectl(t, "get", "serviceroutes", "-n", s.NS, "web")
	if fields := strings.Fields(strings.Split(out, "\n")[1]); len(fields) < 8 || fields[0] != "web" || fields[7] != "3/3" {
		t.Errorf("kubectl get serviceroutes web printed:\n%s", out)
	}
}
