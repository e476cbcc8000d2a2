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
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// A write carries at most maxBatchOps inputs (etcd refuses a transaction of
// more than 128 operations by default) and, past the first, maxBatchBytes
// of them (it refuses a request of more than 1.5 MiB). It carries at most
// maxBatchNodes Nodes: a node that moves changes up to one view per Service
// for itself and more for the nodes that see its endpoints, and the events
// of one revision must fit the resourceVersions it numbers them with.
const (
	maxBatchOps   = 100
	maxBatchBytes = 1 << 20
	maxBatchNodes = 32
)

// writeWorkers is how many transactions the writer keeps in flight: etcd
// syncs concurrent ones to disk together, so ingest is not one disk sync
// per batch. A key is in one at a time.
const writeWorkers = 4

// ErrDeposed ends a writer's lead: its fence no longer holds, so another
// replica writes the log now.
var ErrDeposed = errors.New("another replica leads gridview's input log")

// Writer copies the informers' state of the inputs into the log while this
// replica leads: only what the views read of each object, and only when
// that changed.
type Writer struct {
	client     *clientv3.Client
	prefix     string
	nodes      corelisters.NodeLister
	services   corelisters.ServiceLister
	slices     discoverylisters.EndpointSliceLister
	namespaces corelisters.NamespaceLister
	synced     []cache.InformerSynced
	// queue holds the keys to write while the writer leads, nil otherwise.
	queue atomic.Pointer[workqueue.Typed[Key]]
	// taking is held by the worker that takes a batch from the queue.
	taking sync.Mutex
	seed   maphash.Seed
}

// NewWriter registers the writer's handlers on the informers.
func NewWriter(client *clientv3.Client, prefix string, nodes coreinformers.NodeInformer, services coreinformers.ServiceInformer,
	slices discoveryinformers.EndpointSliceInformer, namespaces coreinformers.NamespaceInformer) (*Writer, error) {
	w := &Writer{
		client: client, prefix: prefix, seed: maphash.MakeSeed(),
		nodes: nodes.Lister(), services: services.Lister(), slices: slices.Lister(), namespaces: namespaces.Lister(),
	}
	for kind, informer := range map[Kind]cache.SharedIndexInformer{
		Nodes: nodes.Informer(), Services: services.Informer(), EndpointSlices: slices.Informer(), Namespaces: namespaces.Informer(),
	} {
		enqueue := func(obj any) {
			name, err := cache.DeletionHandlingObjectToName(obj)
			if err != nil {
				klog.ErrorS(err, "Cannot read the key of a changed input", "kind", kind)
				return
			}
			if queue := w.queue.Load(); queue != nil {
				queue.Add(Key{Kind: kind, NamespacedName: name.AsNamespacedName()})
			}
		}
		registration, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
		})
		if err != nil {
			return nil, fmt.Errorf("watching the inputs of node views: %w", err)
		}
		w.synced = append(w.synced, registration.HasSynced)
	}
	return w, nil
}

// Lead writes the log until ctx ends or the fence, the condition of this
// replica's leadership that every write carries, fails. It first writes
// what differs between the informers and the log, then every change.
func (w *Writer) Lead(ctx context.Context, fence clientv3.Cmp) error {
	if !cache.WaitForNamedCacheSyncWithContext(ctx, w.synced...) {
		return ctx.Err()
	}
	queue := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[Key]{Name: "gridview-input-log"})
	defer queue.ShutDown()
	// Events from now on are queued; the listing below covers the rest.
	w.queue.Store(queue)
	defer w.queue.Store(nil)
	written, err := w.read(ctx)
	if err != nil {
		return err
	}
	for key := range written {
		queue.Add(key)
	}
	if err := w.enqueueListed(queue); err != nil {
		return err
	}
	klog.InfoS("Writing gridview's input log", "inputs", len(written), "queued", queue.Len())
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	held := &heldInputs{hashes: written}
	var workers sync.WaitGroup
	for range writeWorkers {
		workers.Go(func() {
			for {
				batch, shutdown := w.takeBatch(queue)
				if shutdown || ctx.Err() != nil {
					// A queue shut down still hands out what it holds.
					return
				}
				err := w.write(ctx, fence, batch, held)
				for _, key := range batch {
					queue.Done(key)
				}
				switch {
				case errors.Is(err, ErrDeposed):
					cancel(err)
					return
				case err != nil && ctx.Err() == nil:
					klog.ErrorS(err, "Cannot write gridview's input log; retrying", "inputs", len(batch))
					for _, key := range batch {
						queue.Add(key)
					}
					pause(ctx, time.Second)
				}
			}
		})
	}
	workers.Wait()
	return context.Cause(ctx)
}

// unknownContent is the hash of an input the log may hold, in a version the
// writer does not know: any version of it is written again.
const unknownContent = 0

// heldInputs is a hash of each input the log holds, as far as the writer
// knows, shared by its workers. A key is written by one worker at a time.
type heldInputs struct {
	mu     sync.Mutex
	hashes map[Key]uint64
}

func (h *heldInputs) get(key Key) (uint64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hash, ok := h.hashes[key]
	return hash, ok
}

func (h *heldInputs) update(put map[Key]uint64, deleted []Key) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, hash := range put {
		h.hashes[key] = hash
	}
	for _, key := range deleted {
		delete(h.hashes, key)
	}
}

// takeBatch waits for a key, then takes what else is queued, up to a batch.
// One worker takes at a time: another could take the key this one saw
// queued, and leave it waiting, with its batch, for a key to come.
func (w *Writer) takeBatch(queue *workqueue.Typed[Key]) ([]Key, bool) {
	w.taking.Lock()
	defer w.taking.Unlock()
	key, shutdown := queue.Get()
	if shutdown {
		return nil, true
	}
	batch := []Key{key}
	nodes := 0
	for {
		if key.Kind == Nodes {
			nodes++
		}
		if len(batch) == maxBatchOps || nodes == maxBatchNodes || queue.Len() == 0 {
			return batch, false
		}
		if key, shutdown = queue.Get(); shutdown {
			return batch, false
		}
		batch = append(batch, key)
	}
}

// read returns a hash of each input the log holds.
func (w *Writer) read(ctx context.Context) (map[Key]uint64, error) {
	resp, err := w.client.Get(ctx, w.prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading gridview's input log: %w", err)
	}
	written := make(map[Key]uint64, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		key, err := parsePath(w.prefix, string(kv.Key))
		if err != nil {
			return nil, err
		}
		written[key] = maphash.Bytes(w.seed, kv.Value)
	}
	return written, nil
}

func (w *Writer) enqueueListed(queue *workqueue.Typed[Key]) error {
	nodes, nodesErr := w.nodes.List(labels.Everything())
	services, servicesErr := w.services.List(labels.Everything())
	slices, slicesErr := w.slices.List(labels.Everything())
	namespaces, namespacesErr := w.namespaces.List(labels.Everything())
	if err := errors.Join(nodesErr, servicesErr, slicesErr, namespacesErr); err != nil {
		return fmt.Errorf("listing the inputs: %w", err)
	}
	enqueueAll(queue, Nodes, nodes)
	enqueueAll(queue, Services, services)
	enqueueAll(queue, EndpointSlices, slices)
	enqueueAll(queue, Namespaces, namespaces)
	return nil
}

func enqueueAll[T metav1.Object](queue *workqueue.Typed[Key], kind Kind, objects []T) {
	for _, obj := range objects {
		queue.Add(KeyOf(kind, obj))
	}
}

// write brings the log to the informers' state of a batch of inputs, in
// one transaction under the fence, and records what it wrote in written.
// What would make the request too large is queued again.
func (w *Writer) write(ctx context.Context, fence clientv3.Cmp, batch []Key, written *heldInputs) error {
	var ops []clientv3.Op
	put := map[Key]uint64{}
	var deleted []Key
	size := 0
	for i, key := range batch {
		obj, err := w.get(key)
		switch {
		case apierrors.IsNotFound(err):
			if _, ok := written.get(key); ok {
				ops = append(ops, clientv3.OpDelete(key.path(w.prefix)))
				deleted = append(deleted, key)
			}
			continue
		case err != nil:
			return fmt.Errorf("reading the %v %v: %w", key.Kind, key.NamespacedName, err)
		}
		value, err := encode(obj)
		if err != nil {
			return err
		}
		hash := maphash.Bytes(w.seed, value)
		if held, ok := written.get(key); ok && held == hash {
			continue
		}
		if len(ops) > 0 && size+len(value) > maxBatchBytes {
			for _, rest := range batch[i:] {
				w.requeue(rest)
			}
			break
		}
		size += len(value)
		ops = append(ops, clientv3.OpPut(key.path(w.prefix), string(value)))
		put[key] = hash
	}
	if len(ops) == 0 {
		return nil
	}
	resp, err := w.client.Txn(ctx).If(fence).Then(ops...).Commit()
	if err != nil {
		// The write may have been made (a timeout): what it put is in the
		// log as far as the retry knows, so that an object deleted meanwhile
		// is deleted from it too.
		for key := range put {
			put[key] = unknownContent
		}
		written.update(put, nil)
		return fmt.Errorf("writing gridview's input log: %w", err)
	}
	if !resp.Succeeded {
		return ErrDeposed
	}
	written.update(put, deleted)
	return nil
}

// requeue queues a key of the batch being written again: the queue hands
// it out once the batch is done with it.
func (w *Writer) requeue(key Key) {
	if queue := w.queue.Load(); queue != nil {
		queue.Add(key)
	}
}

func (w *Writer) get(key Key) (metav1.Object, error) {
	switch key.Kind {
	case Nodes:
		return w.nodes.Get(key.Name)
	case Services:
		return w.services.Services(key.Namespace).Get(key.Name)
	case Namespaces:
		return w.namespaces.Get(key.Name)
	default:
		return w.slices.EndpointSlices(key.Namespace).Get(key.Name)
	}
}
