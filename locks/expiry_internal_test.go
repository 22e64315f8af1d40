package locks

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlua/redlua/simulate"
)

// countingClock counts the timers armed on it.
type countingClock struct {
	*simulate.VirtualClock
	armed atomic.Int64
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.armed.Add(1)
	return c.VirtualClock.AfterFunc(d, f)
}

// One timer serves all of a Client's leases: leases taken one after the
// other (each ending later than the one before) arm it once, and it still
// ends each lease at its own deadline, in order, minding renewals and
// leases that ended before.
func TestExpiriesOneTimerForAllLeases(t *testing.T) {
	clock := &countingClock{VirtualClock: simulate.NewVirtualClock(time.Now())}
	c, err := NewWithBackend(simulate.New(simulate.WithClock(clock.VirtualClock)), WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	lease := func(ttl time.Duration) *Lease {
		return newLease(c, &keys{name: "x"}, &c.defaults, nil, "o", 1, 1, clock.Now(), ttl)
	}
	lost := func(l *Lease) bool { return errors.Is(l.err, ErrLockLost) }

	// 1,000 leases of one TTL, 100µs apart, as a busy Client takes them:
	// one timer, armed for the first.
	var many []*Lease
	for range 1000 {
		many = append(many, lease(time.Second))
		clock.Advance(100 * time.Microsecond)
	}
	if n := clock.armed.Load(); n != 1 {
		t.Fatalf("1,000 leases armed %d timers, want 1", n)
	}
	for _, l := range many[:500] {
		l.end(unlockedError{"x"}) // Unlock: off the heap, the timer stays
	}
	clock.Advance(963 * time.Millisecond) // past the deadlines of leases 500 to 750
	for i, l := range many[500:] {
		if held := l.deadline.After(clock.Now()); held == lost(l) {
			t.Fatalf("lease %d: lost %v %v before its deadline", 500+i, lost(l), l.deadline.Sub(clock.Now()))
		}
	}
	for _, l := range many[:500] {
		if lost(l) {
			t.Fatal("a lease that ended by Unlock was reported lost")
		}
	}
	clock.Advance(time.Second)
	for i, l := range many[500:] {
		if !lost(l) {
			t.Fatalf("lease %d still held a second past its deadline", 500+i)
		}
	}

	// A renewal moves a deadline past the timer; a shorter lease taken
	// later is due sooner and re-arms it.
	long, renewed := lease(time.Minute), lease(time.Second)
	renewed.mu.Lock()
	renewed.deadline = clock.Now().Add(2 * time.Minute)
	c.expiries.track(renewed, renewed.deadline)
	renewed.mu.Unlock()
	short := lease(100 * time.Millisecond)
	clock.Advance(time.Second)
	if !lost(short) || lost(long) || lost(renewed) {
		t.Fatalf("after 1s: short lost %v, long lost %v, renewed lost %v; want true, false, false", lost(short), lost(long), lost(renewed))
	}
	clock.Advance(time.Minute)
	if !lost(long) || lost(renewed) {
		t.Fatalf("after 61s: long lost %v, renewed lost %v; want true, false", lost(long), lost(renewed))
	}
	clock.Advance(time.Minute)
	if !lost(renewed) {
		t.Fatal("the renewed lease outlived its new deadline")
	}
	if n := len(c.expiries.leases); n != 0 {
		t.Fatalf("%d leases left on the heap after all ended", n)
	}
}
