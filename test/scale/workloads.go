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

package scale

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gridview/gridview/test/localcluster"
)

// controllersTimeout bounds the wait for the controllers to run every
// workload's Pods and write them into slices after the ingest; readBackTimeout
// the wait for the EndpointSlice controller to write Pods' readiness changes.
const (
	controllersTimeout = 20 * time.Minute
	readBackTimeout    = probeTimeout
)

// workloadJobs writes the Deployment of each 20-endpoint Service and the
// big Service's DaemonSet.
func (h *Harness) workloadJobs() []job {
	var out []job
	for _, svc := range h.m.Services {
		if svc.Big {
			obj := h.m.DaemonSetObject(svc)
			out = append(out, job{key: "daemonset/" + obj.Name, write: func(ctx context.Context) error {
				_, err := h.kube.AppsV1().DaemonSets(h.m.Namespace).Create(ctx, obj, metav1.CreateOptions{})
				return err
			}})
			continue
		}
		obj := h.m.DeploymentObject(svc)
		out = append(out, job{key: "deployment/" + obj.Name, write: func(ctx context.Context) error {
			_, err := h.kube.AppsV1().Deployments(h.m.Namespace).Create(ctx, obj, metav1.CreateOptions{})
			return err
		}})
	}
	return out
}

// awaitWorkloads waits until the controllers have settled after the ingest
// — every Deployment's and the DaemonSet's Pods Ready and written into
// their Service's slices — and gives the model the slices they wrote.
func (h *Harness) awaitWorkloads(ctx context.Context) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, controllersTimeout, true, func(ctx context.Context) (bool, error) {
		last = localcluster.CheckWorkloads(ctx, h.kube, h.m.Namespace)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the controllers not settled within %s: %w (last: %w)", controllersTimeout, err, last)
	}
	byService, err := h.slicesByService(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, svc := range h.m.Services {
		read, err := h.m.SlicesFromObjects(byService[svc.Name], h.c.names.id)
		if err != nil {
			return err
		}
		h.m.SetSlices(svc, read)
		want := h.m.Scale.Endpoints
		if svc.Big {
			want = len(h.m.Nodes)
		}
		if got := countEndpoints(read); got != want {
			return fmt.Errorf("Service %s: %d endpoints in %d slices once the controllers settled, want %d", svc.Name, got, len(read), want)
		}
	}
	// What vanilla kube-proxy reads of a flip in the big Service: its
	// fullest slice as the controller wrote it (the controller fills its
	// slices unevenly; the count above found at least one).
	big := h.m.ServicesOf(ModeNone, true)[0]
	fullest := slices.MaxFunc(byService[big.Name], func(a, b discoveryv1.EndpointSlice) int {
		return cmp.Compare(len(a.Endpoints), len(b.Endpoints))
	})
	if data, err := json.Marshal(fullest); err == nil {
		h.R.BigSliceBytes = len(data)
	}
	return nil
}

// slicesByService reads the scenario's EndpointSlices that opts select,
// by the name of their Service.
func (h *Harness) slicesByService(ctx context.Context, opts metav1.ListOptions) (map[string][]discoveryv1.EndpointSlice, error) {
	list, err := h.kube.DiscoveryV1().EndpointSlices(h.m.Namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("reading the EndpointSlices back: %w", err)
	}
	out := map[string][]discoveryv1.EndpointSlice{}
	for _, obj := range list.Items {
		name := obj.Labels[discoveryv1.LabelServiceName]
		out[name] = append(out[name], obj)
	}
	return out, nil
}

func countEndpoints(read []*Slice) int {
	n := 0
	for _, sl := range read {
		n += len(sl.Endpoints)
	}
	return n
}

// flipEndpoint flips the readiness of a random endpoint of svc in the model
// and returns the write that makes it so: its slice updated, or with
// Workloads its Pod's Ready condition patched as kubelet does when a
// readiness probe changes, after which the EndpointSlice controller writes
// the slice (readBack waits for that).
func (h *Harness) flipEndpoint(svc *Service) job {
	sl, ep := h.m.FlipEndpoint(svc, h.rng)
	if !h.m.Workloads {
		obj := h.m.SliceObject(svc, sl)
		return job{key: "slice/" + obj.Name, write: func(ctx context.Context) error {
			_, err := h.kube.DiscoveryV1().EndpointSlices(h.m.Namespace).Update(ctx, obj, metav1.UpdateOptions{})
			return err
		}}
	}
	pod, ready := ep.Pod, ep.Ready
	return job{key: "pod/" + pod, write: func(ctx context.Context) error {
		return localcluster.SetPodReady(ctx, h.kube, h.m.Namespace, pod, ready)
	}}
}

// flipWrite flips the readiness of a random endpoint of svc in the model
// and returns the write that makes it so, with Workloads until the
// EndpointSlice controller has written it.
func (h *Harness) flipWrite(svc *Service) func(context.Context) error {
	flip := h.flipEndpoint(svc)
	return func(ctx context.Context) error {
		if err := flip.write(ctx); err != nil {
			return err
		}
		return h.readBack(ctx, svc)
	}
}

// readBack waits, with Workloads, until the EndpointSlice controller has
// written what the model says of svcs' slices after Pod changes, reading
// them from kube-apiserver; when it writes something else instead, the run
// fails and the model takes what it wrote. Without Workloads the harness
// wrote the slices itself: nothing to wait for.
func (h *Harness) readBack(ctx context.Context, svcs ...*Service) error {
	if !h.m.Workloads {
		return nil
	}
	opts := metav1.ListOptions{}
	if len(svcs) == 1 {
		opts.LabelSelector = discoveryv1.LabelServiceName + "=" + svcs[0].Name
	}
	written := map[*Service][]*Slice{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, readBackTimeout, true, func(ctx context.Context) (bool, error) {
		byService, err := h.slicesByService(ctx, opts)
		if err != nil {
			// Under load kube-apiserver may throttle or time out a list: the
			// next poll tries again; the deadline ends a lasting failure.
			h.logf("reading the EndpointSlices back: %v", err)
			return false, nil
		}
		done := true
		for _, svc := range svcs {
			read, err := h.m.SlicesFromObjects(byService[svc.Name], h.c.names.id)
			if err != nil {
				return false, err
			}
			written[svc] = read
			done = done && sameSlices(read, svc.Slices)
		}
		return done, nil
	})
	if err == nil || ctx.Err() != nil || !wait.Interrupted(err) {
		return err
	}
	for _, svc := range svcs {
		if !sameSlices(written[svc], svc.Slices) {
			h.R.fail("Service %s: the EndpointSlice controller's slices differ from the model's %s after its Pods' readiness changed", svc.Name, readBackTimeout)
			h.m.SetSlices(svc, written[svc])
		}
	}
	return nil
}
