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

package validation

import (
	"fmt"
	"testing"

	"github.com/gridview/gridview/apis/topology"
)

func TestValidateTopologyReview(t *testing.T) {
	valid := func() *topology.TopologyReview {
		return &topology.TopologyReview{Spec: topology.TopologyReviewSpec{
			NodeName: "edge-1", ServiceName: "web",
			NodeLabels:   map[string]string{"superedge.io/nodeunit": "u2"},
			UnreadyNodes: []string{"edge-2", "edge-3.site"},
		}}
	}
	tooMany := valid()
	tooMany.Spec.UnreadyNodes = nil
	for i := range MaxUnreadyNodes + 1 {
		tooMany.Spec.UnreadyNodes = append(tooMany.Spec.UnreadyNodes, fmt.Sprintf("n%d", i))
	}
	cases := []struct {
		name   string
		review *topology.TopologyReview
		want   []string
	}{
		{name: "valid", review: valid()},
		{name: "only the required fields", review: &topology.TopologyReview{Spec: topology.TopologyReviewSpec{NodeName: "n", ServiceName: "s"}}},
		{name: "nothing asked", review: &topology.TopologyReview{}, want: []string{"FieldValueRequired spec.nodeName", "FieldValueRequired spec.serviceName"}},
		{name: "a node name that is no DNS subdomain", review: with(valid(), func(r *topology.TopologyReview) { r.Spec.NodeName = "Edge_1" }), want: []string{"FieldValueInvalid spec.nodeName"}},
		{name: "a Service name that is no DNS label", review: with(valid(), func(r *topology.TopologyReview) { r.Spec.ServiceName = "web.x" }), want: []string{"FieldValueInvalid spec.serviceName"}},
		{name: "a label key that is not qualified", review: with(valid(), func(r *topology.TopologyReview) { r.Spec.NodeLabels = map[string]string{"a/b/c": "x"} }), want: []string{"FieldValueInvalid spec.nodeLabels"}},
		{name: "a label value too long", review: with(valid(), func(r *topology.TopologyReview) {
			r.Spec.NodeLabels = map[string]string{"unit": fmt.Sprintf("%064d", 0)}
		}), want: []string{"FieldValueInvalid spec.nodeLabels"}},
		{name: "an unready node twice", review: with(valid(), func(r *topology.TopologyReview) { r.Spec.UnreadyNodes = []string{"a", "b", "a"} }), want: []string{"FieldValueDuplicate spec.unreadyNodes[2]"}},
		{name: "an empty unready node", review: with(valid(), func(r *topology.TopologyReview) { r.Spec.UnreadyNodes = []string{"a", ""} }), want: []string{"FieldValueInvalid spec.unreadyNodes[1]"}},
		{name: "too many unready nodes", review: tooMany, want: []string{"FieldValueTooMany spec.unreadyNodes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, ValidateTopologyReview(tc.review), tc.want)
		})
	}
}

func with(r *topology.TopologyReview, change func(*topology.TopologyReview)) *topology.TopologyReview {
	change(r)
	return r
}
