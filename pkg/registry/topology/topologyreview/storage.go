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

// Package topologyreview answers TopologyReviews: why a node routes a
// Service's traffic where it does, or where it would under a what-if. A
// review is computed from the replica's own views when it is created and
// never stored, like a SubjectAccessReview.
package topologyreview

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/apis/topology/validation"
	"github.com/gridview/gridview/pkg/registry/topology/nodeendpoints"
	topologyengine "github.com/gridview/gridview/pkg/topology"
)

var (
	_ rest.Storage              = &storage{}
	_ rest.Creater              = &storage{}
	_ rest.Scoper               = &storage{}
	_ rest.SingularNameProvider = &storage{}
)

// Reviewer computes reviews from the current views.
type Reviewer interface {
	Review(node string, svc types.NamespacedName, whatIf topologyengine.WhatIf) (topologyengine.Review, error)
}

type storage struct {
	reviews    Reviewer
	authorizer authorizer.Authorizer
}

// NewStorage returns the create-only storage of topologyreviews; authorizer
// decides whether a requester may get the reviewed Service.
func NewStorage(reviews Reviewer, authz authorizer.Authorizer) rest.Storage {
	return &storage{reviews: reviews, authorizer: authz}
}

func (*storage) New() runtime.Object     { return &topology.TopologyReview{} }
func (*storage) Destroy()                {}
func (*storage) NamespaceScoped() bool   { return true }
func (*storage) GetSingularName() string { return "topologyreview" }

func (s *storage) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	review, ok := obj.(*topology.TopologyReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TopologyReview: %T", obj))
	}
	namespace := genericapirequest.NamespaceValue(ctx)
	if errs := validation.ValidateTopologyReview(review); len(errs) > 0 {
		return nil, apierrors.NewInvalid(topology.Kind("TopologyReview"), review.Name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if err := s.authorize(ctx, namespace, &review.Spec); err != nil {
		return nil, err
	}
	answer, err := s.reviews.Review(review.Spec.NodeName, types.NamespacedName{Namespace: namespace, Name: review.Spec.ServiceName}, whatIf(&review.Spec))
	if err != nil {
		return nil, err
	}
	out := review.DeepCopy()
	out.Status = status(answer)
	return out, nil
}

// whatIf is what a spec asks instead of the cluster's state. Empty node
// labels ask nothing: protobuf, and JSON's omitempty on the way back, cannot
// tell them from none.
func whatIf(spec *topology.TopologyReviewSpec) topologyengine.WhatIf {
	var w topologyengine.WhatIf
	if len(spec.NodeLabels) > 0 {
		w.NodeLabels = spec.NodeLabels
	}
	if len(spec.UnreadyNodes) > 0 {
		w.UnreadyNodes = sets.New(spec.UnreadyNodes...)
	}
	return w
}

// authorize lets a requester review a Service it may get, and a node only
// itself. A review also tells the ready addresses a node routes to: a node
// reads those of its own state in its views anyway, but anyone else, and a
// node asking what-ifs (whose answers are other units' endpoints), must be
// allowed to read them in the Service's EndpointSlices: getting a Service does
// not grant its endpoints.
func (s *storage) authorize(ctx context.Context, namespace string, spec *topology.TopologyReviewSpec) error {
	requester, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return forbidden(fmt.Errorf("the request has no user"))
	}
	node, isNode, err := nodeendpoints.NodeOf(requester)
	if err != nil {
		return forbidden(err)
	}
	if isNode && node != spec.NodeName {
		return forbidden(fmt.Errorf("node %s may review only itself, not node %s", node, spec.NodeName))
	}
	needs := []authorizer.AttributesRecord{{
		Verb: "get", Namespace: namespace, Resource: "services", Name: spec.ServiceName, APIVersion: "v1",
	}}
	if w := whatIf(spec); !isNode || w.NodeLabels != nil || w.UnreadyNodes != nil {
		needs = append(needs, authorizer.AttributesRecord{
			Verb: "list", Namespace: namespace, APIGroup: "discovery.k8s.io", Resource: "endpointslices", APIVersion: "v1",
		})
	}
	for _, need := range needs {
		need.User, need.ResourceRequest = requester, true
		decision, reason, err := s.authorizer.Authorize(ctx, need)
		if decision == authorizer.DecisionAllow {
			continue
		}
		why := fmt.Sprintf("user %q cannot %s %s in namespace %q, which reviewing Service %s needs", requester.GetName(), need.Verb, need.Resource, namespace, spec.ServiceName)
		if reason != "" {
			why += ": " + reason
		}
		if err != nil {
			why += ": " + err.Error()
		}
		return forbidden(fmt.Errorf("%s", why))
	}
	return nil
}

func forbidden(err error) error {
	return apierrors.NewForbidden(topology.Resource("topologyreviews"), "", err)
}

func status(r topologyengine.Review) topology.TopologyReviewStatus {
	out := topology.TopologyReviewStatus{Rule: r.Rule, Mode: r.Mode, Route: r.Position, Addresses: r.Addresses, Reason: r.Reason}
	for _, t := range r.Tiers {
		out.Tiers = append(out.Tiers, topology.TopologyTier{
			Key: t.Key, Value: t.Value, Ready: int32(t.Ready), Total: int32(t.Total), MinReady: int32(t.MinReady), Chosen: t.Chosen,
		})
	}
	return out
}
