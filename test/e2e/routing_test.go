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
	"strings"
	"testing"
	"time"

	"github.com/gridview/gridview/test/localcluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// expectDemoRoutingReported checks what gridview reports of the demo's
// routing: edge-5, alone in unit-c, routes echo-svc (any-match on the unit,
// no fallback) nowhere, which its metrics count and one Warning Event on the
// Service says.
func expectDemoRoutingReported(t *testing.T) {
	t.Helper()
	localcluster.Eventually(t, 20*time.Second, "the routing metrics of the demo", func(ctx context.Context) error {
		body, err := get(ctx, t, cluster.GridviewConfig(), "/metrics", nil)
		if err != nil {
			return err
		}
		for _, want := range []string{
			`gridview_service_nodes_without_endpoints{namespace="demo",service="echo-svc"} 1`,
			`gridview_routing_nodes{route="none",rule="SuperEdge"}`,
			`gridview_routing_nodes{route="fallback-1",rule="Gridview"}`,
			`gridview_routing_nodes{route="local",rule="Gridview"}`,
		} {
			if !strings.Contains(body, want) {
				return fmt.Errorf("/metrics has no %s", want)
			}
		}
		if strings.Contains(body, `gridview_service_nodes_without_endpoints{namespace="demo",service="ordered"}`) {
			return fmt.Errorf("/metrics counts nodes without endpoints of ordered, which falls back to \"*\"")
		}
		return nil
	})
	svc, err := kubeClient.CoreV1().Services("demo").Get(context.Background(), "echo-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []corev1.Event
	localcluster.Eventually(t, 20*time.Second, "a NoEndpointsForNodes Warning on demo/echo-svc", func(ctx context.Context) error {
		events, err := kubeClient.CoreV1().Events("demo").List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": "Service", "involvedObject.name": "echo-svc", "involvedObject.uid": string(svc.UID), "reason": "NoEndpointsForNodes",
		}.String()})
		if err != nil {
			return err
		}
		if warnings = events.Items; len(warnings) == 0 {
			return fmt.Errorf("no such Event")
		}
		return nil
	})
	if w := warnings[0]; w.Type != corev1.EventTypeWarning || !strings.Contains(w.Message, "1 node routes this Service to no endpoint") ||
		!strings.Contains(w.Message, "edge-5") || !strings.Contains(w.Message, "superedge.io/nodeunit=unit-c") {
		t.Errorf("the Warning says %s %q, want edge-5 of unit-c named", w.Type, w.Message)
	}
	// Deduplicated: the passes that follow, every 2 s, send no other.
	time.Sleep(5 * time.Second)
	events, err := kubeClient.CoreV1().Events("demo").List(context.Background(), metav1.ListOptions{FieldSelector: "reason=NoEndpointsForNodes"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) != 1 || events.Items[0].Count > 1 {
		t.Errorf("NoEndpointsForNodes Events %v, want one, sent once", events.Items)
	}
}
