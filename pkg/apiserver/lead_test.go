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

package apiserver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A replica whose writer of the log stops, deposed, stops reconciling too;
// one whose leadership ends, or that cannot reach kube-apiserver for
// unreachableLimit, stops both; one that cannot reach it when elected does
// not start.
func TestLeadStopsReconcilingWithTheWriter(t *testing.T) {
	tests := []struct {
		name string
		// write returns at once when deposed; otherwise it waits for ctx.
		deposed bool
		// unreachable: kube-apiserver stops answering after the first
		// check; the leader steps down by itself.
		unreachable bool
		// unreachableAtStart: it never answers.
		unreachableAtStart bool
	}{
		{name: "the writer deposed", deposed: true},
		{name: "the leadership ended"},
		{name: "kube-apiserver unreachable while leading", unreachable: true},
		{name: "kube-apiserver unreachable when elected", unreachableAtStart: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var reconciling, everReconciled atomic.Bool
				write := func(ctx context.Context) error {
					if tc.deposed {
						return errors.New("deposed")
					}
					<-ctx.Done()
					return ctx.Err()
				}
				reconcile := func(ctx context.Context) {
					everReconciled.Store(true)
					reconciling.Store(true)
					<-ctx.Done()
					reconciling.Store(false)
				}
				var checks atomic.Int32
				reachable := func(context.Context) error {
					if checks.Add(1) > 1 && tc.unreachable || tc.unreachableAtStart {
						return errors.New("connection refused")
					}
					return nil
				}
				done := make(chan struct{})
				start := time.Now()
				go func() {
					defer close(done)
					lead(ctx, write, reconcile, reachable)
				}()
				synctest.Wait()
				switch {
				case tc.unreachableAtStart:
					<-done
					if everReconciled.Load() || time.Since(start) > 0 {
						t.Errorf("reconciled %v, led %v: want neither", everReconciled.Load(), time.Since(start))
					}
				case tc.unreachable:
					if !reconciling.Load() {
						t.Fatal("not reconciling while leading")
					}
					<-done
					if led := time.Since(start); led < unreachableLimit || led > unreachableLimit+2*reachCheckInterval {
						t.Errorf("led %v without reaching kube-apiserver, want about %v", led, unreachableLimit)
					}
				case !tc.deposed:
					if !reconciling.Load() {
						t.Fatal("not reconciling while leading")
					}
					time.Sleep(2 * unreachableLimit)
					synctest.Wait()
					select {
					case <-done:
						t.Fatal("stepped down while kube-apiserver answered")
					default:
					}
					cancel()
				}
				<-done
				if reconciling.Load() {
					t.Error("still reconciling after lead returned")
				}
			})
		})
	}
}
