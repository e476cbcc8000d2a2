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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	gridviewwrapper "github.com/gridview/gridview/pkg/wrapper"
	"github.com/gridview/gridview/test/e2e/framework"
)

// annotateKubernetesEndpoints sets (or, with nil values, removes) SuperEdge's
// local-endpoint annotations on the default/kubernetes Endpoints.
func annotateKubernetesEndpoints(t *testing.T, ip, port *string) {
	t.Helper()
	value := func(v *string) string {
		if v == nil {
			return "null"
		}
		return fmt.Sprintf("%q", *v)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s,%q:%s}}}`,
		gridviewwrapper.AnnotationLocalEndpoint, value(ip), gridviewwrapper.AnnotationLocalPort, value(port))
	if _, err := kubeClient.CoreV1().Endpoints("default").Patch(context.Background(), "kubernetes", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// With SuperEdge's annotations on default/kubernetes, kube-proxy routes the
// kubernetes Service to the edge-local API server only; a bad value keeps
// the real endpoints; removing the annotations brings them back, all without
// restarting the wrapper.
func TestWrapperServesAnEdgeLocalKubernetesEndpoint(t *testing.T) {
	s := newRuleSite(t, framework.SiteNodes())
	n := nodeNetns(t, s.Node("a1"))
	w := startWrapper(t, n)
	proc := startKubeProxy(t, n, w.kubeconfig())
	t.Cleanup(func() { annotateKubernetesEndpoints(t, nil, nil) })

	real, err := kubeClient.CoreV1().Endpoints("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil || len(real.Subsets) == 0 || len(real.Subsets[0].Addresses) == 0 {
		t.Fatalf("the kubernetes Endpoints: %v, %v", real, err)
	}
	realEndpoints := []string{real.Subsets[0].Addresses[0].IP}
	expectProgrammed(t, n, proc, "default", "kubernetes", 443, realEndpoints)

	annotateKubernetesEndpoints(t, ptr.To("169.254.20.10"), ptr.To("51003"))
	expectProgrammedWithin(t, 5*time.Second, n, proc, "default", "kubernetes", 443, []string{"169.254.20.10"})

	bad := w.metric("gridview_wrapper_local_endpoint_invalid_total")
	annotateKubernetesEndpoints(t, ptr.To("169.254.20.10"), ptr.To("70000"))
	expectProgrammedWithin(t, 5*time.Second, n, proc, "default", "kubernetes", 443, realEndpoints)
	if counted := w.metric("gridview_wrapper_local_endpoint_invalid_total") - bad; counted != 1 {
		t.Errorf("the bad port was counted %v times, want once", counted)
	}

	annotateKubernetesEndpoints(t, ptr.To("169.254.20.11"), ptr.To("51003"))
	expectProgrammedWithin(t, 5*time.Second, n, proc, "default", "kubernetes", 443, []string{"169.254.20.11"})
	annotateKubernetesEndpoints(t, nil, nil)
	expectProgrammedWithin(t, 5*time.Second, n, proc, "default", "kubernetes", 443, realEndpoints)
}
