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
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
	"github.com/gridview/gridview/pkg/watchstream"
)

type follower struct {
	name  string
	f     Filter
	w     watch.Interface
	state map[string]string
	last  uint64
	// states after each received RV
	seen []struct {
		rv    string
		state map[string]string
	}
}

func (fl *follower) drain(t *testing.T, strict bool) {
	for {
		synctest.Wait()
		var e watch.Event
		select {
		case e = <-fl.w.ResultChan():
		default:
		}
		if e.Object == nil {
			return
		}
		obj := e.Object.(*topologyapi.NodeEndpoints)
		rv, _ := strconv.ParseUint(obj.ResourceVersion, 10, 64)
		if rv < fl.last || strict && rv == fl.last {
			t.Errorf("%s: RV went from %d to %d (%s %s)", fl.name, fl.last, rv, e.Type, obj.Name)
		}
		fl.last = rv
		if e.Type == watch.Bookmark {
			continue
		}
		key := obj.Namespace + "/" + obj.Name
		if e.Type == watch.Deleted {
			delete(fl.state, key)
		} else {
			fl.state[key] = render(obj)
		}
		fl.seen = append(fl.seen, struct {
			rv    string
			state map[string]string
		}{obj.ResourceVersion, maps.Clone(fl.state)})
	}
}

func fullState(list *topologyapi.NodeEndpointsList) map[string]string {
	out := map[string]string{}
	for _, obj := range list.Items {
		out[obj.Namespace+"/"+obj.Name] = render(&obj)
	}
	return out
}

// TestStoreRandom makes seeded random changes with watchers of nodes and of
// every node following live, then resumes watches from resourceVersions
// they received (mid-change ones too): each must end equal to a fresh list,
// or get 410, and see resourceVersions only grow. SEEDS sets how many seeds.
func TestStoreRandom(t *testing.T) {
	seeds := 6
	if v := os.Getenv("SEEDS"); v != "" {
		seeds, _ = strconv.Atoi(v)
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { storeRandom(t, seed) })
		})
	}
}

func storeRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	pick := rng.IntN
	var nodeNames []string
	for i := range 12 {
		nodeNames = append(nodeNames, fmt.Sprintf("n%02d", i))
	}
	services := []string{"s1", "s2", "s3"}
	sliceNames := []string{"p", "q", "r", "t"}
	mkNode := func(name string) *corev1.Node {
		l := map[string]string{}
		if pick(10) < 8 {
			l["unit"] = []string{"a", "b", "c"}[pick(3)]
		}
		if pick(10) < 8 {
			l["zone"] = []string{"x", "y"}[pick(2)]
		}
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	}
	mkService := func(name string) *corev1.Service {
		a := map[string]string{}
		switch pick(6) {
		case 0:
			a[topology.AnnotationTopologyKeys] = `["unit"]`
		case 1:
			a[topology.AnnotationGridviewKeys] = "unit,zone,*"
		case 2:
			a[topology.AnnotationGridviewKeys] = "kubernetes.io/hostname,unit"
		case 3:
			a[topology.AnnotationTopologyKeys] = `["zone","unit"]`
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "d", Name: name, Annotations: a}}
		if pick(3) == 0 {
			svc.Labels = map[string]string{"app": fmt.Sprint(pick(2))}
		}
		if pick(12) == 0 {
			svc.Spec.Type = corev1.ServiceTypeExternalName
		}
		return svc
	}
	slices := map[string]*discoveryv1.EndpointSlice{}
	mkEndpoint := func(i int) discoveryv1.Endpoint {
		ep := discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.%d.%d", pick(5), i)}, Conditions: discoveryv1.EndpointConditions{Ready: []*bool{nil, ptr.To(true), ptr.To(false)}[pick(3)]}}
		if n := pick(len(nodeNames) + 1); n < len(nodeNames) {
			ep.NodeName = ptr.To(nodeNames[n])
		}
		return ep
	}
	mkSlice := func(name string) *discoveryv1.EndpointSlice {
		sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "d", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: services[pick(len(services))]}},
			AddressType: []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}[pick(2)]}
		for i := range 1 + pick(5) {
			sl.Endpoints = append(sl.Endpoints, mkEndpoint(i))
		}
		return sl
	}
	s := New(Options{HistorySize: 100000, WatcherBuffer: 100000, BookmarkInterval: time.Hour})
	var nodes []*corev1.Node
	for _, n := range nodeNames[:8] {
		nodes = append(nodes, mkNode(n))
	}
	var svcs []*corev1.Service
	for _, n := range services {
		svcs = append(svcs, mkService(n))
	}
	var sls []*discoveryv1.EndpointSlice
	for _, n := range sliceNames[:2] {
		slices[n] = mkSlice(n)
		sls = append(sls, slices[n].DeepCopy())
	}
	s.Load(nodes, svcs, sls)

	var followers []*follower
	deletedAt := map[string][]uint64{}
	start := func(name string, f Filter, strict bool) *follower {
		list, err := s.List(f, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.Watch(t.Context(), f, watchstream.WatchOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		fl := &follower{name: name, f: f, w: w, state: fullState(list)}
		fl.last, _ = strconv.ParseUint(list.ResourceVersion, 10, 64)
		return fl
	}
	for _, n := range nodeNames {
		followers = append(followers, start(n, nodeWatch(n), true))
	}
	cluster := start("cluster", Filter{}, false)
	followers = append(followers, cluster)

	for step := range 600 {
		var what string
		switch k := pick(12); {
		case k < 3:
			n := mkNode(nodeNames[pick(len(nodeNames))])
			what = fmt.Sprintf("set node %s %v", n.Name, n.Labels)
			s.SetNode(n)
		case k < 4:
			n := nodeNames[pick(len(nodeNames))]
			what = "delete node " + n
			s.DeleteNode(n)
			deletedAt[n] = append(deletedAt[n], s.stream.RV())
		case k < 6:
			svc := mkService(services[pick(len(services))])
			what = fmt.Sprintf("set service %s %v %v", svc.Name, svc.Annotations, svc.Labels)
			s.SetService(svc)
		case k < 7:
			n := services[pick(len(services))]
			what = "delete service " + n
			s.DeleteService(types.NamespacedName{Namespace: "d", Name: n})
		case k < 10:
			n := sliceNames[pick(len(sliceNames))]
			sl, ok := slices[n]
			if !ok || pick(4) == 0 {
				sl = mkSlice(n)
			} else {
				sl = sl.DeepCopy()
				i := pick(len(sl.Endpoints))
				sl.Endpoints[i] = mkEndpoint(i)
			}
			slices[n] = sl
			what = "set slice " + n
			s.SetEndpointSlice(sl.DeepCopy())
		default:
			n := sliceNames[pick(len(sliceNames))]
			delete(slices, n)
			what = "delete slice " + n
			s.DeleteEndpointSlice(types.NamespacedName{Namespace: "d", Name: n})
		}
		synctest.Wait()
		for _, fl := range followers {
			fl.drain(t, fl != cluster)
			fresh, err := s.List(fl.f, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := fullState(fresh); !maps.Equal(fl.state, want) {
				t.Fatalf("step %d (%s): live %s differs from a fresh list:\n got %v\nwant %v", step, what, fl.name, fl.state, want)
			}
		}
		// resume a random follower from a random RV it received
		if step%5 == 4 {
			fl := followers[pick(len(followers))]
			if len(fl.seen) == 0 {
				continue
			}
			at := fl.seen[pick(len(fl.seen))]
			atRV, _ := strconv.ParseUint(at.rv, 10, 64)
			skip := false
			for n, rvs := range deletedAt {
				if fl.name != "cluster" && n != fl.name {
					continue
				}
				for _, d := range rvs {
					if d > atRV {
						skip = true
					}
				}
			}
			if skip && os.Getenv("NODEDEL") == "" {
				continue
			}
			w, err := s.Watch(t.Context(), fl.f, watchstream.WatchOptions{ResourceVersion: at.rv})
			if err != nil {
				t.Fatalf("step %d: resume %s from %s: %v", step, fl.name, at.rv, err)
			}
			r := &follower{name: fl.name + " resumed from " + at.rv, f: fl.f, w: w, state: maps.Clone(at.state)}
			r.last, _ = strconv.ParseUint(at.rv, 10, 64)
			synctest.Wait()
			r.drain(t, false)
			w.Stop()
			fresh, _ := s.List(fl.f, ListOptions{})
			if want := fullState(fresh); !maps.Equal(r.state, want) {
				t.Errorf("step %d (%s): %s differs from a fresh list:\n got %v\nwant %v", step, what, r.name, r.state, want)
			}
		}
	}
	for _, fl := range followers {
		fl.w.Stop()
	}
}

func render(obj *topologyapi.NodeEndpoints) string {
	b, _ := json.Marshal(struct {
		S string
		L map[string]string
		T topologyapi.TopologyInfo
		X topologyapi.NodeEndpointSlice
	}{obj.ServiceName, obj.Labels, obj.Topology, obj.Slice})
	return string(b)
}
