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

package localcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

const (
	// PodCIDR is where kube-controller-manager gives each Node its /24 and
	// kwok its Pods their IPs: the shared address space of RFC 6598, which
	// no run's network uses, with room for 16,384 Nodes.
	PodCIDR = "100.64.0.0/10"
	// nodeLeaseSeconds is kubelet's default Lease duration; kwok renews the
	// Lease every quarter of it, every 10 s, as kubelet does.
	nodeLeaseSeconds = 40
)

// startWorkloads runs what a cluster has around kube-apiserver, so that
// Deployments, Services with selectors and namespaces behave as in any
// cluster: kube-controller-manager (ReplicaSets, EndpointSlices and their
// hints, garbage collection, namespaces, node CIDRs and lifecycle),
// kube-scheduler, and kwok, which plays every Node's kubelet: it renews the
// Node's Lease, keeps its status and runs the Pods bound to it, with an IP
// of the Node's podCIDR once kube-controller-manager has given it one.
func (c *Cluster) startWorkloads(ctx context.Context) error {
	if err := c.StartControllerManager(ctx); err != nil {
		return err
	}
	err := c.startComponent(ctx, "kube-scheduler", func(port int) []string {
		return append([]string{"--secure-port", strconv.Itoa(port)}, componentClientFlags...)
	}, func(p *Process) { c.scheduler = p })
	if err != nil {
		return err
	}
	options := filepath.Join(c.opts.WorkDir, "kwok-options.yaml")
	if err := os.WriteFile(options, []byte(kwokOptions), 0o600); err != nil {
		return fmt.Errorf("writing kwok's options: %w", err)
	}
	// KWOK_WORKDIR: kwok would read ~/.kwok/kwok.yaml first.
	proc, err := c.launch("kwok", []string{"env", "KWOK_WORKDIR=" + filepath.Join(c.opts.WorkDir, "kwok"),
		filepath.Join(c.opts.BinDir, "kwok"),
		"--kubeconfig", c.AdminKubeconfig,
		"--config", filepath.Join(c.opts.BinDir, kwokStages), "--config", options,
		"--manage-all-nodes=true",
		"--node-lease-duration-seconds", strconv.Itoa(nodeLeaseSeconds),
	}, func(p *Process) { c.kwok = p })
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return err
	}
	return c.waitKwok(ctx, client, proc)
}

// kwokOptions raise kwok's workers, 4 each for Leases, Node and Pod stages
// by default: with the scale harness's 1,000 Nodes renewing a Lease every
// 10 s and 11,000 Pods starting, 4 Lease workers fell 40 s behind on two
// busy cores, kube-controller-manager marked Nodes unreachable and tainted
// them, and their Pods went unscheduled. A configuration file replaces
// kwok's defaults rather than adding to them, so the other options are
// written out with kwok v0.8.0's default values: without them no worker
// would sync the Pods of a Node kwok takes over after they were created,
// and a Pod on a Node without a podCIDR would get no IP.
const kwokOptions = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  nodeLeaseParallelism: 32
  nodePlayStageParallelism: 8
  podPlayStageParallelism: 16
  podsOnNodeSyncParallelism: 1
  enablePodsOnNodeSyncListPager: true
  enablePodsOnNodeSyncStreamWatch: false
  cidr: 10.0.0.0/24
  enableDebuggingHandlers: true
  enableProfilingHandler: true
  enableContentionProfiling: false
`

// componentClientFlags lift kube-controller-manager's and kube-scheduler's
// client rate limits (20 and 50 requests a second by default): the scale
// harness's 11,000 Pods at edge-1k, each created, bound, made Ready and
// written into a slice, would otherwise take many minutes of throttling.
// kube-apiserver's own inflight limits still pace them.
var componentClientFlags = []string{"--kube-api-qps", "1000", "--kube-api-burst", "2000"}

// StartControllerManager runs kube-controller-manager and returns once it
// works: once the default ServiceAccount exists, which its ServiceAccount
// controller makes. Start runs it with Options.Workloads; a test that
// stopped it (StopControllerManager) starts it again.
func (c *Cluster) StartControllerManager(ctx context.Context) error {
	certs := c.pki
	err := c.startComponent(ctx, "kube-controller-manager", func(port int) []string {
		return append([]string{
			"--allocate-node-cidrs", "--cluster-cidr", PodCIDR, "--node-cidr-mask-size", "24",
			"--service-cluster-ip-range", serviceClusterRange,
			"--service-account-private-key-file", certs.ServiceAccountKey,
			"--root-ca-file", certs.CACert,
			"--secure-port", strconv.Itoa(port),
			// The defaults (5 Deployments, ReplicaSets and Services at a
			// time, 2 DaemonSets) leave the scale harness's thousands
			// of Pods waiting in the queues rather than on the cores.
			"--concurrent-deployment-syncs", "20", "--concurrent-replicaset-syncs", "20",
			"--concurrent-daemonset-syncs", "5", "--concurrent-service-endpoint-syncs", "20",
		}, componentClientFlags...)
	}, func(p *Process) { c.controllerManager = p })
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return err
	}
	return waitFor(ctx, time.Minute, c.controllerManager, "kube-controller-manager's ServiceAccount controller", func(ctx context.Context) error {
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// StopControllerManager stops kube-controller-manager, its garbage
// collector among its controllers, until StartControllerManager.
func (c *Cluster) StopControllerManager() error {
	c.mu.Lock()
	proc := c.controllerManager
	c.mu.Unlock()
	if proc == nil {
		return errors.New("kube-controller-manager is not running: start the cluster with Options.Workloads")
	}
	return proc.Stop()
}

// startComponent runs kube-controller-manager or kube-scheduler as the
// admin, on its own free port of the host veth address, and waits for its
// /healthz.
func (c *Cluster) startComponent(ctx context.Context, name string, flags func(port int) []string, keep func(*Process)) error {
	return retryOnPortClash(func() (*Process, error) {
		hostIP := c.net.HostIP.String()
		port, err := freePort(hostIP)
		if err != nil {
			return nil, err
		}
		argv := append([]string{filepath.Join(c.opts.BinDir, name),
			"--kubeconfig", c.AdminKubeconfig,
			"--authentication-kubeconfig", c.AdminKubeconfig,
			"--authorization-kubeconfig", c.AdminKubeconfig,
			"--bind-address", hostIP,
			"--cert-dir", filepath.Join(c.opts.WorkDir, name),
			"--leader-elect=false",
		}, flags(port)...)
		proc, err := c.launch(name, argv, keep)
		if err != nil {
			return nil, err
		}
		// /healthz needs no credentials; the certificate is the
		// component's own, made at its start.
		probe := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		url := "https://" + net.JoinHostPort(hostIP, strconv.Itoa(port)) + "/healthz"
		return proc, waitFor(ctx, time.Minute, proc, name+" /healthz", func(ctx context.Context) error {
			return httpGetOK(ctx, probe, url)
		})
	})
}

// waitKwok waits until kwok has made a Node Ready: a probe Node it then
// deletes.
func (c *Cluster) waitKwok(ctx context.Context, client kubernetes.Interface, proc *Process) error {
	probe := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "kwok-probe-"}}
	probe, err := client.CoreV1().Nodes().Create(ctx, probe, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating a Node for kwok: %w", err)
	}
	defer func() {
		_ = client.CoreV1().Nodes().Delete(context.WithoutCancel(ctx), probe.Name, metav1.DeleteOptions{})
	}()
	return waitFor(ctx, time.Minute, proc, "kwok making Node "+probe.Name+" Ready", func(ctx context.Context) error {
		node, err := client.CoreV1().Nodes().Get(ctx, probe.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, condition := range node.Status.Conditions {
			if condition.Type == corev1.NodeReady && condition.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("Node %s is not Ready: %v", probe.Name, node.Status.Conditions)
	})
}

// CheckWorkloads reports, as an error naming what is missing, whether every
// Deployment of namespace has all its replicas updated, ready and available
// and no old one left, every DaemonSet its Pod on each Node it should run
// on, updated, ready and available, and the EndpointSlice controller has
// written every ready Pod as a ready endpoint of each Service that selects
// it.
func CheckWorkloads(ctx context.Context, client kubernetes.Interface, namespace string) error {
	deployments, err := client.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, d := range deployments.Items {
		want := ptr.Deref(d.Spec.Replicas, 1)
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != want || d.Status.ReadyReplicas != want ||
			d.Status.AvailableReplicas != want || d.Status.Replicas != want {
			return fmt.Errorf("Deployment %s/%s: %d of %d replicas updated, %d ready, %d available, %d in all", namespace, d.Name,
				d.Status.UpdatedReplicas, want, d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.Replicas)
		}
	}
	daemonSets, err := client.AppsV1().DaemonSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, d := range daemonSets.Items {
		want := d.Status.DesiredNumberScheduled
		if d.Status.ObservedGeneration < d.Generation || want == 0 || d.Status.CurrentNumberScheduled != want || d.Status.UpdatedNumberScheduled != want ||
			d.Status.NumberReady != want || d.Status.NumberAvailable != want || d.Status.NumberMisscheduled != 0 {
			return fmt.Errorf("DaemonSet %s/%s: %d of %d Pods scheduled, %d updated, %d ready, %d available, %d misscheduled", namespace, d.Name,
				d.Status.CurrentNumberScheduled, want, d.Status.UpdatedNumberScheduled, d.Status.NumberReady, d.Status.NumberAvailable, d.Status.NumberMisscheduled)
		}
	}
	services, err := client.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, svc := range services.Items {
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
		if err != nil {
			return err
		}
		want := sets.New[string]()
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil && pod.Status.PodIP != "" && PodReady(&pod) {
				want.Insert(pod.Status.PodIP)
			}
		}
		list, err := client.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name})
		if err != nil {
			return err
		}
		got := sets.New[string]()
		for _, slice := range list.Items {
			for _, ep := range slice.Endpoints {
				if ptr.Deref(ep.Conditions.Ready, true) {
					got.Insert(ep.Addresses...)
				}
			}
		}
		if !got.Equal(want) {
			return fmt.Errorf("Service %s/%s: ready endpoints %v, ready Pods %v", namespace, svc.Name, sets.List(got), sets.List(want))
		}
	}
	return nil
}

// SetPodReady sets a Pod's Ready condition, as its kubelet would: kwok
// leaves a running Pod's conditions alone after it made it Ready.
func SetPodReady(ctx context.Context, client kubernetes.Interface, namespace, pod string, ready bool) error {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	patch := fmt.Appendf(nil, `{"status":{"conditions":[{"type":%q,"status":%q}]}}`, corev1.PodReady, status)
	_, err := client.CoreV1().Pods(namespace).Patch(ctx, pod, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// PodReady reports whether pod's Ready condition is true, as kubelet last
// wrote it.
func PodReady(pod *corev1.Pod) bool {
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodReady {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}
