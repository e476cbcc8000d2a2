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
	elector := l.elector.Load()
	if elector == nil {
		return "", false
	}
	holder := elector.GetLeader()
	if holder == "" || holder == l.identity {
		return "", false
	}
	at := strings.LastIndexByte(holder, '@')
	if at < 0 || at == len(holder)-1 {
		// A holder of a release before identities named an address.
		return "", false
	}
	// A process that ran at this address before this one, restarted in
	// place, holds it until the Lease expires: this replica is not its
	// own leader.
	if address := holder[at+1:]; !strings.HasSuffix(l.identity, "@"+address) {
		return address, true
	}
	return "", false
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
