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

package servicegrid

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	gridviewfake "github.com/gridview/gridview/generated/clientset/versioned/fake"
	"github.com/gridview/gridview/pkg/topology"
)

// Each step writes spec.minReady and syncs once; the Service's annotation
// follows, and goes with the field, since gridview applies it.
func TestSyncRendersMinReady(t *testing.T) {
	ctx := context.Background()
	grid := echoGrid()
	grid.Spec.Fallback = v1alpha1.FallbackAny
	kube := kubefake.NewClientset()
	gridview := gridviewfake.NewSimpleClientset(grid)
	c, _ := newTestController(t, kube, gridview)
	steps := []struct {
		name     string
		minReady *v1alpha1.MinReady
		want     string // "": no annotation
	}{
		{name: "a default", minReady: &v1alpha1.MinReady{Default: ptr.To[int32](2)}, want: "2"},
		{name: "changed to a count per key", minReady: &v1alpha1.MinReady{PerKey: []v1alpha1.KeyMinReady{{Key: "superedge.io/nodeunit", Count: 3}}},
			want: "superedge.io/nodeunit=3"},
		{name: "removed"},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			stored, err := gridview.TopologyV1alpha1().ServiceGrids("demo").Get(ctx, "echo", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			stored.Spec.MinReady = step.minReady
			if _, err := gridview.TopologyV1alpha1().ServiceGrids("demo").Update(ctx, stored, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := c.sync(ctx, cache.ObjectName{Namespace: "demo", Name: "echo"}); err != nil {
				t.Fatalf("sync: %v", err)
			}
			svc, err := kube.CoreV1().Services("demo").Get(ctx, "echo-svc", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := svc.Annotations[topology.AnnotationMinReady]
			if got != step.want || ok != (step.want != "") {
				t.Errorf("annotation %s = %q (present: %v), want %q", topology.AnnotationMinReady, got, ok, step.want)
			}
		})
	}
}
