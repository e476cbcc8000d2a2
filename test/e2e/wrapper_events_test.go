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
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gridview/gridview/test/e2e/framework"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The wrapper writes Events with the node's credentials, which may write
// any Event in any namespace; a process on the node gets through it only
// what kube-proxy writes, and cannot impersonate anyone.
// TestWrapperFeedsKubeProxyItsNodesView shows kube-proxy's own Events pass.
func TestWrapperForwardsOnlyKubeProxysEvents(t *testing.T) {
	s := newRuleSite(t, framework.SiteNodes())
	n := nodeNetns(t, s.Node("a1"))
	w := startWrapper(t, n)
	node := n.NodeName
	// Names of the test's own: Events in default are shared by all tests.
	event := func(name, namespace string, regarding corev1.ObjectReference) runtime.Object {
		return &eventsv1.Event{
			TypeMeta:   metav1.TypeMeta{APIVersion: eventsv1.SchemeGroupVersion.String(), Kind: "Event"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: node + "." + s.NS + "-" + name},
			EventTime:  metav1.NowMicro(), Regarding: regarding, Reason: "Starting", Action: "StartKubeProxy", Type: corev1.EventTypeNormal,
			ReportingController: "kube-proxy", ReportingInstance: "kube-proxy-" + node,
		}
	}
	thisNode := corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node}
	kubelets := event("kubelet", "default", thisNode).(*eventsv1.Event)
	kubelets.ReportingController, kubelets.ReportingInstance = "kubelet", node
	kubelets.Reason, kubelets.Action, kubelets.Type = "NodeNotReady", "NodeNotReady", corev1.EventTypeWarning
	const eventsPath = "/apis/events.k8s.io/v1/namespaces/"
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		object  runtime.Object
		headers []string
		want    int
	}{
		{name: "kube-proxy's", path: eventsPath + "default/events", object: event("own", "default", thisNode), want: http.StatusCreated},
		// Another process on the node: it cannot spend kube-proxy's budget.
		{name: "kube-proxy's, without its token", path: eventsPath + "default/events", object: event("no-token", "default", thisNode),
			headers: []string{"Authorization:"}, want: http.StatusUnauthorized},
		{name: "impersonating an administrator", path: eventsPath + "default/events", object: event("impersonating", "default", thisNode),
			headers: []string{"Impersonate-User: system:admin", "Impersonate-Group: system:masters"}, want: http.StatusCreated},
		{name: "the kubelet's NodeNotReady", path: eventsPath + "default/events", object: kubelets, want: http.StatusForbidden},
		{name: "about another node", path: eventsPath + "default/events",
			object: event("other-node", "default", corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: s.Node("a2")}), want: http.StatusForbidden},
		{name: "about a Pod", path: eventsPath + s.NS + "/events",
			object: event("pod", s.NS, corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: s.NS, Name: "victim"}), want: http.StatusForbidden},
		{name: "a core Event about the node", path: "/api/v1/namespaces/default/events", object: &corev1.Event{
			TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
			ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: node + "." + s.NS + "-core"},
			InvolvedObject: thisNode, Reason: "Starting", Type: corev1.EventTypeNormal,
		}, want: http.StatusForbidden},
		{name: "a patch of kube-proxy's", method: http.MethodPatch, path: eventsPath + "default/events/" + node + "." + s.NS + "-own", want: http.StatusForbidden},
	} {
		// Created Events outlive their case: the patch case targets one.
		cleanup := t.Cleanup
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// The patch is the one client-go's events library sends for a
			// series, which the node could otherwise write.
			series := fmt.Sprintf(`{"series":{"count":2,"lastObservedTime":%q}}`, time.Now().UTC().Format(metav1.RFC3339Micro))
			method, body, contentType := tc.method, []byte(series), "application/merge-patch+json"
			if method == "" {
				method, contentType = http.MethodPost, "application/json"
				var err error
				if body, err = json.Marshal(tc.object); err != nil {
					t.Fatal(err)
				}
			}
			code, response, err := w.request(ctx, method, tc.path, body, append([]string{"Content-Type: " + contentType}, tc.headers...)...)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Fatalf("%s %s: %d %s, want %d", method, tc.path, code, response, tc.want)
			}
			if tc.object == nil {
				return
			}
			meta := tc.object.(metav1.Object)
			_, err = kubeClient.EventsV1().Events(meta.GetNamespace()).Get(ctx, meta.GetName(), metav1.GetOptions{})
			if created := err == nil; created != (tc.want == http.StatusCreated) || err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("the Event %s/%s: created %v (%v)", meta.GetNamespace(), meta.GetName(), created, err)
			}
			if err == nil {
				cleanup(func() {
					_ = kubeClient.EventsV1().Events(meta.GetNamespace()).Delete(context.Background(), meta.GetName(), metav1.DeleteOptions{})
				})
			}
		})
	}
}
