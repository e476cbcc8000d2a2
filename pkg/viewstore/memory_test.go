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

package viewstore

import (
	"fmt"
	"runtime"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/pkg/inputlog"
)

// What the store keeps of its inputs' changes is bounded by bytes, not by
// their count: thousands of changes of a large slice, each kept whole, would
// hold hundreds of MiB; the history keeps at most its weight's worth of them
// (DefaultOptions: about 64 MiB). docs/performance.md records what this test
// measures.
func TestReadinessFlipsAreBoundedByBytes(t *testing.T) {
	const endpoints, flips = 1000, 4097
	big := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "big-x", Labels: map[string]string{discoveryv1.LabelServiceName: "big"}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for i := range endpoints {
		big.Endpoints = append(big.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.1.%d.%d", i/250, i%250)},
			NodeName:   ptr.To(fmt.Sprintf("edge-%d", i%2)),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}
	s := New(DefaultOptions)
	feed := NewFeed(s, record.NewFakeRecorder(1), func(int64) bool { return false })
	feed.Load(1, []metav1.Object{node("edge-0", "a"), node("edge-1", "b"), service("demo", "big", nil, anyMatchUnit), big})
	before := heapInUse()
	for i := range flips {
		flipped := big.DeepCopy()
		flipped.Endpoints[i%endpoints].Conditions.Ready = ptr.To(i%2 == 1)
		feed.Apply(int64(i+2), []inputlog.Change{{Key: inputlog.KeyOf(inputlog.EndpointSlices, flipped), Object: flipped}})
	}
	grown := int64(heapInUse()) - int64(before)
	t.Logf("heap grew by %.1f MiB over %d flips of a %d-endpoint slice", float64(grown)/(1<<20), flips, endpoints)
	if limit := int64(96 << 20); grown > limit {
		t.Errorf("heap grew by %d MiB, want at most %d MiB: the history is bounded by weight", grown>>20, limit>>20)
	}
	if got, want := s.resourceVersion(), revisionEnd(flips+1); got != want {
		t.Errorf("resourceVersion after the flips %d, want %d", got, want)
	}
	runtime.KeepAlive(s)
}

func heapInUse() uint64 {
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return stats.HeapInuse
}
