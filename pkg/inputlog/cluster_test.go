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

package inputlog

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

const testPrefix = "/test/inputs/"

// startCluster runs informers on a fake cluster that holds objects, with a
// writer of the log under testPrefix registered on them, and returns once
// they watch.
func startCluster(t *testing.T, client *clientv3.Client, objects ...runtime.Object) (*fake.Clientset, *Writer) {
	t.Helper()
	kube := fake.NewClientset(objects...)
	// The fake clientset's watch does not resume from a resourceVersion: an
	// object created between an informer's list and its watch is lost. Wait
	// for the four watches before creating any.
	watching := make(chan struct{}, 4)
	kube.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := kube.Tracker().Watch(action.GetResource(), action.GetNamespace())
		watching <- struct{}{}
		return true, w, err
	})
	factory := informers.NewSharedInformerFactory(kube, 0)
	writer, err := NewWriter(client, testPrefix, factory.Core().V1().Nodes(), factory.Core().V1().Services(),
		factory.Discovery().V1().EndpointSlices(), factory.Core().V1().Namespaces())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	for range 4 {
		select {
		case <-watching:
		case <-time.After(5 * time.Second):
			t.Fatal("the informers did not start watching")
		}
	}
	return kube, writer
}

// lead runs the writer under fence until the test ends, and returns what
// Lead returned once it does.
func lead(t *testing.T, writer *Writer, fence clientv3.Cmp) (cancel func(), result <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(finished)
		done <- writer.Lead(ctx, fence)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Error("Lead did not return once its context ended")
		}
	})
	return cancel, done
}

// read runs a reader of the log under testPrefix into a new sink until the
// test ends.
func read(t *testing.T, client *clientv3.Client) (*Reader, *recordingSink) {
	t.Helper()
	sink := newRecordingSink()
	return readInto(t, client, sink), sink
}

// readInto runs a reader of the log under testPrefix into sink until the
// test ends.
func readInto(t *testing.T, client *clientv3.Client, sink *recordingSink) *Reader {
	t.Helper()
	reader := NewReader(client, testPrefix, sink)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		reader.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		for _, err := range sink.errors() {
			t.Error(err)
		}
	})
	return reader
}

// applied is one call of Sink.Apply.
type applied struct {
	revision int64
	changes  []Change
}

// recordingSink records what a reader feeds it and keeps the state it
// amounts to.
type recordingSink struct {
	mu       sync.Mutex
	loads    []int64
	applies  []applied
	progress []int64
	state    map[Key]metav1.Object
	revision int64
	// loaded is the state the last Load set.
	loaded map[Key]metav1.Object
	errs   []string
	// beforeApply, if set, runs as Apply starts, outside the lock.
	beforeApply func(revision int64)
}

func newRecordingSink() *recordingSink { return &recordingSink{state: map[Key]metav1.Object{}} }

func (s *recordingSink) Load(revision int64, objects []metav1.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads = append(s.loads, revision)
	s.revision = revision
	s.state = map[Key]metav1.Object{}
	for _, obj := range objects {
		s.state[keyOfObject(obj)] = obj
	}
	s.loaded = maps.Clone(s.state)
}

func (s *recordingSink) Apply(revision int64, changes []Change) {
	if s.beforeApply != nil {
		s.beforeApply(revision)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if revision <= s.revision {
		s.errs = append(s.errs, fmt.Sprintf("applied revision %d after revision %d", revision, s.revision))
	}
	if len(changes) == 0 {
		s.errs = append(s.errs, fmt.Sprintf("applied revision %d without changes", revision))
	}
	s.revision = revision
	s.applies = append(s.applies, applied{revision: revision, changes: changes})
	for _, change := range changes {
		if change.Object == nil {
			delete(s.state, change.Key)
			continue
		}
		if got := keyOfObject(change.Object); got != change.Key {
			s.errs = append(s.errs, fmt.Sprintf("revision %d: the change of %v holds %v", revision, change.Key, got))
		}
		s.state[change.Key] = change.Object
	}
}

func (s *recordingSink) Progress(revision int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if revision <= s.revision {
		s.errs = append(s.errs, fmt.Sprintf("progress to revision %d after revision %d", revision, s.revision))
	}
	s.revision = revision
	s.progress = append(s.progress, revision)
}

func (s *recordingSink) errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

// get is the object the sink holds under key, nil for none.
func (s *recordingSink) get(key Key) metav1.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state[key]
}

func (s *recordingSink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.state)
}

// history is what the sink was fed.
func (s *recordingSink) history() ([]int64, []applied) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.loads), slices.Clone(s.applies)
}

func (s *recordingSink) lastRevision() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revision
}

func keyOfObject(obj metav1.Object) Key {
	switch obj.(type) {
	case *corev1.Node:
		return KeyOf(Nodes, obj)
	case *corev1.Service:
		return KeyOf(Services, obj)
	case *discoveryv1.EndpointSlice:
		return KeyOf(EndpointSlices, obj)
	case *corev1.Namespace:
		return KeyOf(Namespaces, obj)
	}
	panic(fmt.Sprintf("an input of type %T", obj))
}

func nodeKey(name string) Key {
	return Key{Kind: Nodes, NamespacedName: types.NamespacedName{Name: name}}
}
func namespaceKey(name string) Key {
	return Key{Kind: Namespaces, NamespacedName: types.NamespacedName{Name: name}}
}
func serviceKey(namespace, name string) Key {
	return Key{Kind: Services, NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}
func sliceKey(namespace, name string) Key {
	return Key{Kind: EndpointSlices, NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

var created = metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func node(name, unit string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", CreationTimestamp: created,
			Labels:      map[string]string{"topology.gridview.io/unit": unit},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24"},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: created}},
		},
	}
}

func namespace(name string, annotations map[string]string) *corev1.Namespace {
	return &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", Annotations: annotations},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
}

func service(namespace, name string, annotations map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", CreationTimestamp: created,
			Annotations: annotations, Labels: map[string]string{"app": name},
		},
		Spec: corev1.ServiceSpec{
			Selector:  map[string]string{"app": name},
			ClusterIP: "10.96.0.10",
			Ports:     []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}}},
	}
}

func slice(namespace, service string, nodes ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: service + "-x", UID: types.UID("uid-" + service + "-x"), ResourceVersion: "1",
			Labels: map[string]string{discoveryv1.LabelServiceName: service},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Service", Name: service, UID: types.UID("uid-" + service), Controller: ptr.To(true),
			}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for i, name := range nodes {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.1.0.%d", i+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName:   ptr.To(name),
		})
	}
	return s
}

// lastLoaded is the state the last Load set.
func (s *recordingSink) lastLoaded() map[Key]metav1.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loaded
}

// snapshot is a copy of the sink's state.
func (s *recordingSink) snapshot() map[Key]metav1.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.state)
}
