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

package manifests

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// defaultDataDir is gridview-apiserver's --data-dir default.
const defaultDataDir = "/var/lib/gridview/etcd"

// A workload running the embedded etcd keeps its data on a volume that
// outlives the pod, and never runs two pods at once: each would start an
// etcd of its own, and a second one an empty one.
func TestEmbeddedEtcdSurvivesPods(t *testing.T) {
	checked := 0
	for _, m := range manifests(t) {
		var pod corev1.PodSpec
		var replicas *int32
		var claimTemplates []string
		switch obj := m.obj.(type) {
		case *appsv1.Deployment:
			pod, replicas = obj.Spec.Template.Spec, obj.Spec.Replicas
			if runsEmbeddedEtcd(pod) && obj.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("%s runs the embedded etcd with strategy %q: a rollout starts a second etcd beside the first, want Recreate", m, obj.Spec.Strategy.Type)
			}
		case *appsv1.StatefulSet:
			pod, replicas = obj.Spec.Template.Spec, obj.Spec.Replicas
			for _, claim := range obj.Spec.VolumeClaimTemplates {
				claimTemplates = append(claimTemplates, claim.Name)
			}
		case *appsv1.DaemonSet:
			pod = obj.Spec.Template.Spec
			if runsEmbeddedEtcd(pod) {
				t.Errorf("%s runs the embedded etcd on every node: one store per node, want --etcd-servers", m)
			}
			continue
		default:
			continue
		}
		if !runsEmbeddedEtcd(pod) {
			continue
		}
		checked++
		if replicas != nil && *replicas > 1 {
			t.Errorf("%s runs %d replicas of the embedded etcd, each with ServiceGrids of its own: want 1, or --etcd-servers", m, *replicas)
		}
		for _, c := range pod.Containers {
			if !isGridviewAPIServer(c) {
				continue
			}
			dataDir, ok := flagValue(c, "--data-dir")
			if !ok {
				dataDir = defaultDataDir
			}
			if volume := dataVolume(pod, c, dataDir); volume == "" ||
				!slices.Contains(claimTemplates, volume) && !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
					return v.Name == volume && v.PersistentVolumeClaim != nil
				}) {
				t.Errorf("%s keeps the embedded etcd's data (%s) on volume %q, which does not outlive the pod: want a PersistentVolumeClaim", m, dataDir, volume)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no workload under artifacts runs the embedded etcd: the default install must")
	}
}

func isGridviewAPIServer(c corev1.Container) bool {
	return strings.Contains(c.Image, "gridview-apiserver")
}

func runsEmbeddedEtcd(pod corev1.PodSpec) bool {
	return slices.ContainsFunc(pod.Containers, func(c corev1.Container) bool {
		_, external := flagValue(c, "--etcd-servers")
		return isGridviewAPIServer(c) && !external
	})
}

// flagValue returns the value of a flag given as --name=value or --name value.
func flagValue(c corev1.Container, name string) (string, bool) {
	args := append(slices.Clone(c.Command), c.Args...)
	for i, arg := range args {
		if value, ok := strings.CutPrefix(arg, name+"="); ok {
			return value, true
		}
		if arg == name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// dataVolume is the volume mounted at dir or above it; empty: none, so the
// container's own filesystem.
func dataVolume(pod corev1.PodSpec, c corev1.Container, dir string) string {
	best, volume := "", ""
	for _, mount := range c.VolumeMounts {
		path := strings.TrimSuffix(mount.MountPath, "/")
		if (dir == path || strings.HasPrefix(dir, path+"/")) && len(path) > len(best) {
			best, volume = path, mount.Name
		}
	}
	return volume
}
