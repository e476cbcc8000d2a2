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

package scale

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// writers is how many writes the harness has in flight: enough to keep
// kube-apiserver busy on two cores, few enough to stay under its
// max-requests-inflight.
const writers = 32

// job is one write. Jobs with the same key run in order, on one worker, so
// that later writes of an object land after earlier ones.
type job struct {
	key   string
	write func(context.Context) error
}

// runJobs runs jobs on the writer pool and returns the first error, after
// retrying what kube-apiserver asks to be retried.
func runJobs(ctx context.Context, jobs []job) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	queues := make([]chan job, writers)
	var wg sync.WaitGroup
	for i := range queues {
		queues[i] = make(chan job, 64)
		wg.Go(func() {
			for j := range queues[i] {
				if ctx.Err() != nil {
					continue
				}
				if err := writeWithRetry(ctx, j); err != nil {
					cancel(err)
				}
			}
		})
	}
	seed := maphash.MakeSeed()
	for _, j := range jobs {
		queues[maphash.String(seed, j.key)%writers] <- j
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

func writeWithRetry(ctx context.Context, j job) error {
	var err error
	for attempt := range 6 {
		if err = j.write(ctx); err == nil {
			return nil
		}
		if !apierrors.IsTooManyRequests(err) && !apierrors.IsServerTimeout(err) && !apierrors.IsTimeout(err) &&
			!apierrors.IsInternalError(err) && !apierrors.IsServiceUnavailable(err) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
		}
	}
	return fmt.Errorf("writing %s: %w", j.key, err)
}
