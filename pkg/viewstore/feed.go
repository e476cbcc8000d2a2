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
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// kind is the kind of an input object.
type kind int

const (
	nodeKind kind = iota
	serviceKind
	sliceKind
	namespaceKind
)

// inputKey names a Node, Service, EndpointSlice or Namespace that may have
// changed.
type inputKey struct {
	kind kind
	types.NamespacedName
}

// Feed keeps a store current with the cluster's Nodes, Services,
// EndpointSlices and Namespaces. Informer events only queue the key of what
// changed; one worker applies the lister's current state, so the store sees
// the latest state of every object, in any order, exactly as a controller
// would.
type Feed struct {
	store      *Store
	recorder   record.EventRecorder
	nodes      corelisters.NodeLister
	services   corelisters.ServiceLister
	slices     discoverylisters.EndpointSliceLister
	namespaces corelisters.NamespaceLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedInterface[inputKey]
	// writing is held by what writes the store: the worker, or Follow.
	writing sync.Mutex
	// applied holds every object as the store has it, so that resyncs and
	// the initial events after Load cost nothing.
	applied map[inputKey]metav1.Object
	// log holds the latest inputs applied, for replicas that follow this one.
	log *inputLog
	// chosen holds, for each Service with several topology rules, the rules
	// its last Event named, so that it is reported once per change, and to
	// each Service of that name: one deleted and created again while the
	// worker was busy comes as an update.
	chosen map[types.NamespacedName]chosenRules
}

// NewFeed registers the feed's handlers on the informers; recorder reports
// malformed topology annotations on their Service or Namespace, and the rule
// chosen for a Service that carries several.
func NewFeed(store *Store, nodes coreinformers.NodeInformer, services coreinformers.ServiceInformer,
	slices discoveryinformers.EndpointSliceInformer, namespaces coreinformers.NamespaceInformer, recorder record.EventRecorder) (*Feed, error) {
	f := &Feed{
		store: store, recorder: recorder,
		nodes: nodes.Lister(), services: services.Lister(), slices: slices.Lister(), namespaces: namespaces.Lister(),
		queue:   workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[inputKey]{Name: "nodeendpoints-inputs"}),
		applied: map[inputKey]metav1.Object{},
		log:     newInputLog(inputLogLimit),
		chosen:  map[types.NamespacedName]chosenRules{},
	}
	for kind, informer := range map[kind]cache.SharedIndexInformer{
		nodeKind: nodes.Informer(), serviceKind: services.Informer(), sliceKind: slices.Informer(), namespaceKind: namespaces.Informer(),
	} {
		enqueue := func(obj any) {
			key, err := cache.DeletionHandlingObjectToName(obj)
			if err != nil {
				klog.ErrorS(err, "Cannot read the key of a changed object", "kind", kind)
				return
			}
			f.queue.Add(inputKey{kind: kind, NamespacedName: types.NamespacedName{Namespace: key.Namespace, Name: key.Name}})
		}
		registration, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
		})
		if err != nil {
			return nil, fmt.Errorf("watching the inputs of node views: %w", err)
		}
		f.synced = append(f.synced, registration.HasSynced)
	}
	return f, nil
}

// Run loads the store once the informers have synced, then applies changes
// until ctx ends.
func (f *Feed) Run(ctx context.Context) {
	defer f.queue.ShutDown()
	if !cache.WaitForNamedCacheSyncWithContext(ctx, f.synced...) {
		return
	}
	if err := f.load(); err != nil {
		klog.ErrorS(err, "Cannot load the node views")
		return
	}
	go func() {
		<-ctx.Done()
		f.queue.ShutDown()
	}()
	for {
		key, shutdown := f.queue.Get()
		if shutdown {
			return
		}
		f.apply(key)
		f.queue.Done(key)
	}
}

func (f *Feed) load() error {
	var inputs Inputs
	var err error
	if inputs.Nodes, err = f.nodes.List(labels.Everything()); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	if inputs.Services, err = f.services.List(labels.Everything()); err != nil {
		return fmt.Errorf("listing services: %w", err)
	}
	if inputs.Slices, err = f.slices.List(labels.Everything()); err != nil {
		return fmt.Errorf("listing endpointslices: %w", err)
	}
	if inputs.Namespaces, err = f.namespaces.List(labels.Everything()); err != nil {
		return fmt.Errorf("listing namespaces: %w", err)
	}
	f.writing.Lock()
	defer f.writing.Unlock()
	f.loadAt(0, newEpoch(), inputs)
	for _, ns := range inputs.Namespaces {
		if malformed := f.store.namespaceMalformed(ns.Name); malformed != "" {
			f.reportMalformed(ns, malformed)
		}
	}
	for _, svc := range inputs.Services {
		if malformed := f.store.malformed(svc); malformed != "" {
			f.reportMalformed(svc, malformed)
		}
	}
	klog.InfoS("Loaded the node views", "nodes", len(inputs.Nodes), "services", len(inputs.Services), "endpointSlices", len(inputs.Slices), "namespaces", len(inputs.Namespaces))
	return nil
}

// loadAt loads the store with inputs at resourceVersion rv, and starts the
// input log there, numbered seq. The caller holds writing.
func (f *Feed) loadAt(seq, rv uint64, inputs Inputs) {
	f.store.load(rv, inputs)
	f.applied = make(map[inputKey]metav1.Object, len(inputs.Namespaces)+len(inputs.Nodes)+len(inputs.Services)+len(inputs.Slices))
	for _, ns := range inputs.Namespaces {
		f.applied[keyOf(namespaceKind, ns)] = ns
	}
	for _, node := range inputs.Nodes {
		f.applied[keyOf(nodeKind, node)] = node
	}
	clear(f.chosen)
	for _, svc := range inputs.Services {
		f.applied[keyOf(serviceKind, svc)] = svc
		// Only a change seen while running is reported: Events are
		// ephemeral, so reporting what a start or the leader's state
		// holds would send one per Service per replica, news to nobody.
		f.noteRules(svc)
	}
	for _, slice := range inputs.Slices {
		f.applied[keyOf(sliceKind, slice)] = slice
	}
	f.log.start(seq, rv)
}

func keyOf(kind kind, obj metav1.Object) inputKey {
	return inputKey{kind: kind, NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
}

// apply brings the store to the lister's state of one object. While the
// store follows another replica, the informers' state waits: it is applied
// in full when following ends.
func (f *Feed) apply(key inputKey) {
	f.writing.Lock()
	defer f.writing.Unlock()
	if f.store.following.Load() {
		return
	}
	obj, err := f.get(key)
	switch {
	case apierrors.IsNotFound(err):
		if _, known := f.applied[key]; known {
			f.remove(key)
			delete(f.applied, key)
			f.log.add(key, nil, f.store.resourceVersion())
		}
	case err != nil:
		klog.ErrorS(err, "Cannot read a changed object", "kind", key.kind, "key", key.NamespacedName)
	case !f.isApplied(key, obj.GetResourceVersion()):
		before := f.store.resourceVersion()
		f.set(obj)
		f.applied[key] = obj
		// A Node whose status alone changed moves nothing: a follower
		// need not hear of it.
		if after := f.store.resourceVersion(); after != before {
			f.log.add(key, obj, after)
		}
	}
}

// isApplied says whether the store has this object at this resourceVersion;
// an object it has never seen is not, whatever its resourceVersion.
func (f *Feed) isApplied(key inputKey, resourceVersion string) bool {
	applied, ok := f.applied[key]
	return ok && applied.GetResourceVersion() == resourceVersion
}

func (f *Feed) get(key inputKey) (metav1.Object, error) {
	switch key.kind {
	case nodeKind:
		return f.nodes.Get(key.Name)
	case serviceKind:
		return f.services.Services(key.Namespace).Get(key.Name)
	case namespaceKind:
		return f.namespaces.Get(key.Name)
	default:
		return f.slices.EndpointSlices(key.Namespace).Get(key.Name)
	}
}

func (f *Feed) set(obj metav1.Object) {
	if malformed := f.store.set(obj); malformed != "" {
		f.reportMalformed(obj.(interface {
			metav1.Object
			runtime.Object
		}), malformed)
	}
	if svc, ok := obj.(*corev1.Service); ok {
		if rules, news := f.noteRules(svc); news {
			f.recorder.Eventf(svc, corev1.EventTypeNormal, "TopologyRuleChosen",
				"The Service carries several topology rules (%s): %s applies", strings.Join(rules, ", "), rules[0])
		}
	}
}

func (f *Feed) remove(key inputKey) {
	switch key.kind {
	case nodeKind:
		f.store.DeleteNode(key.Name)
	case serviceKind:
		f.store.DeleteService(key.NamespacedName)
		delete(f.chosen, key.NamespacedName)
	case namespaceKind:
		f.store.DeleteNamespace(key.Name)
	default:
		f.store.DeleteEndpointSlice(key.NamespacedName)
	}
}

// reportMalformed reports a malformed annotation of a Service or Namespace:
// a malformed rule leaves the Services it prunes unpruned, a malformed
// min-ready leaves the tiers ungated.
func (f *Feed) reportMalformed(obj interface {
	metav1.Object
	runtime.Object
}, why string) {
	klog.InfoS("Ignoring a malformed topology annotation", "object", klog.KObj(obj), "reason", why)
	f.recorder.Eventf(obj, corev1.EventTypeWarning, "MalformedTopology",
		"A topology annotation cannot be parsed, so it is ignored: %s", why)
}

// noteRules records which of a Service's several topology rules applies,
// and returns them and whether that is news: the Event is sent once per
// change of them. A ServiceGrid's Service is left out: its topologyKeys and
// topology.gridview.io/keys are one rule rendered twice, not a choice
// between rules.
func (f *Feed) noteRules(svc *corev1.Service) (rules []string, news bool) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	rules = topology.Rules(svc)
	if len(rules) < 2 || renderedByServiceGrid(svc) {
		delete(f.chosen, key)
		return nil, false
	}
	chosen := chosenRules{service: svc.UID, rules: strings.Join(rules, ", ")}
	if f.chosen[key] == chosen {
		return rules, false
	}
	f.chosen[key] = chosen
	return rules, true
}

// chosenRules are the rules an Event named to one Service.
type chosenRules struct {
	service types.UID
	rules   string
}

// renderedByServiceGrid says whether a topology.gridview.io ServiceGrid
// controls the Service.
func renderedByServiceGrid(svc *corev1.Service) bool {
	_, ok := topologyapi.ControllingServiceGrid(svc)
	return ok
}
