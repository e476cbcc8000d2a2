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
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/pkg/topology"
)

// nodeClient reads gridview with a real node client certificate
// (CN=system:node:<node>, O=system:nodes), as a wrapper with its kubelet's
// credentials would.
func nodeClient(t *testing.T, node string) versioned.Interface {
	t.Helper()
	path := filepath.Join(t.TempDir(), node+".kubeconfig")
	if err := cluster.WriteClientCertKubeconfig(path, "system:node:"+node, "system:nodes"); err != nil {
		t.Fatal(err)
	}
	config, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	client, err := versioned.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// A node reads its own views only, whatever RBAC grants (the wrapper's
// deploy RBAC lets every node read NodeEndpoints, so that kube-apiserver
// passes the request on); the refusal says why.
func TestNodesReadOnlyTheirOwnViews(t *testing.T) {
	s := newSite(t)
	applyWrapperRBAC(t)
	s.expectViews(t, "a1", map[string][]string{"grid": s.podIPs(t, "grid", "a1", "a2")})
	ctx := context.Background()
	a1 := nodeClient(t, s.Node("a1")).TopologyV1alpha1()
	own := metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1")}

	list, err := a1.NodeEndpoints("").List(ctx, own)
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("a1 listing its own views: %v, %v", list, err)
	}
	for _, view := range list.Items {
		if view.NodeName != s.Node("a1") {
			t.Errorf("a1 got a view of %s", view.NodeName)
		}
	}
	w, err := a1.NodeEndpoints(s.NS).Watch(ctx, own)
	if err != nil {
		t.Fatalf("a1 watching its own views: %v", err)
	}
	w.Stop()
	if _, err := a1.NodeEndpoints(s.NS).Get(ctx, s.view(t, "a1", "grid"), metav1.GetOptions{}); err != nil {
		t.Errorf("a1 getting its own view: %v", err)
	}
	// With a Service too, as a wrapper may select one Service's slices.
	ofGrid, err := a1.NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a1") + ",serviceName=grid"})
	if err != nil || len(ofGrid.Items) != 1 || ofGrid.Items[0].Name != s.view(t, "a1", "grid") {
		t.Errorf("a1 listing its own views of grid: %v, %v", ofGrid, err)
	}

	a2View := s.view(t, "a2", "grid")
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{name: "list without a node", call: func() error { _, err := a1.NodeEndpoints("").List(ctx, metav1.ListOptions{}); return err },
			want: "fieldSelector nodeName=" + s.Node("a1")},
		{name: "list another node's", call: func() error {
			_, err := a1.NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a2")})
			return err
		}, want: "only its own views"},
		{name: "list a Service's without a node", call: func() error {
			_, err := a1.NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "serviceName=grid"})
			return err
		}, want: "fieldSelector nodeName=" + s.Node("a1")},
		{name: "list with a different operator", call: func() error {
			_, err := a1.NodeEndpoints(s.NS).List(ctx, metav1.ListOptions{FieldSelector: "nodeName!=" + s.Node("a2")})
			return err
		}, want: "fieldSelector nodeName="},
		{name: "watch without a node", call: func() error {
			w, err := a1.NodeEndpoints(s.NS).Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}, want: "fieldSelector nodeName="},
		{name: "watch another node's", call: func() error {
			w, err := a1.NodeEndpoints(s.NS).Watch(ctx, metav1.ListOptions{FieldSelector: "nodeName=" + s.Node("a2")})
			if err == nil {
				w.Stop()
			}
			return err
		}, want: "fieldSelector nodeName=" + s.Node("a1")},
		{name: "get another node's", call: func() error {
			_, err := a1.NodeEndpoints(s.NS).Get(ctx, a2View, metav1.GetOptions{})
			return err
		}, want: "may read only its own views"},
		// Its own name and a separator, then no slice name: no view of a1.
		{name: "get a name that only starts as its own", call: func() error {
			_, err := a1.NodeEndpoints(s.NS).Get(ctx, topology.Name(s.Node("a1"), topology.Name("grid", "x")), metav1.GetOptions{})
			return err
		}, want: "may read only its own views"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want 403 saying %q", err, tc.want)
			}
		})
	}

	// Anyone else is authorized by the cluster: a user without RBAC is refused.
	if _, err := as(t, "nobody").TopologyV1alpha1().NodeEndpoints(s.NS).List(ctx, own); !apierrors.IsForbidden(err) {
		t.Errorf("a user without RBAC: %v, want 403", err)
	}
}

// A member of system:nodes whose user name is no node's identity is refused,
// though the wrapper's RBAC grants the group every view: were it passed on to
// the cluster's authorizer, it would read every node's views. A bootstrap
// token or a misissued certificate can carry such an identity.
func TestMalformedNodeIdentitiesAreRefused(t *testing.T) {
	s := newSite(t)
	applyWrapperRBAC(t)
	s.expectViews(t, "a1", map[string][]string{"grid": s.podIPs(t, "grid", "a1", "a2")})
	ctx := context.Background()
	for _, tc := range []struct {
		name, user, want string
	}{
		{name: "the prefix alone", user: "system:node:", want: `"" is not a node name`},
		{name: "no prefix", user: s.Node("a1"), want: "is not named system:node:<node name>"},
		{name: "not a node name", user: "system:node:" + strings.ToUpper(s.Node("a1")), want: "is not a node name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := rest.CopyConfig(cluster.AdminConfig)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: tc.user, Groups: []string{"system:nodes"}}
			client, err := versioned.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for what, opts := range map[string]metav1.ListOptions{
				"every node's views": {},
				"a1's views":         {FieldSelector: "nodeName=" + s.Node("a1")},
			} {
				_, err := client.TopologyV1alpha1().NodeEndpoints("").List(ctx, opts)
				if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("listing %s: %v; want 403 saying %q", what, err, tc.want)
				}
			}
		})
	}
}
