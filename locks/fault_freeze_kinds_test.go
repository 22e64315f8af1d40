package locks_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// The server freezes for 2 s while callers of an RWMutex writer lock or of a
// one-permit Semaphore wait: their calls time out (go-redis read timeout
// 200 ms, shorter than each call's 300 ms context), their acquire scripts wait
// in the frozen server's buffers, and so do the undos, which cannot get
// through before the server resumes. As for the Mutex
// (TestFaultServerFreezeNoGhostHolds), a late acquisition must be undone
// right behind it: the server, timed by MONITOR, shows no hold by a caller
// that gave up lasting longer than a quarter of the lease (see bound).
// Before the undo was recorded and retried for these kinds, such a hold
// lasted its whole lease. Whether a late acquisition lands at all depends
// on the order in which the resumed server reads its connections: about
// half the runs show one; TestSuiteAmbiguousAcquisitionLeavesNoHold is the
// deterministic check.
func TestFaultServerFreezeNoGhostHoldsOtherKinds(t *testing.T) {
	mostlyWaits(t)
	t.Run("RWMutex.Lock", func(t *testing.T) {
		kindFreezeGhosts(t, "freeze-rw", "{freeze-rw}", func(c *locks.Client, name string) (func(ctx context.Context) (*locks.Lease, error), error) {
			rw, err := c.RWMutex(name, locks.WithTTL(time.Second), locks.WithWatchdog(0))
			if err != nil {
				return nil, err
			}
			return rw.Lock, nil
		})
	})
	t.Run("Semaphore.Acquire", func(t *testing.T) {
		kindFreezeGhosts(t, "freeze-sem", "{freeze-sem}", func(c *locks.Client, name string) (func(ctx context.Context) (*locks.Lease, error), error) {
			sem, err := c.Semaphore(name, 1, locks.WithTTL(time.Second), locks.WithWatchdog(0))
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (*locks.Lease, error) { return sem.Acquire(ctx, 1) }, nil
		})
	})
}

// kindFreezeGhosts runs the freeze against the lock called name, whose
// holder MONITOR follows in key; take returns one caller's acquiring call.
func kindFreezeGhosts(t *testing.T, name, key string, take func(c *locks.Client, name string) (func(ctx context.Context) (*locks.Lease, error), error)) {
	const ttl = time.Second
	srv := redistest.Standalone(t)
	ctx := context.Background()

	var mu sync.Mutex
	abandoned := map[string]bool{}
	observe := locks.WithObserver(func(e locks.Event) {
		if e.Kind == locks.EventWaitFailed {
			mu.Lock()
			abandoned[e.Owner] = true
			mu.Unlock()
		}
	})
	client := func() *locks.Client {
		o := faultRedisOptions(srv.Addr)
		o.ReadTimeout, o.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond
		rc := redis.NewClient(o)
		c, err := locks.New(rc, observe)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); rc.Close() })
		return c
	}
	monitor := monitorHolders(t, srv.Addr, key)
	hold, err := take(client(), name)
	if err != nil {
		t.Fatal(err)
	}
	holder, err := hold(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var resumed atomic.Bool
	var wg sync.WaitGroup
	calls, failed := atomic.Int64{}, atomic.Int64{}
	for w := 0; w < 6; w++ {
		acquire, err := take(client(), name)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100 && !resumed.Load(); i++ {
				lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				l, err := acquire(lctx)
				cancel()
				calls.Add(1)
				if err != nil {
					failed.Add(1)
					continue
				}
				_ = l.Unlock(ctx) // a real acquisition (before the freeze or after resume)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	srv.Pause()
	time.Sleep(2 * time.Second)
	resumed.Store(true)
	srv.Resume()
	wg.Wait()
	// The undos retried in the background reach the resumed server within a
	// retry period or two; the lease of any ghost they missed ends after 1 s.
	time.Sleep(300 * time.Millisecond)

	// Ghosts measured 2-14.5 ms on an idle machine: the undo is one script,
	// as for the Mutex, but six callers (twice the Mutex test's, for more
	// late acquisitions) leave the resumed server a longer backlog. The
	// bound is a quarter of the lease: it tells an undo that followed the
	// late acquisition from one that never came (the ghost then lasts its
	// whole lease, 1 s), and leaves room for a busy machine and the race
	// detector.
	bound := ttl / 4
	var ghosts int
	var longest time.Duration
	var longestOwner string
	mu.Lock()
	sawHolder := false
	for _, h := range holds(monitor.stop()) {
		sawHolder = sawHolder || h.owner == holder.Owner()
		if abandoned[h.owner] {
			ghosts++
			if d := h.until - h.from; d > longest {
				longest, longestOwner = d, h.owner
			}
		}
	}
	nAbandoned := len(abandoned)
	mu.Unlock()
	t.Logf("server frozen 2s, TTL %v: %d calls, %d failed (%d owners gave up); holder's Err %v; %d ghost holds, the longest %v by server time (owner %q); bound %v",
		ttl, calls.Load(), failed.Load(), nAbandoned, holder.Err(), ghosts, longest.Round(10*time.Microsecond), longestOwner, bound)
	if !sawHolder {
		t.Errorf("MONITOR showed no hold by the first holder %q: the monitor does not read the lock's records", holder.Owner())
	}
	if !errors.Is(holder.Err(), locks.ErrLockLost) {
		t.Errorf("the holder's lease survived a 2s freeze with TTL %v: Err = %v", ttl, holder.Err())
	}
	if longest > bound {
		t.Errorf("a ghost hold by %s lasted %v by the server's clock, above the bound (%v): its undo did not follow the late acquisition", longestOwner, longest, bound)
	}
}
