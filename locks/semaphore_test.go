package locks_test

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
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

// scriptCounter counts the runs of one script through a Client's backend,
// once each has returned.
type scriptCounter struct {
	locks.Backend
	name string
	runs *atomic.Int64
}

func (b scriptCounter) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	cmd := b.Backend.Run(ctx, s, keys, args...)
	if s.Name == b.name {
		b.runs.Add(1)
	}
	return cmd
}

// counted returns a Client, as another process would have one, whose runs
// of script are added to runs.
func counted(t *testing.T, f fixture, script string, runs *atomic.Int64, opts ...locks.Option) *locks.Client {
	return f.wrap(t, func(b locks.Backend) locks.Backend { return scriptCounter{Backend: b, name: script, runs: runs} }, opts...)
}

// Waiters are served in order: a request for both permits, queued while
// one is taken, is not passed over by later requests for one, which queue
// behind it (TryAcquire included), as golang.org/x/sync/semaphore serves
// them. SetPermits wakes the queue too.
func TestSuiteSemaphoreServesWaitersInOrder(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}
		holder, err := semaphore(t, f.client(t, opts...), "pool", 2).Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			who   string
			lease *locks.Lease
			err   error
		}
		done := make(chan result, 2)
		start := func(who string, n int) *atomic.Int64 {
			runs := new(atomic.Int64)
			sem := semaphore(t, counted(t, f, "sem.acquire", runs, opts...), "pool", 2)
			go func() {
				l, err := sem.Acquire(ctx, n)
				done <- result{who, l, err}
			}()
			return runs
		}
		// The two-permit call has queued once it looked again after
		// subscribing to its wake-ups (its second run).
		bigRuns := start("big", 2)
		poll(t, "the two-permit Acquire queues", 10*time.Second, func() {}, func() bool { return bigRuns.Load() >= 2 })

		late := semaphore(t, f.client(t, opts...), "pool", 2)
		if l, err := late.TryAcquire(ctx, 1); !errors.Is(err, locks.ErrNotAcquired) {
			if l != nil {
				l.Unlock(ctx)
			}
			t.Fatalf("TryAcquire(1) with one permit free and a queued Acquire(2) owed it = %v, want ErrNotAcquired", err)
		}
		smallRuns := start("small", 1)
		poll(t, "the one-permit Acquire queues", 10*time.Second, func() {}, func() bool { return smallRuns.Load() >= 2 })
		select {
		case r := <-done:
			t.Fatalf("%s acquired (err %v) while the first holder still held its permit", r.who, r.err)
		default:
		}

		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		first := <-done
		if first.err != nil || first.who != "big" {
			t.Fatalf("first served: %s (err %v), want big, which queued first", first.who, first.err)
		}
		if err := first.lease.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		second := <-done
		if second.err != nil || second.who != "small" {
			t.Fatalf("second served: %s (err %v), want small", second.who, second.err)
		}

		// A queued call is woken when SetPermits raises the count.
		bigRuns = start("big again", 2)
		poll(t, "the two-permit Acquire queues again", 10*time.Second, func() {}, func() bool { return bigRuns.Load() >= 2 })
		if err := late.SetPermits(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if r := <-done; r.err != nil {
			t.Fatalf("after SetPermits(3): %v", r.err)
		}
	})
}

// queuedSemaphore starts Acquire(n) on a semaphore of its own Client and
// returns once the call is queued; the call's error arrives on done. It
// keeps the permits it takes until the test ends.
func queuedSemaphore(t *testing.T, f fixture, name string, permits, n int, done chan<- error, opts ...locks.Option) {
	t.Helper()
	runs := new(atomic.Int64)
	sem := semaphore(t, counted(t, f, "sem.acquire", runs, opts...), name, permits)
	ctx := timeout(t, 20*time.Second)
	go func() {
		_, err := sem.Acquire(ctx, n)
		done <- err
	}()
	// Queued once it looked again after subscribing to its wake-ups.
	poll(t, "the Acquire queues", 10*time.Second, func() {}, func() bool { return runs.Load() >= 2 })
}

// A waiter that gives up leaves the queue and wakes those it held back: a
// two-permit request at the head, cancelled, lets the one-permit request
// behind it take the permit that was free all along.
func TestSuiteSemaphoreGiveUpLetsOthersThrough(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}
		holder, err := semaphore(t, f.client(t, opts...), "gate", 2).Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Unlock(ctx)
		bigCtx, cancel := context.WithCancel(ctx)
		bigRuns := new(atomic.Int64)
		big := semaphore(t, counted(t, f, "sem.acquire", bigRuns, opts...), "gate", 2)
		bigDone := make(chan error, 1)
		go func() { _, err := big.Acquire(bigCtx, 2); bigDone <- err }()
		poll(t, "the two-permit Acquire queues", 10*time.Second, func() {}, func() bool { return bigRuns.Load() >= 2 })

		small := make(chan error, 1)
		queuedSemaphore(t, f, "gate", 2, 1, small, opts...)
		cancel()
		if err := <-bigDone; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled Acquire returned %v, want context.Canceled", err)
		}
		if err := <-small; err != nil {
			t.Fatalf("the one-permit Acquire behind the cancelled one: %v", err)
		}
	})
}

// SetPermits below what queued calls ask: each of them (more than the 8
// a script drops along the way) gives up with the error it gets when it
// asks for more than the count, and never holds a permit; a call queued
// behind them that fits the new count is served.
func TestSuiteSemaphoreLoweredCountTurnsAwayOversizedCalls(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}
		sem := semaphore(t, f.client(t, opts...), "shrink", 3)
		holder, err := sem.Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Unlock(ctx)
		const oversized = 10
		big := make(chan error, oversized)
		for range oversized {
			queuedSemaphore(t, f, "shrink", 3, 3, big, opts...)
		}
		small := make(chan error, 1)
		queuedSemaphore(t, f, "shrink", 3, 1, small, opts...)
		if err := sem.SetPermits(ctx, 2); err != nil {
			t.Fatal(err)
		}
		for range oversized {
			if err := <-big; err == nil || !strings.Contains(err.Error(), "asked for 3 permits but it has 2") {
				t.Fatalf("an Acquire(3) after SetPermits(2) returned %v, want the error that it asked for more than the count", err)
			}
		}
		if err := <-small; err != nil {
			t.Fatalf("the Acquire(1) behind them: %v", err)
		}
		info, err := f.client(t).Inspect(ctx, "shrink")
		if err != nil {
			t.Fatal(err)
		}
		got := permitsOf(t, info, time.Minute)
		if len(got) != 2 || got[holder.Owner()] != 1 || info.Waiters != 0 {
			t.Fatalf("Inspect = %+v, want the holder and the Acquire(1) with a permit each, no one else, no waiter", info)
		}
	})
}

// Holders that die release nothing: when their permits run out, the head
// of the queue looks by itself and takes its permit, and wakes the waiter
// behind it for the permit left (the keeper, with a one-minute waiter TTL,
// would look only 20 s later).
func TestSuiteSemaphoreWaitersOutliveCrashedHolders(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		crashed := semaphore(t, f.client(t), "crash", 2, locks.WithTTL(200*time.Millisecond))
		if _, err := crashed.Acquire(ctx, 2); err != nil { // never released
			t.Fatal(err)
		}
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}
		done := make(chan error, 2)
		queuedSemaphore(t, f, "crash", 2, 1, done, opts...)
		queuedSemaphore(t, f, "crash", 2, 1, done, opts...)
		f.elapse(300 * time.Millisecond)
		for i := 0; i < 2; i++ {
			if err := <-done; err != nil {
				t.Fatalf("waiter after the holder's permits ran out: %v", err)
			}
		}
	})
}
