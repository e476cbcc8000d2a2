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

package topology_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/topology/topologytest"
)

// randomSeeds returns the seeds of a random test: n from first, one with
// -short (make test; make test-all runs them all), or SEEDS from first when
// it is set.
func randomSeeds(first uint64, n int) []uint64 {
	if testing.Short() {
		n = 1
	}
	if v := os.Getenv("SEEDS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = first + uint64(i)
	}
	return seeds
}

// oneOf picks one of values.
func oneOf[T any](rng *rand.Rand, values ...T) T {
	return values[rng.IntN(len(values))]
}

// randomService returns a Service with some of the rules issue 13 names,
// often several, some malformed, and sometimes a min-ready in either form.
func randomService(rng *rand.Rand, key types.NamespacedName) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Annotations: map[string]string{}}}
	if rng.IntN(3) == 0 {
		svc.Annotations = randomAnnotations(rng)
	}
	if rng.IntN(5) == 0 {
		svc.Annotations[topology.AnnotationOpenYurtTopologyKeys] = oneOf(rng, topology.KeyHostname, "openyurt.io/nodepool",
			"kubernetes.io/zone", topology.KeyZone, " openyurt.io/nodepool ", "*", "kubernetes.io/hostname,openyurt.io/nodepool")
	}
	if rng.IntN(3) == 0 {
		svc.Spec.TrafficDistribution = ptr.To(oneOf(rng, corev1.ServiceTrafficDistributionPreferSameNode,
			corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferClose, "PreferSameRegion"))
	}
	if rng.IntN(6) == 0 {
		svc.Annotations[oneOf(rng, corev1.AnnotationTopologyMode, corev1.DeprecatedAnnotationTopologyAwareHints)] = oneOf(rng, "Auto", "auto", "Disabled")
	}
	if rng.IntN(3) == 0 {
		svc.Annotations[topology.AnnotationMinReady] = oneOf(rng, "2", "3", "unit=2", "topology.kubernetes.io/zone=2,unit=3",
			"2,kubernetes.io/hostname=1", "kubernetes.io/hostname=2", "apps.openyurt.io/nodepool=2,zone=2", "0", "unit=", "*=2")
	}
	return svc
}

// randomNamespace sets, changes or removes a Namespace's default rule, in
// the engine and the oracle.
func randomNamespace(rng *rand.Rand, engine *topology.Engine, model *topologytest.Oracle, namespace string) (string, []topology.SliceChange) {
	if rng.IntN(4) == 0 {
		delete(model.Namespaces, namespace)
		return "delete namespace " + namespace, engine.DeleteNamespace(namespace)
	}
	annotations := map[string]string{"unrelated": fmt.Sprint(rng.IntN(2))}
	if rng.IntN(5) > 0 {
		annotations[topology.AnnotationGridviewKeys] = oneOf(rng, "unit,*", "topology.kubernetes.io/zone,*", "kubernetes.io/hostname,unit",
			"unit,zone,*", "apps.openyurt.io/nodepool", "*", "bad key", "")
	}
	model.Namespaces[namespace] = annotations
	return fmt.Sprintf("set namespace %s %v", namespace, annotations), engine.SetNamespace(namespace, annotations)
}
