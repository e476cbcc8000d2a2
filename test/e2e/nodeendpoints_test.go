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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Until the topology engine feeds it, NodeEndpoints serves no view: an empty
// list, 404 on get and a watch error that is not 410.
func TestNodeEndpointsWithoutViews(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	for _, namespace := range []string{ns, metav1.NamespaceAll} {
		list, err := gridview.TopologyV1alpha1().NodeEndpoints(namespace).List(ctx, metav1.ListOptions{FieldSelector: "nodeName=edge-1"})
		if err != nil {
			t.Fatalf("list in %q: %v", namespace, err)
		}
		if len(list.Items) != 0 || list.ResourceVersion == "" {
			t.Errorf("list in %q = %d items, rv %q; want none with a resourceVersion", namespace, len(list.Items), list.ResourceVersion)
		}
	}
	if _, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).Get(ctx, "edge-1.echo-svc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get: %v, want NotFound", err)
	}
	_, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).Watch(ctx, metav1.ListOptions{})
	if err == nil || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		t.Errorf("watch: %v, want a clear error that is not 410", err)
	}
	if _, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=edge-1"}); !apierrors.IsBadRequest(err) {
		t.Errorf("list with an unknown field selector: %v, want 400", err)
	}
	out := mustKubectl(t, "get", "nodeendpoints", "-n", ns)
	if out != "No resources found in "+ns+" namespace.\n" {
		t.Errorf("kubectl get nodeendpoints: %q", out)
	}
}
