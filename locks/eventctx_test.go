package locks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/simulate"
)

type traceKey struct{}

// The events that end a call (EventAcquired, EventWaitFailed,
// EventReleased) carry the call's context, with the caller's values, and
// when the call began and ended: what a hook needs to record the call as a
// span in the caller's trace. Every kind, a lock handed over to a waiter,
// a Lock that gave up.
func TestEventsCarryTheCallsContextAndTimes(t *testing.T) {
	var mu sync.Mutex
	var events []locks.Event
	c, err := locks.NewWithBackend(simulate.New(), locks.WithTTL(time.Minute), locks.WithHook(func(e locks.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.WithValue(timeout(t, 30*time.Second), traceKey{}, "trace-1")
	m := mutex(t, c, "traced")
	first, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	handed := make(chan error, 1)
	go func() {
		l, err := m.Lock(ctx) // handed over by first's Unlock
		if err == nil {
			err = l.Unlock(ctx)
		}
		handed <- err
	}()
	poll(t, "the second Lock queued", 20*time.Second, nil, func() bool {
		info, err := c.Inspect(ctx, "traced")
		return err == nil && info.Waiters > 0
	})
	if err := first.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-handed; err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Lock(gone); err == nil {
		t.Fatal("Lock with a cancelled context succeeded")
	}
	rw, _ := c.RWMutex("traced-rw")
	r, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Unlock(ctx)
	sem, _ := c.Semaphore("traced-sem", 1)
	p, err := sem.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Unlock(ctx)

	mu.Lock()
	defer mu.Unlock()
	count := map[locks.EventKind]int{}
	for _, e := range events {
		if e.Time.IsZero() {
			t.Errorf("%v event of %s has no Time", e.Kind, e.Name)
		}
		switch e.Kind {
		case locks.EventAcquired, locks.EventWaitFailed, locks.EventReleased:
		default:
			continue
		}
		count[e.Kind]++
		if e.Context == nil || e.Context.Value(traceKey{}) != "trace-1" {
			t.Errorf("%v event of %s: Context = %v, want the caller's (with its values)", e.Kind, e.Name, e.Context)
		}
		if e.Start.IsZero() || e.Time.Before(e.Start) {
			t.Errorf("%v event of %s: Start %v, Time %v; want the call's start, no later than the event", e.Kind, e.Name, e.Start, e.Time)
		}
	}
	if count[locks.EventAcquired] != 4 || count[locks.EventReleased] != 4 || count[locks.EventWaitFailed] != 1 {
		t.Errorf("events with a call's context: %v, want 4 acquired, 4 released, 1 wait-failed", count)
	}
}
