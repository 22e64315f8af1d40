package locks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
)

// ForceUnlock frees a lock held by a stuck owner: a waiter takes it at once
// (woken by the release message: the holder's lease has a minute left), the
// new token is larger, and the old holder learns it lost the lock.
func TestSuiteForceUnlock(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		stuck, operator, waiter := f.client(t), f.client(t), f.client(t)
		old, err := mutex(t, stuck, "batch", locks.WithTTL(time.Minute)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *locks.Lease, 1)
		failed := make(chan error, 1)
		go func() {
			l, err := mutex(t, waiter, "batch", locks.WithTTL(time.Minute)).Lock(ctx)
			if err != nil {
				failed <- err
				return
			}
			got <- l
		}()
		// The waiter may not have subscribed yet; force-unlocking before it
		// does is fine too (its next attempt finds the lock free).
		removed, err := operator.ForceUnlock(ctx, "batch")
		if err != nil || !removed {
			t.Fatalf("ForceUnlock = %v, %v; want true", removed, err)
		}
		var next *locks.Lease
		select {
		case next = <-got:
		case err := <-failed:
			t.Fatalf("waiter: %v", err)
		}
		if next.Token() <= old.Token() {
			t.Fatalf("token after a force unlock %d <= old token %d", next.Token(), old.Token())
		}
		if err := old.Extend(ctx, 0); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("old holder's Extend = %v, want ErrLockLost", err)
		}
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if removed, err := operator.ForceUnlock(ctx, "batch"); err != nil || removed {
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
