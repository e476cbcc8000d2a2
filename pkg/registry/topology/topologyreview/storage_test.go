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

package topologyreview

import (
	"context"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/gridview/gridview/apis/topology"
	topologyengine "github.com/gridview/gridview/pkg/topology"
)

// fakeReviewer answers every review alike and records what it was asked.
type fakeReviewer struct {
	node   string
	svc    types.NamespacedName
	whatIf topologyengine.WhatIf
	err    error
}

func (f *fakeReviewer) Review(node string, svc types.NamespacedName, w topologyengine.WhatIf) (topologyengine.Review, error) {
	f.node, f.svc, f.whatIf = node, svc, w
	return topologyengine.Review{
		Rule: topologyengine.RuleSuperEdge, Mode: topology.TopologyModeAnyMatch, Position: topologyengine.FallbackPosition(1),
		Tiers: []topologyengine.TierReview{
			{Key: "unit", Value: "u1", In: true, Total: 3, MinReady: 1},
			{Key: "*", In: true, Ready: 4, Total: 7, MinReady: 1, Chosen: true},
		},
		Addresses: []string{"10.0.0.1"}, Reason: "unit=u1 has 0 ready endpoints of 3; fell back to every endpoint (4 ready)",
	}, f.err
}

// servicesOf allows getting the Service demo/web to the users named, and
// listing demo's EndpointSlices to those named too.
func servicesOf(gets, lists []string) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		allowed := gets
		switch {
		case a.GetNamespace() != "demo":
		case a.GetResource() == "services" && a.GetVerb() == "get" && a.GetAPIGroup() == "" && a.GetName() == "web":
		case a.GetResource() == "endpointslices" && a.GetVerb() == "list" && a.GetAPIGroup() == "discovery.k8s.io" && a.GetName() == "":
			allowed = lists
		default:
			return authorizer.DecisionNoOpinion, "asked " + a.GetVerb() + " " + a.GetResource(), nil
		}
		if slices.Contains(allowed, a.GetUser().GetName()) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionDeny, "no RBAC rule allows it", nil
	})
}

func TestCreate(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice"}
	node1 := &user.DefaultInfo{Name: "system:node:edge-1", Groups: []string{user.NodesGroup}}
	spec := func(node string) topology.TopologyReviewSpec {
		return topology.TopologyReviewSpec{NodeName: node, ServiceName: "web", NodeLabels: map[string]string{"unit": "u9"}, UnreadyNodes: []string{"edge-2"}}
	}
	cases := []struct {
		name       string
		requester  user.Info
		spec       topology.TopologyReviewSpec
		reviewErr  error
		wantStatus int32
		wantInMsg  string
	}{
		{name: "a user who may get the Service", requester: alice, spec: spec("edge-1")},
		{name: "a node reviewing itself", requester: node1, spec: topology.TopologyReviewSpec{NodeName: "edge-1", ServiceName: "web"}},
		{name: "a node's empty what-if labels ask nothing", requester: node1, spec: topology.TopologyReviewSpec{NodeName: "edge-1", ServiceName: "web", NodeLabels: map[string]string{}}},
		{name: "a node asking what if it moved", requester: node1, spec: topology.TopologyReviewSpec{NodeName: "edge-1", ServiceName: "web", NodeLabels: map[string]string{"unit": "u9"}},
			wantStatus: 403, wantInMsg: `user "system:node:edge-1" cannot list endpointslices in namespace "demo"`},
		{name: "a node asking what if nodes went down", requester: node1, spec: topology.TopologyReviewSpec{NodeName: "edge-1", ServiceName: "web", UnreadyNodes: []string{"edge-2"}},
			wantStatus: 403, wantInMsg: `cannot list endpointslices`},
		{name: "a node reviewing another", requester: node1, spec: spec("edge-2"), wantStatus: 403, wantInMsg: "node edge-1 may review only itself, not node edge-2"},
		{name: "a user who may not get the Service", requester: &user.DefaultInfo{Name: "bob"}, spec: spec("edge-1"), wantStatus: 403, wantInMsg: `user "bob" cannot get services in namespace "demo", which reviewing Service web needs: no RBAC rule allows it`},
		{name: "a user who may get the Service but not its endpoints", requester: &user.DefaultInfo{Name: "carol"}, spec: spec("edge-1"), wantStatus: 403, wantInMsg: `user "carol" cannot list endpointslices in namespace "demo"`},
		{name: "a member of system:nodes that is no node", requester: &user.DefaultInfo{Name: "bootstrap", Groups: []string{user.NodesGroup}}, spec: spec("edge-1"), wantStatus: 403, wantInMsg: "no node's identity"},
		{name: "no user", spec: spec("edge-1"), wantStatus: 403, wantInMsg: "no user"},
		{name: "a bad spec", requester: alice, spec: topology.TopologyReviewSpec{ServiceName: "web"}, wantStatus: 422, wantInMsg: "spec.nodeName: Required value"},
		{name: "an unknown Service", requester: alice, spec: spec("edge-1"), reviewErr: apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "web"), wantStatus: 404, wantInMsg: `services "web" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reviewer := &fakeReviewer{err: tc.reviewErr}
			ctx := genericapirequest.WithNamespace(context.Background(), "demo")
			if tc.requester != nil {
				ctx = genericapirequest.WithUser(ctx, tc.requester)
			}
			storage := NewStorage(reviewer, servicesOf([]string{"alice", "carol", "system:node:edge-1"}, []string{"alice"})).(*storage)
			obj, err := storage.Create(ctx, &topology.TopologyReview{Spec: tc.spec}, nil, nil)
			if tc.wantStatus != 0 {
				status, ok := err.(apierrors.APIStatus)
				if !ok || status.Status().Code != tc.wantStatus || !strings.Contains(status.Status().Message, tc.wantInMsg) {
					t.Fatalf("got %v (%T), want a %d saying %q", err, err, tc.wantStatus, tc.wantInMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if reviewer.node != tc.spec.NodeName || reviewer.svc != (types.NamespacedName{Namespace: "demo", Name: "web"}) ||
				reviewer.whatIf.NodeLabels["unit"] != tc.spec.NodeLabels["unit"] || !reviewer.whatIf.UnreadyNodes.Equal(sets.New(tc.spec.UnreadyNodes...)) {
				t.Errorf("asked %s %s %+v, want the spec's node, demo/web and its what-if", reviewer.node, reviewer.svc, reviewer.whatIf)
			}
			got := obj.(*topology.TopologyReview).Status
			if got.Rule != "SuperEdge" || got.Route != "fallback-1" || len(got.Tiers) != 2 || !got.Tiers[1].Chosen || got.Tiers[1].Ready != 4 ||
				got.Tiers[0].Total != 3 || got.Addresses[0] != "10.0.0.1" || !strings.Contains(got.Reason, "fell back") {
				t.Errorf("status %+v does not carry the review", got)
			}
		})
	}
}
