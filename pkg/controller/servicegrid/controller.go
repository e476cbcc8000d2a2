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

package servicegrid

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	topologyinformers "github.com/gridview/gridview/generated/informers/externalversions/topology/v1alpha1"
	topologylisters "github.com/gridview/gridview/generated/listers/topology/v1alpha1"
)

// Controller makes the Service of every ServiceGrid match it: created,
// updated, adopted, repaired after hand edits and deleted with it.
type Controller struct {
	kube     kubernetes.Interface
	gridview versioned.Interface
	grids    topologylisters.ServiceGridLister
	services corelisters.ServiceLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
	recorder record.EventRecorder
	// leading counts the terms of Lead running: only the leader acts on
	// informer events (drift repair, resyncs); writes through the storage
	// are reconciled by the replica that served them, and applies are
	// idempotent, so replicas never fight. A count, not a flag: a term may
	// start before the last one has finished ending.
	leading atomic.Int32
	deleted deletedGrids
}

// NewController wires the controller to the informers; it does not start them.
func NewController(kube kubernetes.Interface, gridview versioned.Interface, grids topologyinformers.ServiceGridInformer,
	services coreinformers.ServiceInformer, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		kube:     kube,
		gridview: gridview,
		grids:    grids.Lister(),
		services: services.Lister(),
		synced:   []cache.InformerSynced{grids.Informer().HasSynced, services.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "servicegrids"}),
		recorder: recorder,
	}
	if _, err := grids.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueObject,
		UpdateFunc: func(_, obj interface{}) { c.enqueueObject(obj) },
		DeleteFunc: c.serviceGridDeleted,
	}); err != nil {
		return nil, err
	}
	if _, err := services.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueServiceGridOf,
		UpdateFunc: func(_, obj interface{}) { c.enqueueServiceGridOf(obj) },
		DeleteFunc: c.enqueueServiceGridOf,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Enqueue asks for the ServiceGrid namespace/name to be reconciled; the
// storage calls it on every write, ahead of the informers.
func (c *Controller) Enqueue(namespace, name string) {
	c.queue.Add(cache.ObjectName{Namespace: namespace, Name: name})
}

// Lead makes this replica act on informer events until ctx ends; it is what
// a leader runs. A new leader reconciles every ServiceGrid once.
func (c *Controller) Lead(ctx context.Context) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	c.leading.Add(1)
	defer c.leading.Add(-1)
	klog.FromContext(ctx).Info("Leading: reconciling every ServiceGrid on informer events")
	grids, err := c.grids.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
	}
	for _, sg := range grids {
		c.Enqueue(sg.Namespace, sg.Name)
	}
	<-ctx.Done()
}

func (c *Controller) enqueueObject(obj interface{}) {
	if c.leading.Load() == 0 {
		return
	}
	name, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(name)
}

// serviceGridDeleted records a deletion the watch delivered and has every
// replica act on it: it is what confirms that the Services go, and deletes
// conditional on UIDs cannot fight. A tombstone only says that a relist no
// longer found the ServiceGrid, which an emptied store says as well: its
// Service stays, for the leader to report.
func (c *Controller) serviceGridDeleted(obj interface{}) {
	sg, ok := obj.(*v1alpha1.ServiceGrid)
	if !ok {
		c.enqueueObject(obj)
		return
	}
	key := cache.ObjectName{Namespace: sg.Namespace, Name: sg.Name}
	c.deleted.add(key, sg.UID)
	c.queue.Add(key)
}

// enqueueServiceGridOf enqueues the ServiceGrid a Service belongs to: its
// controller, the ServiceGrid named by its grid-selector label (adoption), or
// the ServiceGrid whose Service name it takes (a conflict that may be over).
func (c *Controller) enqueueServiceGridOf(obj interface{}) {
	if c.leading.Load() == 0 {
		return
	}
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	if owner, ok := topologyapi.ControllingServiceGrid(svc); ok {
		c.Enqueue(svc.Namespace, owner)
	}
	if selector := svc.Labels[LabelGridSelector]; selector != "" {
		c.Enqueue(svc.Namespace, selector)
	}
	if name, ok := strings.CutSuffix(svc.Name, ServiceName("")); ok && name != "" {
		if _, err := c.grids.ServiceGrids(svc.Namespace).Get(name); err == nil {
			c.Enqueue(svc.Namespace, name)
		}
	}
}

// Run waits for the informers, then reconciles with the given number of
// workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting ServiceGrid controller")
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("ServiceGrid controller: informers did not sync")
	}
	for range workers {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	<-ctx.Done()
	logger.Info("Stopping ServiceGrid controller")
	return nil
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextItem(ctx) {
	}
}

func (c *Controller) processNextItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		klog.FromContext(ctx).Error(err, "Reconciling ServiceGrid failed, will retry", "serviceGrid", key.String())
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}
