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
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/test/e2e/framework"
)

const (
	soakNodes     = 200
	soakUnits     = 10
	soakServices  = 10
	soakEndpoints = 20
	soakSeed      = 42
	// markerLabel, set on a Service, changes every view of it: the time from
	// the write to each informer's event is a delivery latency.
	markerLabel = "soak-step"
)

// soakDuration is how long the driver churns: short in make test-all; make soak
// sets GRIDVIEW_SOAK_DURATION for the long run.
func soakDuration(t *testing.T) time.Duration {
	value := os.Getenv("GRIDVIEW_SOAK_DURATION")
	if value == "" {
		return 20 * time.Second
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		t.Fatalf("GRIDVIEW_SOAK_DURATION=%q: %v", value, err)
	}
	return d
}

// soakCluster is the soak test's own nodes, Services and slices, in its
// namespace, changed by a seeded random driver.
type soakCluster struct {
	t   *testing.T
	ns  string
	rng *rand.Rand
	// endpoints holds, per Service, the node of each endpoint address.
	endpoints map[string]map[string]string
	step      int
	markers   markerTimes
}

// markerTimes holds when each marker was written.
type markerTimes struct {
	mu    sync.Mutex
	times map[string]time.Time
}

func (m *markerTimes) set(marker string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.times == nil {
		m.times = map[string]time.Time{}
	}
	m.times[marker] = at
}

func (m *markerTimes) get(marker string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.times[marker]
	return at, ok
}

func (s *soakCluster) node(i int) string    { return fmt.Sprintf("%s-n%03d", s.ns, i) }
func (s *soakCluster) unit(i int) string    { return fmt.Sprintf("%s-u%d", s.ns, i) }
func (s *soakCluster) service(i int) string { return fmt.Sprintf("svc-%d", i) }

// soakAnnotations are the three topology modes the driver switches between.
func soakAnnotations(mode int) map[string]string {
	switch mode % 3 {
	case 0:
		return map[string]string{topology.AnnotationTopologyKeys: `["` + framework.UnitKey + `"]`}
	case 1:
		return map[string]string{topology.AnnotationGridviewKeys: framework.UnitKey + ",*"}
	}
	return nil
}

func newSoakCluster(t *testing.T) *soakCluster {
	t.Helper()
	ctx := context.Background()
	s := &soakCluster{t: t, ns: testNamespace(t), rng: rand.New(rand.NewPCG(soakSeed, soakSeed)), endpoints: map[string]map[string]string{}}
	for i := range soakNodes {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.node(i), Labels: map[string]string{framework.UnitKey: s.unit(i % soakUnits)}}}
		if _, err := kubeClient.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kubeClient.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
		})
	}
	for i := range soakServices {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: s.service(i), Annotations: soakAnnotations(i)},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}
		if _, err := kubeClient.CoreV1().Services(s.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s.endpoints[svc.Name] = map[string]string{}
		for e := range soakEndpoints {
			s.endpoints[svc.Name][fmt.Sprintf("10.%d.0.%d", i, e)] = s.node(s.rng.IntN(soakNodes))
		}
		s.writeSlice(svc.Name)
	}
	return s
}

// writeSlice writes the one slice of a Service by hand: the soak moves an
// endpoint to another node in one write, at a rate and in a seeded order
// that Pods, which never change nodes, cannot give.
func (s *soakCluster) writeSlice(service string) {
	framework.WriteEndpointSlice(s.t, kubeClient, s.ns, service, s.endpoints[service])
}

// change makes one random change and returns the marker it set, if any.
func (s *soakCluster) change(ctx context.Context) (marker string) {
	s.step++
	service := s.service(s.rng.IntN(soakServices))
	var err error
	switch s.rng.IntN(10) {
	case 0, 1, 2, 3: // an endpoint moves to another node
		addresses := slices.Sorted(maps.Keys(s.endpoints[service]))
		s.endpoints[service][addresses[s.rng.IntN(len(addresses))]] = s.node(s.rng.IntN(soakNodes))
		s.writeSlice(service)
	case 4, 5, 6: // a node moves to another unit
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, framework.UnitKey, s.unit(s.rng.IntN(soakUnits)))
		_, err = kubeClient.CoreV1().Nodes().Patch(ctx, s.node(s.rng.IntN(soakNodes)), types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	case 7, 8: // a Service changes its topology
		svc, getErr := kubeClient.CoreV1().Services(s.ns).Get(ctx, service, metav1.GetOptions{})
		if err = getErr; err == nil {
			svc.Annotations = soakAnnotations(s.rng.IntN(3))
			_, err = kubeClient.CoreV1().Services(s.ns).Update(ctx, svc, metav1.UpdateOptions{})
		}
	default: // a marker
		marker = strconv.Itoa(s.step)
		s.markers.set(marker, time.Now())
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, markerLabel, marker)
		_, err = kubeClient.CoreV1().Services(s.ns).Patch(ctx, service, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	}
	if err != nil {
		s.t.Fatalf("soak step %d: %v", s.step, err)
	}
	return marker
}
