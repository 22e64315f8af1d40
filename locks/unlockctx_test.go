package locks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// unlockKind is one kind of lease: take holds it under a request's
// context, and free tries it from another Client, succeeding only when the
// hold was released.
type unlockKind struct {
	name string
	// take takes the lock on c and returns its release.
	take func(t *testing.T, ctx context.Context, c *locks.Client) func(context.Context) error
	// free reports whether c can take the lock at once (a TryLock).
	free func(t *testing.T, ctx context.Context, c *locks.Client) bool
}

// unlockKinds are every kind of lease, each on a name of its own. The
// leases last a minute, so only a release frees them within the test.
func unlockKinds() []unlockKind {
	ttl := locks.WithTTL(time.Minute)
	mutexTry := func(name string) func(t *testing.T, ctx context.Context, c *locks.Client) bool {
		return func(t *testing.T, ctx context.Context, c *locks.Client) bool {
			l, err := mutex(t, c, name, ttl).TryLock(ctx)
			return tookIt(t, l, err)
		}
	}
	mutexTake := func(name string, opts ...locks.Option) func(t *testing.T, ctx context.Context, c *locks.Client) func(context.Context) error {
		return func(t *testing.T, ctx context.Context, c *locks.Client) func(context.Context) error {
			l, err := mutex(t, c, name, append(opts, ttl)...).Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return l.Unlock
		}
	}
	rw := func(t *testing.T, c *locks.Client, name string) *locks.RWMutex {
		t.Helper()
		m, err := c.RWMutex(name, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	rwTake := func(name string, read bool) func(t *testing.T, ctx context.Context, c *locks.Client) func(context.Context) error {
		return func(t *testing.T, ctx context.Context, c *locks.Client) func(context.Context) error {
			m := rw(t, c, name)
			take := m.Lock
			if read {
				take = m.RLock
			}
			l, err := take(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return l.Unlock
		}
	}
	rwTry := func(name string) func(t *testing.T, ctx context.Context, c *locks.Client) bool {
		return func(t *testing.T, ctx context.Context, c *locks.Client) bool {
			l, err := rw(t, c, name).TryLock(ctx)
			return tookIt(t, l, err)
		}
	}
	sem := func(t *testing.T, c *locks.Client) *locks.Semaphore {
		t.Helper()
		s, err := c.Semaphore("ctx-sem", 1, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	multi := func(t *testing.T, c *locks.Client) *locks.MultiLock {
		t.Helper()
		m, err := c.MultiLock([]string{"ctx-multi-a", "ctx-multi-b"}, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return []unlockKind{
		{"Mutex", mutexTake("ctx-mutex"), mutexTry("ctx-mutex")},
		{"fair Mutex", mutexTake("ctx-fair", locks.WithFair(0)), mutexTry("ctx-fair")},
		{"reentrant Mutex", mutexTake("ctx-reentrant", locks.WithReentrant()), mutexTry("ctx-reentrant")},
		{"Mutex with watchdog", mutexTake("ctx-watchdog", locks.WithWatchdog(0)), mutexTry("ctx-watchdog")},
		{"RWMutex read", rwTake("ctx-read", true), rwTry("ctx-read")},
		{"RWMutex write", rwTake("ctx-write", false), rwTry("ctx-write")},
		{"Semaphore", func(t *testing.T, ctx context.Context, c *locks.Client) func(context.Context) error {
			l, err := sem(t, c).Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			return l.Unlock
		}, func(t *testing.T, ctx context.Context, c *locks.Client) bool {
			l, err := sem(t, c).TryAcquire(ctx, 1)
			return tookIt(t, l, err)
		}},
		{"MultiLock", func(t *testing.T, ctx context.Context, c *locks.Client) func(context.Context) error {
			l, err := multi(t, c).Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return l.Unlock
		}, func(t *testing.T, ctx context.Context, c *locks.Client) bool {
			l, err := multi(t, c).TryLock(ctx)
			if errors.Is(err, locks.ErrNotAcquired) {
				return false
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(context.Background()); err != nil {
				t.Fatal(err)
			}
			return true
		}},
		{"Mutex.Do", func(t *testing.T, ctx context.Context, c *locks.Client) func(context.Context) error {
			// Do holds the lock while fn runs; fn ends the request (the
			// caller's cancel below then finds it ended already) and
			// returns, and Do releases.
			reqCtx, cancel := context.WithCancel(ctx)
			err := mutex(t, c, "ctx-do", ttl).Do(reqCtx, func(lctx context.Context, _ *locks.Lease) error {
				cancel()
				if lctx.Err() == nil {
					t.Error("Do's context outlived the caller's")
				}
				return nil
			})
			if err != nil {
				t.Fatalf("Do = %v, want nil", err)
			}
			return func(context.Context) error { return nil }
		}, mutexTry("ctx-do")},
	}
}

// tookIt reports whether a TryLock took the lock (and gives it back).
func tookIt(t *testing.T, l *locks.Lease, err error) bool {
	t.Helper()
	if errors.Is(err, locks.ErrNotAcquired) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(context.Background()); err != nil {
		t.Fatal(err)
	}
	return true
}

// deferredUnlockAfterCancel is a request handler's shape: it takes the
// lock under the request's context, defers Unlock with that context, and
// the request is cancelled before the handler returns. Then the lock must
// be free at once: another Client's TryLock takes it.
func deferredUnlockAfterCancel(t *testing.T, ctx context.Context, holder, other *locks.Client, k unlockKind) {
	t.Helper()
	if !k.free(t, ctx, other) {
		t.Fatalf("%s: the lock is taken before the test took it", k.name)
	}
	var unlockErr error
	func() {
		reqCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		unlock := k.take(t, reqCtx, holder)
		defer func() { unlockErr = unlock(reqCtx) }()
		cancel() // the request ends first: its client went away
	}()
	if unlockErr != nil {
		t.Errorf("%s: the deferred Unlock with a cancelled context = %v, want nil", k.name, unlockErr)
	}
	if !k.free(t, ctx, other) {
		t.Errorf("%s: after the deferred Unlock with a cancelled context, another Client's TryLock finds the lock held; the release must reach the server whatever the caller's context", k.name)
	}
}

// Unlock releases whatever the caller's context: every kind, on
// miniredis, a real redis-server and the simulator.
func TestSuiteUnlockAfterCancelledContext(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, time.Minute)
		holder, other := f.client(t), f.client(t)
		for _, k := range unlockKinds() {
			t.Run(k.name, func(t *testing.T) { deferredUnlockAfterCancel(t, ctx, holder, other, k) })
		}
	})
}

// The same for a quorum Mutex, on simulators and on real redis-servers.
func TestQuorumUnlockAfterCancelledContext(t *testing.T) {
	ctx := timeout(t, time.Minute)
	k := unlockKinds()[0]
	t.Run("simulator", func(t *testing.T) {
		servers, _ := virtualServers(3)
		holder := quorumOf(t, servers[0], servers[1], servers[2])
		other := quorumOf(t, servers[0], servers[1], servers[2])
		deferredUnlockAfterCancel(t, ctx, holder, other, k)
		deferredUnlockAfterCancel(t, ctx, holder, other, unlockKinds()[2]) // reentrant
	})
	t.Run("redis-server", func(t *testing.T) {
		_, clients, holder := quorumServers(t, 3, locks.WithTTL(time.Minute))
		other, err := locks.NewQuorum(clients, locks.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		locks.CountEveryServer(other)
		t.Cleanup(func() { other.Close() })
		deferredUnlockAfterCancel(t, ctx, holder, other, k)
	})
}

// stuckRelease makes every release script wait, unanswered, until its
// context ends, as a server that stopped answering does.
type stuckRelease struct{ locks.Backend }

func (f stuckRelease) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if strings.Contains(s.Name, "release") {
		<-ctx.Done()
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err())
		return cmd
	}
	return f.Backend.Run(ctx, s, keys, args...)
}

// A release that gets no answer ends within the release timeout, even
// with a context that never ends, and its error matches ErrNotReleased and
// ErrLockLost (and the timeout's context error); a failing one matches
// both too. Without the release timeout the stuck Unlock would never
// return (the test's bound then fails it).
func TestUnlockThatCannotReleaseIsLockLost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend locks.Backend
		want    error
	}{
		{"stuck", stuckRelease{simulate.New()}, context.DeadlineExceeded},
		{"failing", failingRelease{simulate.New()}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := locks.NewWithBackend(tc.backend, locks.WithReleaseTimeout(20*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			l, err := mutex(t, c, "stuck").Lock(timeout(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- l.Unlock(context.Background()) }()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Unlock of a release that gets no answer did not return within 30s; the release timeout (20ms) must bound it")
			}
			if !errors.Is(err, locks.ErrNotReleased) || !errors.Is(err, locks.ErrLockLost) {
				t.Fatalf("Unlock that could not release = %v, want ErrNotReleased and ErrLockLost", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Unlock that could not release = %v, want it to match %v too", err, tc.want)
			}
			if !errors.Is(l.Err(), locks.ErrLockLost) {
				t.Errorf("Err after a failed Unlock = %v, want ErrLockLost", l.Err())
			}
		})
	}
}

// WithReleaseTimeout refuses timeouts outside its bounds, naming the fix.
func TestReleaseTimeoutBounds(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, time.Microsecond, locks.MaxTTL + 1} {
		_, err := locks.NewWithBackend(simulate.New(), locks.WithReleaseTimeout(d))
		if !errors.Is(err, locks.ErrInvalidArgument) || !strings.Contains(err.Error(), "WithReleaseTimeout(") {
			t.Errorf("WithReleaseTimeout(%v) = %v, want ErrInvalidArgument naming the option", d, err)
		}
	}
	c, err := locks.NewWithBackend(simulate.New())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Semaphore("s", 2, locks.WithReleaseTimeout(time.Second)); err != nil {
		t.Errorf("WithReleaseTimeout on a Semaphore = %v, want it accepted (all kinds)", err)
	}
	if err := mutex(t, c, "nil-fn").Do(context.Background(), nil); !errors.Is(err, locks.ErrInvalidArgument) {
		t.Errorf("Do(ctx, nil) = %v, want ErrInvalidArgument", err)
	}
}
