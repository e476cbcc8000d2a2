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
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/leaderelection"
)

// leadership is what this replica knows of the Lease that elects the leader:
// the replica that reconciles ServiceGrids and whose numbering of view
// changes every replica serves. A replica's identity in the Lease ends with
// "@<host:port>", the address its peers reach it at.
type leadership struct {
	identity string
	elector  atomic.Pointer[leaderelection.LeaderElector]
	// electing is when the elector started, in Unix nanoseconds.
	electing atomic.Int64
	// settled is set once the elector has seen who holds the Lease, or
	// has tried for leaderUnknownLimit.
	settled atomic.Bool
	// peerAsked is set once another replica asked this one for its inputs
	// and was refused (refusesFollower).
	peerAsked atomic.Bool
}

// leaderUnknownLimit bounds how long a replica whose elector cannot read the
// Lease (RBAC denies it, say) stays unready: it then serves reads itself, as
// every replica would, rather than none.
const leaderUnknownLimit = 10 * time.Second

func newLeadership(advertise string) *leadership {
	hostname, _ := os.Hostname()
	return &leadership{identity: hostname + "_" + string(uuid.NewUUID()) + "@" + advertise}
}

// leaderAddress is the address of the leader when another replica holds the
// Lease, as last observed (the elector reads the Lease every retry period).
func (l *leadership) leaderAddress() (string, bool) {
	address, another := l.holderAddress()
	// A process that ran at this address before this one, restarted in
	// place, holds it until the Lease expires: this replica is not its
	// own leader.
	if another && !l.isOwnAddress(address) {
		return address, true
	}
	return "", false
}

// yieldsTo says whether this replica leaves the Lease held by holder to
// another replica, rather than take it when it expires: holder is the
// process before this one at its address, and another replica, which
// followed that process and holds the clients' history, asked this one for
// its inputs (refusesFollower). Asked by none, a single replica restarted
// after a crash takes its Lease back as soon as it may.
func (l *leadership) yieldsTo(holder string) bool {
	return l.peerAsked.Load() && l.isPredecessor(holder)
}

// predecessorLeads says whether the Lease names an earlier process at this
// replica's own address: this one restarted in place (a crash, an OOM kill)
// before the Lease expired. Its views were loaded afresh, in a numbering of
// its own, while a replica that followed the predecessor holds the history
// the clients resume from; that replica, which saw the predecessor's last
// renewal where this one saw only the record since it started, takes the
// Lease first.
func (l *leadership) predecessorLeads() bool {
	elector := l.elector.Load()
	return elector != nil && l.isPredecessor(elector.GetLeader())
}

// isPredecessor says whether a Lease holder is another process at this
// replica's address.
func (l *leadership) isPredecessor(holder string) bool {
	address, another := l.addressOf(holder)
	return another && l.isOwnAddress(address)
}

// isOwnAddress says whether a Lease identity's address is this replica's.
func (l *leadership) isOwnAddress(address string) bool {
	return strings.HasSuffix(l.identity, "@"+address)
}

// refusesPeers says why this replica refuses what another replica asks of
// the Lease's address, its inputs and the reads it forwards, if it does:
// its predecessor holds the Lease, or it has not read the Lease yet and so
// cannot tell (its views are loaded before it campaigns). That replica then
// keeps its history and serves those reads itself.
func (l *leadership) refusesPeers() error {
	switch {
	case !l.leaderSettled():
		return errLeaseUnread
	case l.predecessorLeads():
		return errPredecessorLeads
	}
	return nil
}

// refusesFollower is refusesPeers for a replica that asks for this one's
// inputs to follow them, which only gridview's ServiceAccount may (RBAC):
// a refused one is noted, and this replica is then not ready and yields the
// Lease to it (waitsForPredecessor, yieldsTo). A forwarded read, whose
// header any caller may set, is no such proof.
func (l *leadership) refusesFollower() error {
	err := l.refusesPeers()
	if err != nil {
		l.peerAsked.Store(true)
	}
	return err
}

// waitsForPredecessor is why this replica is not ready: another replica
// asked it for its inputs while the Lease still names its predecessor, so
// the aggregator's reads belong with that replica. A replica no other asked
// is alone and ready at once, as a single replica restarted after a crash
// must be.
func (l *leadership) waitsForPredecessor() error {
	if l.peerAsked.Load() && l.predecessorLeads() {
		return errPredecessorLeads
	}
	return nil
}

// Why a replica refuses other replicas (refusesPeers); restarted in place,
// it is not ready either once one asked (waitsForPredecessor).
var (
	errPredecessorLeads = errors.New("an earlier process at this replica's address holds the Lease: " +
		"this one restarted before it expired, and waits until it expires or moves")
	errLeaseUnread = errors.New("this replica has not read the Lease yet: it cannot tell whether it leads")
)

// holderAddress is the address the Lease's holder named, when that is
// another process than this one.
func (l *leadership) holderAddress() (string, bool) {
	elector := l.elector.Load()
	if elector == nil {
		return "", false
	}
	return l.addressOf(elector.GetLeader())
}

// addressOf is the address a Lease holder's identity names, when that is
// another process than this one.
func (l *leadership) addressOf(holder string) (string, bool) {
	if holder == "" || holder == l.identity {
		return "", false
	}
	at := strings.LastIndexByte(holder, '@')
	if at < 0 || at == len(holder)-1 {
		// A holder of a release before identities named an address.
		return "", false
	}
	return holder[at+1:], true
}

// isLeader tells whether this replica holds the Lease, as last observed.
func (l *leadership) isLeader() bool {
	elector := l.elector.Load()
	return elector != nil && elector.IsLeader()
}

// leaderSettled says whether this replica has seen who holds the Lease.
// Until it has, it serves every read itself, which its clients would have
// to relist at the leader: a replica is ready only from then, or after
// leaderUnknownLimit. It stays settled while the Lease changes hands, so
// that a healthy replica does not leave the Service's endpoints for a
// second.
func (l *leadership) leaderSettled() bool {
	if l.settled.Load() {
		return true
	}
	elector := l.elector.Load()
	if elector != nil && (elector.GetLeader() != "" || time.Since(time.Unix(0, l.electing.Load())) >= leaderUnknownLimit) {
		l.settled.Store(true)
	}
	return l.settled.Load()
}
