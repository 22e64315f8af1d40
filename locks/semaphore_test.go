package locks_test

import (
	"errors"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
)

func semaphore(t *testing.T, c *locks.Client, name string, permits int, opts ...locks.Option) *locks.Semaphore {
	t.Helper()
	s, err := c.Semaphore(name, permits, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// 32 goroutines take 1 or 2 of 5 permits at a time; never more than 5 are in use.
// miniredis runs a tenth of the rounds (f.scale), as for the other stress tests.
func TestSuiteSemaphoreNeverOverAdmits(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 60*time.Second)
		c := f.client(t, locks.WithTTL(10*time.Second))
		const permits, workers = 5, 32
		rounds := 30 / f.scale
		var inUse, peak, over atomic.Int32
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed))
				sem, _ := c.Semaphore("pool", permits)
				for i := 0; i < rounds; i++ {
					n := 1 + rng.Intn(2)
					l, err := sem.Acquire(ctx, n)
					if err != nil {
						t.Error(err)
						return
					}
					now := inUse.Add(int32(n))
					if now > permits {
						over.Add(1)
					}
					for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
					}
					time.Sleep(100 * time.Microsecond)
					inUse.Add(-int32(n))
					if err := l.Unlock(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}(int64(w))
		}
		wg.Wait()
		if over.Load() != 0 {
			t.Fatalf("more than %d permits were in use %d times", permits, over.Load())
		}
		if peak.Load() < 2 {
			t.Errorf("peak use %d: the semaphore admitted only one holder at a time", peak.Load())
		}
	})
}

// A holder that crashed gets its permits back when their leases expire;
// SetPermits changes the count for everyone at run time.
func TestSuiteSemaphoreExpiryAndResize(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		crashed := semaphore(t, c, "slots", 2, locks.WithTTL(200*time.Millisecond))
		if _, err := crashed.Acquire(ctx, 2); err != nil { // never released
			t.Fatal(err)
		}
		sem := semaphore(t, c, "slots", 2, locks.WithTTL(time.Minute))
		if _, err := sem.TryAcquire(ctx, 1); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("TryAcquire with no free permit = %v, want ErrNotAcquired", err)
		}
		f.elapse(300 * time.Millisecond)
		one, err := sem.TryAcquire(ctx, 2)
		if err != nil {
			t.Fatalf("after the crashed holder's leases expired: %v", err)
		}
		if err := sem.SetPermits(ctx, 3); err != nil {
			t.Fatal(err)
		}
		extra, err := semaphore(t, c, "slots", 2).TryAcquire(ctx, 1)
		if err != nil {
			t.Fatalf("a third permit after SetPermits(3), seen by another Semaphore value: %v", err)
		}
		wire, _ := extra.Marshal()
		resumed, err := f.client(t).Resume(wire)
		if err != nil {
			t.Fatal(err)
		}
		if err := resumed.Unlock(ctx); err != nil {
			t.Fatalf("releasing permits from another process: %v", err)
		}
		if err := one.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := sem.Acquire(ctx, 0); err == nil {
			t.Error("Acquire(0) accepted")
		}
		if _, err := c.Semaphore("bad", 0); err == nil {
			t.Error("a semaphore with 0 permits accepted")
		}
	})
}
