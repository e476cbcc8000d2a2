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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// Replicas share one numbering of view changes: the leader's feed applies
// the informers' inputs and logs them; the other replicas' feeds apply the
// leader's inputs, in the leader's order, to a store loaded with the
// leader's state at the leader's resourceVersion. The store derives the same
// views from the same inputs, so every change gets the same resourceVersion
// on every replica, and the replica that leads next holds the history its
// clients resume from.

// Position is where a follower is in the leader's inputs: nil asks for the
// leader's state first.
type Position struct{ Seq, RV uint64 }

// ErrFollowing refuses a read of the inputs of a replica that follows
// another, before anything is written.
var ErrFollowing = errors.New("this replica follows another: read the leader's inputs")

// ErrAnotherLeads ends following because a replica other than the one
// followed, and other than this one, leads now: this store will follow it
// and load its state, and what it numbers on its own meanwhile means
// nothing to that replica.
var ErrAnotherLeads = errors.New("another replica leads now")

// ErrNotLoaded refuses a read of the inputs of a replica whose views are not
// loaded yet: its state would be empty.
var ErrNotLoaded = errors.New("this replica's node views are not loaded yet")

// heartbeatInterval is how often the leader writes to a follower that has
// nothing else to read, so that a follower tells a quiet leader from a dead
// connection.
const heartbeatInterval = 2 * time.Second

// ServeInputs writes this replica's inputs after from to w, flushing after
// each batch, until ctx ends or the store starts following another replica.
// It starts with the whole state when from is nil or no longer in the log.
// It refuses with ErrFollowing while this store follows another: a replica
// serves only the inputs it applied itself.
func (f *Feed) ServeInputs(ctx context.Context, w io.Writer, flush func(), from *Position) error {
	out := bufio.NewWriterSize(w, 64<<10)
	send := func() error {
		if err := out.Flush(); err != nil {
			return err
		}
		flush()
		return nil
	}
	generation, seq, rv, err := f.startServing(out, from)
	if err != nil {
		return err
	}
	if err := send(); err != nil {
		return err
	}
	heartbeat := time.NewTicker(heartbeatInterval)
	defer heartbeat.Stop()
	for {
		inputs, grew, ok := f.log.since(generation, seq, rv)
		if !ok {
			return errors.New("the store's state was replaced")
		}
		for _, in := range inputs {
			if err := writeInput(out, in); err != nil {
				return err
			}
			seq, rv = in.seq, in.rv
		}
		if len(inputs) > 0 {
			if err := send(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-grew:
		case <-heartbeat.C:
			if err := writeHeartbeat(out); err != nil {
				return err
			}
			if err := send(); err != nil {
				return err
			}
		}
	}
}

// startServing writes the state when from is not in the log, and returns
// the log's generation and the position the inputs follow.
func (f *Feed) startServing(out *bufio.Writer, from *Position) (generation, seq, rv uint64, err error) {
	f.writing.Lock()
	if f.store.following.Load() {
		f.writing.Unlock()
		return 0, 0, 0, ErrFollowing
	}
	if !f.store.Loaded() {
		f.writing.Unlock()
		return 0, 0, 0, ErrNotLoaded
	}
	generation = f.log.currentGeneration()
	if from != nil {
		if _, _, ok := f.log.since(generation, from.Seq, from.RV); ok {
			f.writing.Unlock()
			return generation, from.Seq, from.RV, nil
		}
	}
	// The state and its position, consistent: nothing writes the store
	// while writing is held.
	seq, rv = f.log.position()
	state := make([]loggedInput, 0, len(f.applied))
	for key, obj := range f.applied {
		state = append(state, loggedInput{key: key, object: obj})
	}
	f.writing.Unlock()
	if err := writeState(out, seq, rv, state); err != nil {
		return 0, 0, 0, err
	}
	return generation, seq, rv, nil
}

// followGrace is how long a follower tries to reach the leader again before
// it numbers changes on its own: the informers' events wait meanwhile.
const followGrace = 3 * time.Second

// Follow applies the leader's inputs, which open streams from a position,
// instead of the informers', from the leader's state on, until ctx ends or
// the leader cannot be read for followGrace. Then the store applies the informers' state and numbers
// changes on its own, past anything the leader may have numbered since.
// A ctx cancelled with ErrAnotherLeads as its cause ends the watches the
// store served meanwhile.
func (f *Feed) Follow(ctx context.Context, open func(ctx context.Context, from *Position) (io.ReadCloser, error)) error {
	diverged := false
	defer func() { f.stopFollowing(diverged || errors.Is(context.Cause(ctx), ErrAnotherLeads)) }()
	var from *Position
	failingSince := time.Time{}
	for ctx.Err() == nil {
		before := from
		err := f.followOnce(ctx, open, &from)
		if ctx.Err() != nil {
			return nil
		}
		if from != before {
			failingSince = time.Time{} // it read the leader before failing
		}
		if errors.As(err, &divergedError{}) {
			// The watches it served were sent resourceVersions that name
			// other changes on the leader: they end, and their clients
			// resume through the leader or relist.
			diverged = true
			return err
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if time.Since(failingSince) >= followGrace {
			return fmt.Errorf("reading the leader's inputs: %w", err)
		}
		klog.V(2).InfoS("Reading the leader's inputs again", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

// followOnce reads one stream of the leader's inputs until it fails; from is
// where the store is in them, nil before their state was loaded.
func (f *Feed) followOnce(ctx context.Context, open func(context.Context, *Position) (io.ReadCloser, error), from **Position) error {
	body, err := open(ctx, *from)
	if err != nil {
		return err
	}
	defer body.Close()
	// A leader writes at least every heartbeatInterval; one silent for
	// longer is gone. Only the time spent waiting for it counts, not the
	// time spent applying what it sent.
	silence := time.AfterFunc(3*heartbeatInterval, func() { body.Close() })
	defer silence.Stop()
	silence.Stop()
	in := bufio.NewReaderSize(watchedReader{body, silence}, 64<<10)
	for {
		frame, err := readFrame(in)
		if err != nil {
			return err
		}
		if err := f.applyFrame(frame, from); err != nil {
			return err
		}
	}
}

// watchedReader closes the leader's stream, through its timer, when one
// read waits for longer than the timer's duration.
type watchedReader struct {
	body    io.Reader
	silence *time.Timer
}

func (r watchedReader) Read(p []byte) (int, error) {
	r.silence.Reset(3 * heartbeatInterval)
	defer r.silence.Stop()
	return r.body.Read(p)
}

// FollowedFor is how long the store has held the state of the leader it
// follows, since it loaded it; 0 while it does not follow.
func (f *Feed) FollowedFor() time.Duration {
	if !f.store.following.Load() {
		return 0
	}
	return f.store.sinceLoad()
}

// divergedError is a store that numbered an input of the leader's otherwise
// than the leader: it cannot follow.
type divergedError struct{ seq, want, got uint64 }

func (e divergedError) Error() string {
	return fmt.Sprintf("the leader's input %d left its views at resourceVersion %d, this replica's at %d", e.seq, e.want, e.got)
}

// applyFrame applies one frame of the leader's: its state, or an input.
func (f *Feed) applyFrame(fr frame, from **Position) error {
	f.writing.Lock()
	defer f.writing.Unlock()
	switch {
	case fr.state != nil && fr.rv == 0:
		return errors.New("the leader sent a state without a resourceVersion")
	case fr.state != nil:
		// From the leader's state on, the informers' events wait: until
		// then a leader that cannot be read leaves this store current.
		f.loadAt(fr.seq, fr.rv, fr.state.inputs())
		f.store.following.Store(true)
		following.Set(1)
		klog.InfoS("Loaded the leader's node views", "resourceVersion", fr.rv)
	case fr.input != nil:
		if *from == nil || fr.input.seq != (*from).Seq+1 {
			return fmt.Errorf("the leader sent input %d out of order", fr.input.seq)
		}
		f.applyInput(*fr.input)
		if got := f.store.resourceVersion(); got != fr.input.rv {
			return divergedError{seq: fr.input.seq, want: fr.input.rv, got: got}
		}
	default:
		return nil // a heartbeat
	}
	seq, rv := f.log.position()
	*from = &Position{Seq: seq, RV: rv}
	return nil
}

// applyInput applies an input of the leader's as the leader did, and logs
// it. The leader reports what is malformed; this replica does not.
func (f *Feed) applyInput(in loggedInput) {
	if in.object == nil {
		f.remove(in.key)
		delete(f.applied, in.key)
	} else {
		f.store.set(in.object)
		f.applied[in.key] = in.object
		// The leader sent the Event; once this replica leads, it sends
		// one only for a choice the leader did not make.
		if svc, ok := in.object.(*corev1.Service); ok {
			f.noteRules(svc)
		}
	}
	f.log.add(in.key, in.object, f.store.resourceVersion())
}

// stopFollowing makes the store number changes on its own again and applies
// the informers' state, which waited while it followed.
func (f *Feed) stopFollowing(endWatches bool) {
	f.writing.Lock()
	defer f.writing.Unlock()
	if !f.store.following.Load() {
		return
	}
	f.store.following.Store(false)
	following.Set(0)
	f.store.numberOnItsOwn(endWatches)
	// The log starts again at the jump: a replica that follows this one
	// loads the state at the resourceVersion it numbers on from.
	seq, _ := f.log.position()
	rv := f.store.resourceVersion()
	f.log.start(seq, rv)
	klog.InfoS("Numbering node view changes on this replica", "from", rv, "inputs", seq)
	for key := range f.applied {
		f.queue.Add(key)
	}
	for _, key := range f.listedKeys() {
		f.queue.Add(key)
	}
}

// listedKeys names every object the informers hold.
func (f *Feed) listedKeys() []inputKey {
	var keys []inputKey
	add := func(kind kind, objects []metav1.Object) {
		for _, obj := range objects {
			keys = append(keys, keyOf(kind, obj))
		}
	}
	add(nodeKind, listed(f.nodes.List(labels.Everything())))
	add(serviceKind, listed(f.services.List(labels.Everything())))
	add(sliceKind, listed(f.slices.List(labels.Everything())))
	add(namespaceKind, listed(f.namespaces.List(labels.Everything())))
	return keys
}

// listed reads a lister's answer as objects; a lister of every object fails
// only on a selector, and labels.Everything is none.
func listed[T metav1.Object](objects []T, err error) []metav1.Object {
	if err != nil {
		klog.ErrorS(err, "Cannot list the informers' objects")
		return nil
	}
	out := make([]metav1.Object, len(objects))
	for i, obj := range objects {
		out[i] = obj
	}
	return out
}
