package locks

import (
	"container/heap"
	"sync"
	"time"
)

// expiries ends a Client's leases whose local deadline passed, on one timer
// for all of them.
//
// A timer per lease cost an uncontended Lock+Unlock pair about an eighth of
// its time: arming a timer that is due sooner than the one the Go runtime's
// network poller sleeps towards wakes the poller, three futex calls per pair
// where go-redis alone makes half of one. One timer, armed at the earliest
// deadline and moved only when a sooner deadline arrives, is almost never
// armed again: each new lease ends later than the ones before it. A lease
// that ends (Unlock, loss) only leaves the heap; the timer may then fire
// with nothing due, and it re-arms for the earliest deadline left.
//
// Lock order: a lease's mu, then expiries.mu. fire holds neither while it
// ends a lease: it calls checkDeadline, which looks at the lease's own
// deadline, so a renewal confirmed just after fire took the lease off the
// heap (and put it back with its new deadline) still wins.
type expiries struct {
	clock Clock

	mu      sync.Mutex
	leases  leaseHeap
	armedAt time.Time   // when the timer fires; zero when none is armed
	stop    func() bool // stops the armed timer
}

// track starts watching l's deadline, or moves it. The caller holds l.mu.
func (e *expiries) track(l *Lease, deadline time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if l.expiryIndex >= 0 {
		l.expiryAt = deadline
		heap.Fix(&e.leases, l.expiryIndex)
	} else {
		l.expiryAt = deadline
		heap.Push(&e.leases, l)
	}
	if e.armedAt.IsZero() || deadline.Before(e.armedAt) {
		e.arm(deadline)
	}
}

// forget stops watching l. The caller holds l.mu.
func (e *expiries) forget(l *Lease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if l.expiryIndex >= 0 {
		heap.Remove(&e.leases, l.expiryIndex)
	}
}

// arm replaces the timer by one that fires at at. The caller holds e.mu.
func (e *expiries) arm(at time.Time) {
	if e.stop != nil {
		e.stop()
	}
	e.armedAt = at
	e.stop = e.clock.AfterFunc(at.Sub(e.clock.Now()), e.fire)
}

// fire ends every lease whose deadline passed and re-arms for the next.
func (e *expiries) fire() {
	now := e.clock.Now()
	var due []*Lease
	e.mu.Lock()
	for len(e.leases) > 0 && !now.Before(e.leases[0].expiryAt) {
		due = append(due, heap.Pop(&e.leases).(*Lease))
	}
	e.armedAt, e.stop = time.Time{}, nil
	if len(e.leases) > 0 {
		e.arm(e.leases[0].expiryAt)
	}
	e.mu.Unlock()
	for _, l := range due {
		l.checkDeadline()
	}
}

// leaseHeap orders leases by local deadline (container/heap).
type leaseHeap []*Lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].expiryAt.Before(h[j].expiryAt) }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].expiryIndex, h[j].expiryIndex = i, j
}

func (h *leaseHeap) Push(x any) {
	l := x.(*Lease)
	l.expiryIndex = len(*h)
	*h = append(*h, l)
}

func (h *leaseHeap) Pop() any {
	old := *h
	l := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	l.expiryIndex = -1
	return l
}
