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
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/inputlog"
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

// TestStoreRandom feeds a store seeded random revisions of the log, each of
// a few changes, with watchers of nodes and of every node following live,
// then resumes watches from resourceVersions they received (mid-change ones
// too): each must end equal to a fresh list, or get 410, and see
// resourceVersions only grow; the store ends every revision at its end.
// SEEDS sets how many seeds; -short (make test) runs one.
func TestStoreRandom(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 1
	}
	if v := os.Getenv("SEEDS"); v != "" {
		seeds, _ = strconv.Atoi(v)
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { storeRandom(t, seed) })
		})
	}
}

// randomCluster makes seeded random inputs: a dozen nodes, three Services
// and four slices names, in namespace d.
type randomCluster struct {
	pick      func(int) int
	nodeNames []string
	services  []string
	slices    []string
	// current holds each slice as last made.
	current map[string]*discoveryv1.EndpointSlice
}

func newRandomCluster(seed uint64) *randomCluster {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := &randomCluster{pick: rng.IntN, services: []string{"s1", "s2", "s3"}, slices: []string{"p", "q", "r", "t"},
		current: map[string]*discoveryv1.EndpointSlice{}}
	for i := range 12 {
		c.nodeNames = append(c.nodeNames, fmt.Sprintf("n%02d", i))
	}
	return c
}

func (c *randomCluster) node(name string) *corev1.Node {
	l := map[string]string{}
	if c.pick(10) < 8 {
		l["unit"] = []string{"a", "b", "c"}[c.pick(3)]
	}
	if c.pick(10) < 8 {
		l["zone"] = []string{"x", "y"}[c.pick(2)]
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

func (c *randomCluster) service(name string) *corev1.Service {
	a := map[string]string{}
	switch c.pick(6) {
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
	if c.pick(3) == 0 {
		svc.Labels = map[string]string{"app": fmt.Sprint(c.pick(2))}
	}
	if c.pick(12) == 0 {
		svc.Spec.Type = corev1.ServiceTypeExternalName
	}
	return svc
}

func (c *randomCluster) endpoint(i int) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.%d.%d", c.pick(5), i)}, Conditions: discoveryv1.EndpointConditions{Ready: []*bool{nil, ptr.To(true), ptr.To(false)}[c.pick(3)]}}
	if n := c.pick(len(c.nodeNames) + 1); n < len(c.nodeNames) {
		ep.NodeName = ptr.To(c.nodeNames[n])
	}
	return ep
}

// slice makes a slice and keeps it as current.
func (c *randomCluster) slice(name string) *discoveryv1.EndpointSlice {
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "d", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: c.services[c.pick(len(c.services))]}},
		AddressType: []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}[c.pick(2)]}
	for i := range 1 + c.pick(5) {
		sl.Endpoints = append(sl.Endpoints, c.endpoint(i))
	}
	c.current[name] = sl
	return sl.DeepCopy()
}

// initial is the state to load: eight nodes, the Services, two slices.
func (c *randomCluster) initial() Inputs {
	var in Inputs
	for _, n := range c.nodeNames[:8] {
		in.Nodes = append(in.Nodes, c.node(n))
	}
	for _, n := range c.services {
		in.Services = append(in.Services, c.service(n))
	}
	for _, n := range c.slices[:2] {
		in.Slices = append(in.Slices, c.slice(n))
	}
	return in
}

// objects are the inputs as the log holds them.
func (in Inputs) objects() []metav1.Object {
	var out []metav1.Object
	for _, ns := range in.Namespaces {
		out = append(out, ns)
	}
	for _, n := range in.Nodes {
		out = append(out, n)
	}
	for _, svc := range in.Services {
		out = append(out, svc)
	}
	for _, sl := range in.Slices {
		out = append(out, sl)
	}
	return out
}

// change is one random change: an object set, or the key of one deleted,
// as the log holds it.
type change inputlog.Change

func (ch change) String() string {
	verb := "set"
	if ch.Object == nil {
		verb = "delete"
	}
	return fmt.Sprintf("%s %v %s", verb, ch.Key.Kind, ch.Key.NamespacedName)
}

func (c *randomCluster) change() change {
	switch k := c.pick(12); {
	case k < 3:
		n := c.node(c.nodeNames[c.pick(len(c.nodeNames))])
		return change{Key: inputlog.KeyOf(inputlog.Nodes, n), Object: n}
	case k < 4:
		return change{Key: inputlog.Key{Kind: inputlog.Nodes, NamespacedName: types.NamespacedName{Name: c.nodeNames[c.pick(len(c.nodeNames))]}}}
	case k < 6:
		svc := c.service(c.services[c.pick(len(c.services))])
		return change{Key: inputlog.KeyOf(inputlog.Services, svc), Object: svc}
	case k < 7:
		return change{Key: inputlog.Key{Kind: inputlog.Services, NamespacedName: types.NamespacedName{Namespace: "d", Name: c.services[c.pick(len(c.services))]}}}
	case k < 10:
		n := c.slices[c.pick(len(c.slices))]
		sl, ok := c.current[n]
		if !ok || c.pick(4) == 0 {
			sl = c.slice(n)
		} else {
			sl = sl.DeepCopy()
			i := c.pick(len(sl.Endpoints))
			sl.Endpoints[i] = c.endpoint(i)
			c.current[n] = sl
			sl = sl.DeepCopy()
		}
		return change{Key: inputlog.KeyOf(inputlog.EndpointSlices, sl), Object: sl}
	default:
		n := c.slices[c.pick(len(c.slices))]
		delete(c.current, n)
		return change{Key: inputlog.Key{Kind: inputlog.EndpointSlices, NamespacedName: types.NamespacedName{Namespace: "d", Name: n}}}
	}
}

// revision is up to three random changes, of distinct inputs, as one
// revision of the log writes them.
func (c *randomCluster) revision() []inputlog.Change {
	var changes []inputlog.Change
	for range 1 + c.pick(3) {
		ch := c.change()
		if slices.ContainsFunc(changes, func(written inputlog.Change) bool { return written.Key == ch.Key }) {
			continue // one transaction writes a key once
		}
		changes = append(changes, inputlog.Change(ch))
	}
	return changes
}

// describe names a revision's changes.
func describe(revision int64, changes []inputlog.Change) string {
	var out []string
	for _, ch := range changes {
		out = append(out, change(ch).String())
	}
	return fmt.Sprintf("revision %d: %s", revision, strings.Join(out, ", "))
}

// startFollower watches a filter from the store's resourceVersion.
func startFollower(t *testing.T, s *Store, name string, f Filter) *follower {
	t.Helper()
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
	t.Cleanup(w.Stop)
	return fl
}

func storeRandom(t *testing.T, seed uint64) {
	c := newRandomCluster(seed)
	s := New(Options{HistorySize: 100000, WatcherBuffer: 100000, BookmarkInterval: time.Hour})
	// Events are reported, and dropped: the feed's whole path runs.
	feed := NewFeed(s, &record.FakeRecorder{}, func(int64) bool { return true })
	initial := c.initial()
	revision := int64(1 + c.pick(1000))
	feed.Load(revision, initial.objects())

	var followers []*follower
	deletedAt := map[string][]uint64{}
	resumed, severalInputs := 0, 0
	for _, n := range c.nodeNames {
		followers = append(followers, startFollower(t, s, n, nodeWatch(n)))
	}
	cluster := startFollower(t, s, "cluster", Filter{})
	followers = append(followers, cluster)

	for step := range 600 {
		// etcd's revisions count every write to it, not only the log's.
		revision += int64(1 + c.pick(3))
		changes := c.revision()
		if len(changes) > 1 {
			severalInputs++
		}
		what := describe(revision, changes)
		feed.Apply(revision, changes)
		if got, want := s.resourceVersion(), revisionEnd(revision); got != want {
			t.Fatalf("step %d (%s): the store is at %d after the revision, want its end %d", step, what, got, want)
		}
		s.mu.RLock()
		for _, ch := range changes {
			if ch.Object == nil && ch.Key.Kind == inputlog.Nodes {
				deletedAt[ch.Key.Name] = append(deletedAt[ch.Key.Name], s.departed[ch.Key.Name])
			}
		}
		s.mu.RUnlock()
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
			fl := followers[c.pick(len(followers))]
			if len(fl.seen) == 0 {
				continue
			}
			at := fl.seen[c.pick(len(fl.seen))]
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
			resumed++
		}
	}
	for _, fl := range followers {
		fl.w.Stop()
	}
	if resumed == 0 || severalInputs == 0 {
		t.Errorf("%d watches resumed, %d revisions of several inputs: the test proves little", resumed, severalInputs)
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
