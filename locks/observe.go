package locks

import (
	"sync/atomic"
	"time"
)

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	EventAcquired    EventKind = iota + 1 // a lease was taken (Wait says how long it took)
	EventContended                        // an attempt found the lock held by another owner
	EventWaitFailed                       // Lock gave up (Err says why: context, backend error)
	EventRenewFailed                      // a watchdog renewal failed; it will retry until the lease would expire
	EventLost                             // a lease was lost (expired or taken) before Unlock
	EventReleased                         // a lease was released by Unlock
)

// Event is one thing that happened to a lock, for observers.
type Event struct {
	Kind  EventKind
	Name  string        // the lock's name
	Owner string        // the owner token
	Token int64         // the fencing token, when known
	Wait  time.Duration // for EventAcquired and EventWaitFailed: time spent in Lock
	Err   error         // for failures
}

// Stats are a Client's counters since it was created.
type Stats struct {
	Acquired     uint64 // leases taken
	Contended    uint64 // attempts that found the lock held by another owner
	WaitFailures uint64 // Lock calls that gave up
	RenewFailed  uint64 // watchdog renewals that failed
	Lost         uint64 // leases lost before Unlock
	Released     uint64 // leases released by Unlock
}

type counters struct {
	acquired, contended, waitFailures, renewFailed, lost, released atomic.Uint64
}

func (c *Client) emit(s *settings, e Event) {
	switch e.Kind {
	case EventAcquired:
		c.counts.acquired.Add(1)
	case EventContended:
		c.counts.contended.Add(1)
	case EventWaitFailed:
		c.counts.waitFailures.Add(1)
	case EventRenewFailed:
		c.counts.renewFailed.Add(1)
	case EventLost:
		c.counts.lost.Add(1)
	case EventReleased:
		c.counts.released.Add(1)
	}
	if s.observer != nil {
		s.observer(e)
	}
}

// Stats returns the Client's counters.
func (c *Client) Stats() Stats {
	return Stats{
		Acquired: c.counts.acquired.Load(), Contended: c.counts.contended.Load(),
		WaitFailures: c.counts.waitFailures.Load(), RenewFailed: c.counts.renewFailed.Load(),
		Lost: c.counts.lost.Load(), Released: c.counts.released.Load(),
	}
}
