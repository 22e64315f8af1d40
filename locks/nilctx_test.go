package locks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/simulate"
)

// Every call that touches the server refuses a nil context with an error
// that names the lock, the call and the fix, and does not panic.
func TestNilContextIsRefusedEverywhere(t *testing.T) {
	c, err := locks.NewWithBackend(simulate.New())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := mutex(t, c, "nc-mutex")
	held, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rw, _ := c.RWMutex("nc-rw")
	sem, _ := c.Semaphore("nc-sem", 2)
	ml, _ := c.MultiLock([]string{"nc-a", "nc-b"})
	var nilCtx context.Context
	for _, tc := range []struct {
		call string
		err  func() error
	}{
		{"nc-mutex: Lock", func() error { _, err := m.Lock(nilCtx); return err }},
		{"nc-mutex: TryLock", func() error { _, err := m.TryLock(nilCtx); return err }},
		{"nc-mutex: Extend", func() error { return held.Extend(nilCtx, 0) }},
		{"nc-mutex: Unlock", func() error { return held.Unlock(nilCtx) }},
		{"nc-rw: Lock", func() error { _, err := rw.Lock(nilCtx); return err }},
		{"nc-rw: RLock", func() error { _, err := rw.RLock(nilCtx); return err }},
		{"nc-rw: TryLock", func() error { _, err := rw.TryLock(nilCtx); return err }},
		{"nc-rw: TryRLock", func() error { _, err := rw.TryRLock(nilCtx); return err }},
		{"semaphore nc-sem: Acquire", func() error { _, err := sem.Acquire(nilCtx, 1); return err }},
		{"semaphore nc-sem: TryAcquire", func() error { _, err := sem.TryAcquire(nilCtx, 1); return err }},
		{"semaphore nc-sem: SetPermits", func() error { return sem.SetPermits(nilCtx, 3) }},
		{"multilock: Lock", func() error { _, err := ml.Lock(nilCtx); return err }},
		{"multilock: TryLock", func() error { _, err := ml.TryLock(nilCtx); return err }},
	} {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.call) || !strings.Contains(err.Error(), "context.Background()") {
			t.Errorf("%s with a nil context = %v, want an error naming the call and the fix", tc.call, err)
		}
	}
	if err := held.Unlock(ctx); err != nil {
		t.Fatalf("the lease after the refused calls: %v", err)
	}
}
