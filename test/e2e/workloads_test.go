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
	"k8s.io/apimachinery/pkg/util/intstr"
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
	ns := testNamespace(t)
	nodes, unitOf := workloadSite(t, ns, "a", "a", "a", "b", "b", "b")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{topology.AnnotationTopologyKeys: `["` + unitKey + `"]`}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := kubeClient.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kubeClient.AppsV1().Deployments(ns).Create(ctx, webDeployment(ns, 30), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "30 Pods in the Service's EndpointSlices", func(ctx context.Context) error {
		return localcluster.CheckWorkloads(ctx, kubeClient, ns)
	})

	n := nodeNetns(t, nodes[0])
	w := startWrapper(t, n)
	proc := startKubeProxy(t, n, w.kubeconfig())
	pods := podsByIP(t, ns, unitOf)
	expectProgrammed(t, n, proc, ns, "web", 80, readyIn(pods, "a"))

	mustKubectl(t, "rollout", "restart", "deployment/web", "-n", ns)
	clusterIP := netip.MustParseAddr(mustService(t, ns, "web").Spec.ClusterIP)
	last := readyIn(pods, "a")
	changes := 0
	deadline := time.Now().Add(3 * time.Minute)
	for {
		rolled := localcluster.CheckWorkloads(ctx, kubeClient, ns) == nil && rolledOut(t, ns)
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
		for ip, pod := range podsByIP(t, ns, unitOf) {
			pods[ip] = pod
		}
		if !slices.Equal(routed, last) {
			changes++
			if len(routed) == 0 {
				t.Fatalf("change %d: %s routes web nowhere while unit a runs Pods", changes, n.NodeName)
			}
			for _, ip := range routed {
				if pod, ok := pods[ip]; !ok || pod.unit != "a" {
					t.Fatalf("change %d: %s routes web to %s, a Pod of unit %q (all: %v)", changes, n.NodeName, ip, pod.unit, routed)
				}
			}
			last = routed
		}
		if rolled && slices.Equal(routed, readyIn(podsByIP(t, ns, unitOf), "a")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 minutes the rollout is not over or %s routes web to %v, its unit's ready Pods being %v (kube-proxy log: %s)",
				n.NodeName, routed, readyIn(podsByIP(t, ns, unitOf), "a"), proc.LogFile)
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

// deleteNamespaceFirst deletes ns and waits until it is gone, before a
// cleanup deletes the Nodes its Pods ran on: kwok runs no Pod of a deleted
// Node, whose Pods would then stay until kube's Pod garbage collection.
func deleteNamespaceFirst(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := kubeClient.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
		return
	}
	eventually(t, 90*time.Second, "namespace "+ns+" gone", func(ctx context.Context) error {
		if _, err := kubeClient.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
}

// workloadSite creates a Node in each of units (of the test's own names)
// for the test's workloads, with the hostname label kubelet sets, and
// returns their names and the unit of each.
func workloadSite(t *testing.T, ns string, units ...string) ([]string, map[string]string) {
	t.Helper()
	unitOf := map[string]string{}
	var nodes []string
	for i, unit := range units {
		name := fmt.Sprintf("%s-%s%d", ns, unit, i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			unitKey: ns + "-" + unit, corev1.LabelHostname: name, "e2e.gridview.io/site": ns,
		}}}
		if _, err := kubeClient.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			deleteNamespaceFirst(t, ns)
			_ = kubeClient.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		unitOf[name], nodes = unit, append(nodes, name)
	}
	return nodes, unitOf
}

// A deleted namespace with a Deployment and a ServiceGrid is gone within a
// minute, as in any cluster, and so are its views.
func TestADeletedNamespaceGoes(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	nodes, _ := workloadSite(t, ns, "a", "a")
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Create(ctx, newServiceGrid("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kubeClient.AppsV1().Deployments(ns).Create(ctx, webDeployment(ns, 4), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the ServiceGrid's Service routing to the Deployment's Pods", func(ctx context.Context) error {
		if err := localcluster.CheckWorkloads(ctx, kubeClient, ns); err != nil {
			return err
		}
		addresses, err := framework.ServiceAddresses(ctx, gridview, ns, nodes[0], "web-svc")
		if err == nil && len(addresses) != 4 {
			err = fmt.Errorf("%s routes web-svc to %v", nodes[0], addresses)
		}
		return err
	})
	if err := kubeClient.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "namespace "+ns+" gone", func(ctx context.Context) error {
		if _, err := kubeClient.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	eventually(t, 10*time.Second, "no view of the deleted namespace", func(ctx context.Context) error {
		views, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(views.Items) != 0 {
			err = fmt.Errorf("%d views", len(views.Items))
		}
		return err
	})
}

// webDeployment runs replicas Pods labelled app=web on the nodes of the
// test's site, spread evenly over its units.
func webDeployment(ns string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"e2e.gridview.io/site": ns},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: unitKey, WhenUnsatisfiable: corev1.DoNotSchedule,
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
					}},
					Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/e2e-test-images/agnhost:2.53",
						Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}},
				},
			},
		},
	}
}

type sitePod struct {
	unit  string
	ready bool
}

// podsByIP maps the namespace's Pods with an IP to their unit and readiness.
func podsByIP(t *testing.T, ns string, unitOf map[string]string) map[string]sitePod {
	t.Helper()
	list, err := kubeClient.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sitePod{}
	for _, pod := range list.Items {
		if pod.Status.PodIP == "" {
			continue
		}
		ready := pod.DeletionTimestamp == nil && slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		})
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

// rolledOut reports whether Deployment web has replaced every old Pod.
func rolledOut(t *testing.T, ns string) bool {
	t.Helper()
	d, err := kubeClient.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas &&
		d.Status.Replicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas
}
