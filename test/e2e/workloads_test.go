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
	"net/netip"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/e2e/nftrules"
	"github.com/gridview/gridview/test/localcluster"
)

// A Deployment of 30 replicas over two units rolls (kubectl rollout
// restart) while a node's wrapper and real kube-proxy follow its Service,
// whose slices the EndpointSlice controller writes as Pods come, turn Ready
// and go: at every change of the node's ruleset, the node routes only to
// Pods of its own unit, never to none, and at the end to exactly the new
// Pods of its unit.
func TestARolloutKeepsANodeInItsUnit(t *testing.T) {
	ctx := context.Background()
	s := newRuleSite(t, map[string]map[string]string{
		"a0": {framework.UnitKey: "a"}, "a1": {framework.UnitKey: "a"}, "a2": {framework.UnitKey: "a"},
		"b0": {framework.UnitKey: "b"}, "b1": {framework.UnitKey: "b"}, "b2": {framework.UnitKey: "b"},
	})
	ns, unitA := s.NS, s.Unit("a")
	s.createService(t, "web", func(svc *corev1.Service) {
		svc.Annotations[topology.AnnotationTopologyKeys] = `["` + framework.UnitKey + `"]`
	})
	if _, err := kubeClient.AppsV1().Deployments(ns).Create(ctx, webDeployment(30, unitA, s.Unit("b")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 2*time.Minute, "30 Pods in the Service's EndpointSlices", func(ctx context.Context) error {
		return localcluster.CheckWorkloads(ctx, kubeClient, ns)
	})

	n := nodeNetns(t, s.Node("a0"))
	w := startWrapper(t, n)
	proc := startKubeProxy(t, n, w.kubeconfig())
	pods := podsByIP(t, s)
	expectProgrammed(t, n, proc, ns, "web", 80, readyIn(pods, unitA))

	mustKubectl(t, "rollout", "restart", "deployment/web", "-n", ns)
	clusterIP := netip.MustParseAddr(mustService(t, ns, "web").Spec.ClusterIP)
	last := readyIn(pods, unitA)
	changes := 0
	deadline := time.Now().Add(3 * time.Minute)
	for {
		rolled := localcluster.CheckWorkloads(ctx, kubeClient, ns) == nil
		ruleset, err := n.NftRuleset(ctx)
		if err != nil {
			t.Fatal(err)
		}
		routed, err := nftrules.EndpointIPs(ruleset, clusterIP, 80, string(corev1.ProtocolTCP))
		if err != nil {
			t.Fatal(err)
		}
		// Pods listed after the ruleset was read: every Pod it names
		// has been seen, whatever happened to it since.
		for ip, pod := range podsByIP(t, s) {
			pods[ip] = pod
		}
		if !slices.Equal(routed, last) {
			changes++
			if len(routed) == 0 {
				t.Fatalf("change %d: %s routes web nowhere while unit a runs Pods", changes, n.NodeName)
			}
			for _, ip := range routed {
				if pod, ok := pods[ip]; !ok || pod.unit != unitA {
					t.Fatalf("change %d: %s routes web to %s, a Pod of unit %q (all: %v)", changes, n.NodeName, ip, pod.unit, routed)
				}
			}
			last = routed
		}
		if rolled && slices.Equal(routed, readyIn(podsByIP(t, s), unitA)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 minutes the rollout is not over or %s routes web to %v, its unit's ready Pods being %v (kube-proxy log: %s)",
				n.NodeName, routed, readyIn(podsByIP(t, s), unitA), proc.LogFile)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A rollout of 30 in steps of a quarter changes the route several
	// times: through new Pods and old ones together, to the new alone.
	if changes < 2 {
		t.Errorf("the ruleset changed %d times during the rollout: the test did not see it", changes)
	}
	t.Logf("%s followed the rollout through %d changes of its ruleset", n.NodeName, changes)
}

// deleteNamespaceAndPods deletes ns and, at once, its Pods, and lets the
// namespace go in the background. Cleanups call it before they delete the
// Nodes the namespace's Pods ran on: kwok runs no Pod of a deleted Node,
// whose Pods would then stay until kube's Pod garbage collection. A
// terminating namespace takes no new Pod: none of its controllers' comes
// back.
func deleteNamespaceAndPods(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := kubeClient.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
	if err := kubeClient.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		t.Error(err)
	}
}

// deleteNamespaceAndWait deletes ns and waits, at most timeout, until it is
// gone.
func deleteNamespaceAndWait(t *testing.T, ns string, timeout time.Duration) {
	t.Helper()
	ctx := context.Background()
	err := kubeClient.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, timeout, "namespace "+ns+" gone", func(ctx context.Context) error {
		_, err := kubeClient.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return framework.Gone(err)
	})
}

// A deleted namespace with a Deployment and a ServiceGrid is gone within a
// minute, as in any cluster, and so are its views.
func TestADeletedNamespaceGoes(t *testing.T) {
	ctx := context.Background()
	s := newRuleSite(t, map[string]map[string]string{"a0": {framework.UnitKey: "a"}, "a1": {framework.UnitKey: "a"}})
	ns, node := s.NS, s.Node("a0")
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kubeClient.AppsV1().Deployments(ns).Create(ctx, webDeployment(4, s.Unit("a")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, time.Minute, "the ServiceGrid's Service routing to the Deployment's Pods", func(ctx context.Context) error {
		if err := localcluster.CheckWorkloads(ctx, kubeClient, ns); err != nil {
			return err
		}
		addresses, err := framework.ServiceAddresses(ctx, gridview, ns, node, "web-svc")
		if err == nil && len(addresses) != 4 {
			err = fmt.Errorf("%s routes web-svc to %v", node, addresses)
		}
		return err
	})
	deleteNamespaceAndWait(t, ns, time.Minute)
	localcluster.Eventually(t, 10*time.Second, "no view of the deleted namespace", func(ctx context.Context) error {
		views, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(views.Items) != 0 {
			err = fmt.Errorf("%d views", len(views.Items))
		}
		return err
	})
}

// webDeployment runs replicas Pods labelled app=web on the nodes of units,
// spread evenly over them.
func webDeployment(replicas int32, units ...string) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchExpressions: []corev1.NodeSelectorRequirement{{Key: framework.UnitKey, Operator: corev1.NodeSelectorOpIn, Values: units}},
						}}},
					}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: framework.UnitKey, WhenUnsatisfiable: corev1.DoNotSchedule,
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
					}},
					Containers: []corev1.Container{echoContainer()},
				},
			},
		},
	}
}

// echoPort is the port of echoContainer, which the Services target.
const echoPort = 8080

// echoContainer is the one container of every Pod the tests run: kwok runs
// none of it, and its port is what the Services target.
func echoContainer() corev1.Container {
	return corev1.Container{Name: "echo", Image: "registry.k8s.io/e2e-test-images/agnhost:2.53",
		Ports: []corev1.ContainerPort{{ContainerPort: echoPort}}}
}

// podOnNode is a Pod labelled app=app, bound to node without the scheduler.
func podOnNode(name, app, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{echoContainer()}},
	}
}

type sitePod struct {
	unit  string // the value of its Node's framework.UnitKey label
	ready bool
}

// podsByIP maps the site's Pods with an IP to their unit and readiness.
func podsByIP(t *testing.T, s ruleSite) map[string]sitePod {
	t.Helper()
	unitOf := map[string]string{}
	for name, labels := range s.nodes {
		unitOf[s.Node(name)] = labels[framework.UnitKey]
	}
	list, err := kubeClient.CoreV1().Pods(s.NS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sitePod{}
	for _, pod := range list.Items {
		if pod.Status.PodIP == "" {
			continue
		}
		ready := pod.DeletionTimestamp == nil && localcluster.PodReady(&pod)
		out[pod.Status.PodIP] = sitePod{unit: unitOf[pod.Spec.NodeName], ready: ready}
	}
	return out
}

// readyIn lists, sorted, the IPs of the ready Pods of unit.
func readyIn(pods map[string]sitePod, unit string) []string {
	ips := []string{}
	for ip, pod := range pods {
		if pod.unit == unit && pod.ready {
			ips = append(ips, ip)
		}
	}
	slices.Sort(ips)
	return ips
}
