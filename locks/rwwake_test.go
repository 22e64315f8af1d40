package locks_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
)

// Writers waiting for an RWMutex in separate processes are woken one at a
// time: the release that frees the lock, a writer's Unlock or the last
// reader's RUnlock, wakes only the oldest waiting writer, so the handoffs
// between eight waiting writers cost about eight rw.lock runs, not
// 8+7+...+1 = 36 as when every release woke every waiter. TTLs and waiter
// TTLs are a minute, so that a wait hint (a third of the waiter TTL) cannot
// stand in for a wake-up within the test's 30 seconds.
func TestSuiteRWMutexWakesOneWriter(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}
		for _, first := range []struct {
			name string
			take func(rw *locks.RWMutex, ctx context.Context) (*locks.Lease, error)
		}{
			{"after a writer", (*locks.RWMutex).Lock},
			{"after a reader", (*locks.RWMutex).RLock},
		} {
			t.Run(first.name, func(t *testing.T) {
				ctx := timeout(t, 30*time.Second)
				name := "wake-" + first.name[len("after a "):]
				holder, err := first.take(rwmutex(t, f.client(t, opts...), name), ctx)
				if err != nil {
					t.Fatal(err)
				}
				const writers = 8
				runs := new(atomic.Int64)
				errs := make(chan error, writers)
				for i := 0; i < writers; i++ {
					rw := rwmutex(t, counted(t, f, "rw.lock", runs, opts...), name)
					go func() {
						l, err := rw.Lock(ctx)
						if err == nil {
							err = l.Unlock(ctx)
						}
						errs <- err
					}()
				}
				// Each writer waits once it looked again after subscribing
				// to its wake-ups: two runs.
				poll(t, "every writer waits", 10*time.Second, func() {}, func() bool { return runs.Load() >= 2*writers })
				queued := runs.Load()
				if err := holder.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < writers; i++ {
					if err := <-errs; err != nil {
						t.Fatal(err)
					}
				}
				t.Logf("%d rw.lock runs after the writers waited", runs.Load()-queued)
				// One wake-up per handoff: 8 runs (a few more if a wake-up
				// raced a writer's own second look).
				if after := runs.Load() - queued; after > writers+writers/2 {
					t.Fatalf("%d rw.lock runs after the %d writers waited, want about %d: releases wake more than one writer", after, writers, writers)
				}
			})
		}
	})
}
