package locks_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
)

func held(t *testing.T, c *locks.Client, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		info, err := c.Inspect(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		if info.Held {
			out = append(out, n)
		}
	}
	return out
}

func TestSuiteMultiLock(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t, locks.WithTTL(time.Minute))
		if _, err := c.MultiLock([]string{"a", "b", "c", "a"}); !errors.Is(err, locks.ErrInvalidArgument) {
			t.Fatalf("a name given twice: %v, want ErrInvalidArgument", err)
		}
		ml, err := c.MultiLock([]string{"a", "b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		lease, err := ml.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(lease.Leases) != 3 {
			t.Fatalf("%d leases, want 3", len(lease.Leases))
		}
		other, _ := c.MultiLock([]string{"c", "d"})
		if _, err := other.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("TryLock over a held name = %v, want ErrNotAcquired", err)
		}
		if h := held(t, c, "d"); len(h) != 0 {
			t.Fatalf("a failed MultiLock left %v held", h)
		}
		got := make(chan error, 1)
		go func() {
			l, err := other.Lock(ctx)
			if err == nil {
				err = l.Unlock(ctx)
			}
			got <- err
		}()
		if err := lease.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("the waiting MultiLock: %v", err)
		}
		if h := held(t, c, "a", "b", "c", "d"); len(h) != 0 {
			t.Fatalf("still held after both unlocked: %v", h)
		}
		if _, err := c.MultiLock(nil); err == nil {
			t.Error("an empty MultiLock was accepted")
		}
	})
}

// A fault in the middle (the second lock's script call fails) leaves no
// lock held: the first is given back.
func TestSuiteMultiLockFaultInTheMiddle(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		var calls atomic.Int32
		c := f.wrap(t, func(b locks.Backend) locks.Backend {
			return &faultyBackend{Backend: b, fail: func(s *registry.Script) bool {
				return (s.Name == "mutex.acquire" || s.Name == "multi.acquire") && calls.Add(1) == 2
			}}
		}, locks.WithTTL(time.Minute))
		ml, _ := c.MultiLock([]string{"x", "y", "z"})
		if _, err := ml.Lock(ctx); err == nil || !errors.Is(err, errInjected) {
			t.Fatalf("Lock with a failing second acquisition = %v, want the injected error", err)
		}
		plain := f.client(t)
		if h := held(t, plain, "x", "y", "z"); len(h) != 0 {
			t.Fatalf("a failed MultiLock left %v held", h)
		}
	})
}

var errInjected = errors.New("injected fault")

type faultyBackend struct {
	locks.Backend
	fail func(*registry.Script) bool
}

func (f *faultyBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if f.fail(s) {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(errInjected)
		return cmd
	}
	return f.Backend.Run(ctx, s, keys, args...)
}

// A MultiLock blocked by a Mutex that others queue for takes its place in
// that queue: a release hands the lock on while anyone is queued, so a
// MultiLock that only waited for the lock to be free would wait as long as
// the queue never emptied. Here it queues behind one waiter and ahead of
// another, and gets the lock between them.
func TestSuiteMultiLockQueuesBehindMutexWaiters(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 30*time.Second)
		lease := locks.WithTTL(time.Minute)
		observer := f.client(t)
		waiters := func() int64 {
			info, err := observer.Inspect(ctx, "qa")
			if err != nil {
				t.Fatal(err)
			}
			return info.Waiters
		}
		holder, err := mutex(t, f.client(t, lease), "qa").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		order := make(chan string, 3)
		errs := make(chan error, 3)
		// Each contender has its own Client, as separate processes would,
		// and passes the lock on as soon as it has recorded its turn.
		// mutexTurn is made on the test's goroutine, which alone may fail
		// the test; the turn itself runs on its own.
		mutexTurn := func(who string) func() {
			m := mutex(t, f.client(t, lease), "qa")
			return func() {
				l, err := m.Lock(ctx)
				if err == nil {
					order <- who
					err = l.Unlock(ctx)
				}
				errs <- err
			}
		}
		go mutexTurn("first waiter")()
		poll(t, "the first waiter queued", 10*time.Second, nil, func() bool { return waiters() >= 1 })
		ml, err := f.client(t, lease).MultiLock([]string{"qa", "qb"})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			l, err := ml.Lock(ctx)
			if err == nil {
				// Not held(): t.Fatal may not run outside the test's goroutine.
				for _, n := range []string{"qa", "qb"} {
					if info, ierr := observer.Inspect(ctx, n); ierr != nil || !info.Held {
						err = errors.Join(err, fmt.Errorf("the MultiLock returned, but %s is held %v (%v)", n, info.Held, ierr))
					}
				}
				order <- "multilock"
				err = errors.Join(err, l.Unlock(ctx))
			}
			errs <- err
		}()
		poll(t, "the MultiLock queued behind the first waiter", 10*time.Second, nil, func() bool { return waiters() >= 2 })
		go mutexTurn("second waiter")()
		poll(t, "the second waiter queued", 10*time.Second, nil, func() bool { return waiters() >= 3 })
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		close(order)
		var got []string
		for who := range order {
			got = append(got, who)
		}
		if want := []string{"first waiter", "multilock", "second waiter"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("turns %q, want %q", got, want)
		}
	})
}

// A MultiLock keeps the locks it took while it waits for the next one;
// when a kept lease runs out meanwhile (no watchdog), it starts again
// rather than return a set with a lost lease in it.
func TestSuiteMultiLockStartsAgainWhenAKeptLeaseEnds(t *testing.T) {
	mostlyWaits(t)
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 30*time.Second)
		const ttl = 2 * time.Second
		ml, err := f.client(t, locks.WithTTL(ttl)).MultiLock([]string{"ka", "kb"})
		if err != nil {
			t.Fatal(err)
		}
		first, second := ml.Names()[0], ml.Names()[1]
		observer := f.client(t)
		holder, err := mutex(t, f.client(t, locks.WithTTL(time.Minute)), second).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *locks.MultiLease, 1)
		errs := make(chan error, 1)
		go func() {
			l, err := ml.Lock(ctx)
			got <- l
			errs <- err
		}()
		isHeld := func(name string) bool { return len(held(t, observer, name)) == 1 }
		queued := func() bool { info, _ := observer.Inspect(ctx, second); return info.Waiters == 1 }
		poll(t, "the MultiLock holding "+first+" and queued for "+second, 10*time.Second, nil, func() bool { return isHeld(first) && queued() })
		f.elapse(ttl + ttl/4)
		// The kept lease ran out: the MultiLock took the first lock again and
		// queued again (the server dropped the expired hold at once; a
		// Client whose lease clock is the wall clock notices when it ends).
		poll(t, "the MultiLock taking "+first+" again", 10*time.Second, nil, func() bool { return isHeld(first) && queued() })
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		l := <-got
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		for _, lease := range l.Leases {
			if err := lease.Err(); err != nil {
				t.Fatalf("Lock returned %s with a lease that had ended: %v", lease.Name(), err)
			}
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// MultiLocks over overlapping names and Mutexes on each name, all
// contending: every lock is held by one caller at a time, and every caller
// finishes (the MultiLocks wait in one order, so they cannot deadlock).
func TestSuiteMultiLockContendedWithMutexes(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		contendMultiAndMutexes(t, timeout(t, time.Minute), f.client, max(20/f.scale, 4), "c")
	})
}

// contendMultiAndMutexes runs three MultiLocks over overlapping pairs of
// three names and a Mutex on each name, every one on its own Client, for
// rounds each, and fails on two holders of one name at once or on any
// error (a deadlock ends in ctx's).
func contendMultiAndMutexes(t *testing.T, ctx context.Context, client func(*testing.T, ...locks.Option) *locks.Client, rounds int, prefix string) {
	x, y, z := prefix+"x", prefix+"y", prefix+"z"
	inside := map[string]*atomic.Int32{}
	for _, n := range []string{x, y, z} {
		inside[n] = new(atomic.Int32)
	}
	critical := func(who string, held []string) error {
		defer func() {
			for _, n := range held {
				inside[n].Add(-1)
			}
		}()
		var err error
		for _, n := range held {
			if c := inside[n].Add(1); c > 1 && err == nil {
				err = fmt.Errorf("%s found %d holders of %s", who, c, n)
			}
		}
		time.Sleep(time.Millisecond)
		return err
	}
	var actors []func() error
	for _, set := range [][]string{{x, y}, {y, z}, {z, x}} {
		ml, err := client(t, locks.WithTTL(time.Minute)).MultiLock(set)
		if err != nil {
			t.Fatal(err)
		}
		actors = append(actors, func() error {
			for range rounds {
				l, err := ml.Lock(ctx)
				if err != nil {
					return err
				}
				err = critical(fmt.Sprint("MultiLock ", set), set)
				if err := errors.Join(err, l.Unlock(ctx)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, n := range []string{x, y, z} {
		m := mutex(t, client(t, locks.WithTTL(time.Minute)), n)
		actors = append(actors, func() error {
			for range rounds {
				l, err := m.Lock(ctx)
				if err != nil {
					return err
				}
				err = critical("Mutex "+n, []string{n})
				if err := errors.Join(err, l.Unlock(ctx)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	errs := make(chan error, len(actors))
	for _, a := range actors {
		go func() { errs <- a() }()
	}
	for range actors {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
