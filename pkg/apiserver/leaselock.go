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
	"bytes"
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

var _ resourcelock.Interface = &patientLock{}

// patientLock gives the Lease's holder a whole Lease duration to renew once
// this replica reads the Lease again after failing to. A kube-apiserver down
// for longer than the renew deadline stops every replica renewing, the
// holder included; without the grace the first replica to read the Lease
// when kube-apiserver returns takes it, which may be another replica. A new
// leader numbers view changes from its own epoch, so that would make every
// client of NodeEndpoints relist its node's views, across the WAN. A holder
// that is gone costs one more Lease duration: each record the holder wrote
// is granted the grace once.
//
// The leader, for its part, does not give the Lease up when it failed to
// renew: the elector tries to release it once, at the renew deadline, and
// should kube-apiserver answer by then a follower could take it. It releases
// it when its campaign ends, as the process stops, if it holds it then.
//
// The elector calls Get and Update from one goroutine at a time.
type patientLock struct {
	resourcelock.Interface
	campaign context.Context
	// readFailed says whether the last read of the Lease failed.
	readFailed bool
	// granted is the record, as read, that was granted the grace.
	granted []byte
	// skippedRelease says a release was skipped since the last successful
	// read.
	skippedRelease bool
	// yields says whether this replica leaves a record's holder's Lease to
	// another replica (leadership.yieldsTo); yielded is the record it
	// yields, since yieldedAt.
	yields    func(holder string) bool
	yielded   []byte
	yieldedAt time.Time
}

// graceMark ends a granted record as the elector sees it: a record it has
// not observed, so it counts the Lease's duration again from now. ownMark
// ends this replica's own record read after a skipped release: the elector
// then sees no holder, and would ignore a record whose bytes it took in
// before, waiting a retry period (2-4.4 s) to renew.
// yieldMark and yieldAgainMark end a yielded record: the elector counts the
// Lease's duration from when this replica began to yield, then once more.
const (
	graceMark      = ' '
	ownMark        = '\n'
	yieldMark      = '\t'
	yieldAgainMark = '\r'
)

// leaseDuration is how long the elector waits after it saw a record change
// before it may take the Lease.
const leaseDuration = 15 * time.Second

func (p *patientLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	record, raw, err := p.Interface.Get(ctx)
	readFailed := p.readFailed
	p.readFailed = err != nil && !apierrors.IsNotFound(err)
	if err != nil {
		return record, raw, err
	}
	if p.yields != nil && p.yields(record.HolderIdentity) {
		return record, p.yieldedRaw(raw), nil
	}
	skippedRelease := p.skippedRelease
	p.skippedRelease = false
	if skippedRelease && record.HolderIdentity == p.Identity() {
		return record, append(bytes.Clone(raw), ownMark), nil
	}
	if !bytes.Equal(raw, p.granted) {
		if !readFailed || record.HolderIdentity == "" || record.HolderIdentity == p.Identity() {
			return record, raw, nil
		}
		klog.InfoS("Reading the Lease again after failing to: its holder has a whole Lease duration to renew before this replica may take it",
			"lease", p.Describe(), "holder", record.HolderIdentity)
		p.granted = raw
	}
	return record, append(bytes.Clone(raw), graceMark), nil
}

// yieldedRaw is what the elector sees of a record this replica yields:
// marked, so that it counts the Lease's duration from when this replica
// began to yield it, and once that passed marked otherwise, so that it
// counts it once more. The replica it yields to, which saw the record's
// last renewal, takes the Lease meanwhile.
func (p *patientLock) yieldedRaw(raw []byte) []byte {
	if !bytes.Equal(raw, p.yielded) {
		klog.InfoS("Leaving the Lease of the process before this one at its address to the replica that followed it",
			"lease", p.Describe())
		p.yielded, p.yieldedAt = bytes.Clone(raw), time.Now()
	}
	mark := byte(yieldMark)
	if time.Since(p.yieldedAt) >= leaseDuration {
		mark = yieldAgainMark
	}
	return append(bytes.Clone(raw), mark)
}

// Update skips a release while the campaign goes on. It reports success, so
// that the elector no longer sees itself as the holder and reads the Lease
// before it writes again: another replica may have taken it meanwhile.
func (p *patientLock) Update(ctx context.Context, record resourcelock.LeaderElectionRecord) error {
	if record.HolderIdentity == "" && p.campaign.Err() == nil {
		klog.InfoS("Not releasing the Lease after a failed renewal: this replica runs for it again", "lease", p.Describe())
		p.skippedRelease = true
		return nil
	}
	return p.Interface.Update(ctx, record)
}
