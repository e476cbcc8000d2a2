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
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cluster's authorizer, under the deploy RBAC the harness applied, lets
// gridview-apiserver's ServiceAccount at no Lease: its replicas elect their
// leader in gridview's own etcd, so it has no business with the Leases that
// elect kube-scheduler and kube-controller-manager, nor the node heartbeats.
func TestGridviewReachesNoLease(t *testing.T) {
	tests := []struct {
		name      string
		attrs     authorizationv1.ResourceAttributes
		wantAllow bool
	}{
		{name: "the Lease of its former election", attrs: authorizationv1.ResourceAttributes{
			Namespace: "gridview-system", Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: "gridview-servicegrid-controller"}},
		{name: "creating a Lease in its namespace", attrs: authorizationv1.ResourceAttributes{
			Namespace: "gridview-system", Verb: "create", Group: "coordination.k8s.io", Resource: "leases"}},
		{name: "kube-scheduler's Lease", attrs: authorizationv1.ResourceAttributes{
			Namespace: "kube-system", Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: "kube-scheduler"}},
		{name: "a node heartbeat", attrs: authorizationv1.ResourceAttributes{
			Namespace: "kube-node-lease", Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Name: "edge-1"}},
		{name: "creating Leases elsewhere", attrs: authorizationv1.ResourceAttributes{
			Namespace: "kube-system", Verb: "create", Group: "coordination.k8s.io", Resource: "leases"}},
		{name: "another Lease of its namespace", attrs: authorizationv1.ResourceAttributes{
			Namespace: "gridview-system", Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: "someone-else"}},
		{name: "another Secret of its namespace", attrs: authorizationv1.ResourceAttributes{
			Namespace: "gridview-system", Verb: "get", Resource: "secrets", Name: "someone-elses"}},
		{name: "another APIService", attrs: authorizationv1.ResourceAttributes{
			Verb: "patch", Group: "apiregistration.k8s.io", Resource: "apiservices", Name: "v1beta1.metrics.k8s.io"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			review, err := kubeClient.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{
					User:               "system:serviceaccount:gridview-system:gridview-apiserver",
					Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:gridview-system", "system:authenticated"},
					ResourceAttributes: &tc.attrs,
				},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if review.Status.Allowed != tc.wantAllow {
				t.Errorf("gridview-apiserver may %s %+v: %t (%s), want %t", tc.attrs.Verb, tc.attrs, review.Status.Allowed, review.Status.Reason, tc.wantAllow)
			}
		})
	}
}
