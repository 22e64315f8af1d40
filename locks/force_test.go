package locks_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
)

// ForceUnlock with WithGrace(0) frees a lock held by a stuck owner at once:
// a waiter takes it (woken by the release message, or at its next look: the
// holder's lease has a minute left), the new token is larger, and the old
// holder learns it lost the lock (revoked). The revocation's other half (a
// grace period, the holder's confirmation) is in revoke_test.go.
func TestSuiteForceUnlock(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		stuck, operator, waiter := f.client(t), f.client(t), f.client(t)
		old, err := mutex(t, stuck, "batch", locks.WithTTL(time.Minute)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := mutex(t, waiter, "batch", locks.WithTTL(time.Minute), locks.WithWaiterTTL(3*time.Second))
		waited := inBackground(t, "the waiter", func() (*locks.Lease, error) { return m.Lock(ctx) })
		// The waiter may not have subscribed yet; force-unlocking before it
		// does is fine too (its next attempt finds the lock free).
		removed, err := operator.ForceUnlock(ctx, "batch", locks.WithGrace(0))
		if err != nil || !removed {
			t.Fatalf("ForceUnlock = %v, %v; want true", removed, err)
		}
		next := waited()
		if next.Token() <= old.Token() {
			t.Fatalf("token after a force unlock %d <= old token %d", next.Token(), old.Token())
		}
		if err := old.Extend(ctx, 0); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("old holder's Extend = %v, want ErrLockLost", err)
		}
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if removed, err := operator.ForceUnlock(ctx, "batch", locks.WithGrace(0)); err != nil || removed {
			t.Fatalf("ForceUnlock of a free lock = %v, %v; want false, nil", removed, err)
		}
	})
}

func TestForceUnlockBadInput(t *testing.T) {
	c, done := newExampleClient()
	defer done()
	if _, err := c.ForceUnlock(context.Background(), ""); err == nil {
		t.Fatal("ForceUnlock(\"\") succeeded")
	}
	//lint:ignore SA1012 the point is a nil context
	if _, err := c.ForceUnlock(nil, "x"); err == nil { //nolint:staticcheck
		t.Fatal("ForceUnlock(nil ctx) succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.ForceUnlock(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("ForceUnlock(cancelled) = %v, want context.Canceled", err)
	}
}

// ForceUnlock with WithGrace(0) frees a semaphore held by stuck owners: a
// queued Acquire of both permits takes them (the holders' leases have a
// minute left; the waiter looks again at the latest after a third of its
// waiter TTL of 3 s), and the removed holders learn that they lost their
// permits.
func TestSuiteForceUnlockSemaphore(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(3 * time.Second)}
		stuck := semaphore(t, f.client(t, opts...), "workers", 2)
		first, err := stuck.Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		second, err := stuck.Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		runs := new(atomic.Int64)
		waiter := semaphore(t, counted(t, f, "sem.acquire", runs, opts...), "workers", 2)
		waited := inBackground(t, "the queued Acquire after ForceUnlock", func() (*locks.Lease, error) { return waiter.Acquire(ctx, 2) })
		// Queued once it looked again after subscribing to its wake-ups, so
		// only a wake-up can make it look before the test's bound.
		poll(t, "the Acquire queues", 10*time.Second, func() {}, func() bool { return runs.Load() >= 2 })

		operator := f.client(t)
		removed, err := operator.ForceUnlock(ctx, "workers", locks.WithGrace(0))
		if err != nil || !removed {
			t.Fatalf("ForceUnlock = %v, %v; want true", removed, err)
		}
		next := waited()
		if next.Token() <= second.Token() {
			t.Fatalf("token after a force unlock %d <= old token %d", next.Token(), second.Token())
		}
		if err := first.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("removed holder's Unlock = %v, want ErrLockLost", err)
		}
		if err := second.Extend(ctx, 0); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("removed holder's Extend = %v, want ErrLockLost", err)
		}
		// The old holders' release took nothing from the new one.
		info, err := operator.Inspect(ctx, "workers")
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Permits) != 1 || info.Permits[0].Owner != next.Owner() || info.Permits[0].Permits != 2 {
			t.Fatalf("Inspect after the waiter took the permits = %+v, want %s with 2", info, next.Owner())
		}
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if removed, err := operator.ForceUnlock(ctx, "workers", locks.WithGrace(0)); err != nil || removed {
			t.Fatalf("ForceUnlock of a free semaphore = %v, %v; want false, nil", removed, err)
		}
	})
}

// ForceUnlock with WithGrace(0) of a stuck RWMutex writer: the waiting
// writer takes the lock at its next look (a third of its waiter TTL of
// 3 s at the latest), with a larger token, and the old writer lost it.
func TestSuiteForceUnlockRWMutexWriter(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(3 * time.Second)}
		old, err := rwmutex(t, f.client(t, opts...), "catalog").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		next := waitingWriter(ctx, t, f, "catalog", opts...)
		removed, err := f.client(t).ForceUnlock(ctx, "catalog", locks.WithGrace(0))
		if err != nil || !removed {
			t.Fatalf("ForceUnlock = %v, %v; want true", removed, err)
		}
		if l := next(); l.Token() <= old.Token() {
			t.Fatalf("token after a force unlock %d <= old token %d", l.Token(), old.Token())
		}
		if err := old.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("the removed writer's Unlock = %v, want ErrLockLost", err)
		}
	})
}

// ForceUnlock with WithGrace(0) removes an RWMutex's readers; the waiting
// writer takes the lock at its next look (a third of its waiter TTL of 3 s
// at the latest). The removed readers' leases end as lost, and the
// writer's token is above theirs.
func TestSuiteForceUnlockRWMutexReaders(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(3 * time.Second)}
		first, err := rwmutex(t, f.client(t, opts...), "ledger").RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		second, err := rwmutex(t, f.client(t, opts...), "ledger").RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		writer := waitingWriter(ctx, t, f, "ledger", opts...)
		operator := f.client(t)
		info, err := operator.Inspect(ctx, "ledger")
		if err != nil || len(info.Readers) != 2 {
			t.Fatalf("Inspect before = %+v, %v; want 2 readers", info, err)
		}
		removed, err := operator.ForceUnlock(ctx, "ledger", locks.WithGrace(0))
		if err != nil || !removed {
			t.Fatalf("ForceUnlock = %v, %v; want true", removed, err)
		}
		next := writer()
		if next.Token() <= max(first.Token(), second.Token()) {
			t.Fatalf("the writer's token %d is not above the removed readers' %d and %d", next.Token(), first.Token(), second.Token())
		}
		if err := first.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("a removed reader's Unlock = %v, want ErrLockLost", err)
		}
		if err := second.Extend(ctx, 0); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("a removed reader's Extend = %v, want ErrLockLost", err)
		}
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if removed, err := operator.ForceUnlock(ctx, "ledger", locks.WithGrace(0)); err != nil || removed {
			t.Fatalf("ForceUnlock of a free lock = %v, %v; want false, nil", removed, err)
		}
	})
}

// waitingWriter starts a Lock of the RWMutex name on a Client of its own
// and returns once the writer waits (it looked again after subscribing to
// its wake-ups); next is as inBackground's.
func waitingWriter(ctx context.Context, t *testing.T, f fixture, name string, opts ...locks.Option) (next func() *locks.Lease) {
	t.Helper()
	runs := new(atomic.Int64)
	writer := rwmutex(t, counted(t, f, "rw.lock", runs, opts...), name)
	next = inBackground(t, "the waiting writer after ForceUnlock", func() (*locks.Lease, error) { return writer.Lock(ctx) })
	poll(t, "the writer waits", 5*time.Second, func() {}, func() bool { return runs.Load() >= 2 })
	return next
}

// inBackground runs acquire on a goroutine of its own; next waits for its
// lease, failing the test with what's error if acquire failed (its ctx
// ended first, say).
func inBackground(t *testing.T, what string, acquire func() (*locks.Lease, error)) (next func() *locks.Lease) {
	got := make(chan *locks.Lease, 1)
	failed := make(chan error, 1)
	go func() {
		l, err := acquire()
		if err != nil {
			failed <- err
			return
		}
		got <- l
	}()
	return func() *locks.Lease {
		t.Helper()
		select {
		case l := <-got:
			return l
		case err := <-failed:
			t.Fatalf("%s: %v", what, err)
			return nil
		}
	}
}
