package locks_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redlua/redlua/internal/ctxcheck"
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

// TestEveryContextCallRefusesNilAndCancelled runs every exported call of
// locks that takes a context (the list is checked against the package
// source, so a new call fails the test until it is added) with a nil
// context and with a cancelled one: each returns an error that says which,
// the cancelled one wrapping context.Canceled, and nothing panics; except
// that Unlock, which is cleanup, releases with a cancelled context.
func TestEveryContextCallRefusesNilAndCancelled(t *testing.T) {
	c, err := locks.NewWithBackend(simulate.New())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := mutex(t, c, "cc-mutex")
	held, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := c.RWMutex("cc-rw")
	if err != nil {
		t.Fatal(err)
	}
	sem, err := c.Semaphore("cc-sem", 2)
	if err != nil {
		t.Fatal(err)
	}
	ml, err := c.MultiLock([]string{"cc-a", "cc-b"})
	if err != nil {
		t.Fatal(err)
	}
	multi, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]func(ctx context.Context) error{
		"Client.ForceUnlock": func(ctx context.Context) error { _, err := c.ForceUnlock(ctx, "cc-other"); return err },
		"Client.Inspect":     func(ctx context.Context) error { _, err := c.Inspect(ctx, "cc-mutex"); return err },
		"Client.InspectPage": func(ctx context.Context) error { _, err := c.InspectPage(ctx, "cc-mutex", 0, 0); return err },
		"Lease.Context": func(ctx context.Context) error {
			lc, cancel := held.Context(ctx)
			defer cancel()
			return context.Cause(lc)
		},
		"Lease.Extend":         func(ctx context.Context) error { return held.Extend(ctx, 0) },
		"Lease.Unlock":         func(ctx context.Context) error { return held.Unlock(ctx) },
		"MultiLock.Lock":       func(ctx context.Context) error { _, err := ml.Lock(ctx); return err },
		"MultiLock.TryLock":    func(ctx context.Context) error { _, err := ml.TryLock(ctx); return err },
		"MultiLease.Unlock":    func(ctx context.Context) error { return multi.Unlock(ctx) },
		"Mutex.Lock":           func(ctx context.Context) error { _, err := m.Lock(ctx); return err },
		"Mutex.TryLock":        func(ctx context.Context) error { _, err := m.TryLock(ctx); return err },
		"RWMutex.Lock":         func(ctx context.Context) error { _, err := rw.Lock(ctx); return err },
		"RWMutex.RLock":        func(ctx context.Context) error { _, err := rw.RLock(ctx); return err },
		"RWMutex.TryLock":      func(ctx context.Context) error { _, err := rw.TryLock(ctx); return err },
		"RWMutex.TryRLock":     func(ctx context.Context) error { _, err := rw.TryRLock(ctx); return err },
		"Semaphore.Acquire":    func(ctx context.Context) error { _, err := sem.Acquire(ctx, 1); return err },
		"Semaphore.TryAcquire": func(ctx context.Context) error { _, err := sem.TryAcquire(ctx, 1); return err },
		"Semaphore.SetPermits": func(ctx context.Context) error { return sem.SetPermits(ctx, 3) },
	}
	table["Mutex.Do"] = func(ctx context.Context) error {
		return mutex(t, c, "cc-do").Do(ctx, func(context.Context, *locks.Lease) error { return nil })
	}
	// Unlock is cleanup: with a cancelled context it still releases.
	ctxcheck.CheckCleanup(t, ".", table, "Lease.Unlock", "MultiLease.Unlock")
	if err := held.Err(); !errors.Is(err, locks.ErrNotHeld) {
		t.Errorf("the lease after Unlock with a cancelled context: Err = %v, want ErrNotHeld (released)", err)
	}
	for _, l := range multi.Leases {
		if err := l.Err(); !errors.Is(err, locks.ErrNotHeld) {
			t.Errorf("the multi-lease after Unlock with a cancelled context: Err = %v, want ErrNotHeld (released)", err)
		}
	}
}
