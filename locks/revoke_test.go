package locks_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// These tests rest on the revocation contract of docs/layout.md: extend
// replies -2 for a revoked hold, x holds count as held, and releases drop
// them.

// grantWatch is a Backend that counts confirmed subscriptions to revoke
// channels (one per Client, "redlua:revoke:<id>"), so that a test knows
// when a lease's Client listens, and can drop the "revoke" messages (a
// holder that cannot be told).
type grantWatch struct {
	locks.Backend
	subscribed *atomic.Int64
	deaf       bool
}

func (g grantWatch) Subscribe(ctx context.Context, ch string, deliver func(string)) (func(), error) {
	stop, err := g.Backend.Subscribe(ctx, ch, func(p string) {
		if g.deaf && strings.HasPrefix(p, "revoke") {
			return
		}
		deliver(p)
	})
	if err == nil && strings.Contains(ch, "redlua:revoke:") {
		g.subscribed.Add(1)
	}
	return stop, err
}

// revokeEnv is a real redis-server and Clients on it, each a process of
// its own.
type revokeEnv struct {
	srv *redistest.Server
}

func (e revokeEnv) client(t *testing.T, opts ...locks.Option) *locks.Client {
	t.Helper()
	c, err := locks.NewWithBackend(mustRunner(t, e.srv), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// holderClient is a Client whose revoke subscription the test can await
// (listening), and which ignores "revoke" messages when deaf.
func (e revokeEnv) holderClient(t *testing.T, deaf bool, opts ...locks.Option) (c *locks.Client, listening func()) {
	t.Helper()
	n := new(atomic.Int64)
	c, err := locks.NewWithBackend(grantWatch{Backend: mustRunner(t, e.srv), subscribed: n, deaf: deaf}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, func() {
		t.Helper()
		poll(t, "the holder's revoke subscription", 10*time.Second, nil, func() bool { return n.Load() > 0 })
	}
}

// revokeKind is one kind of hold under test.
type revokeKind struct {
	kind string
	// hold takes the holds a forced unlock revokes, on c.
	hold func(ctx context.Context, t *testing.T, c *locks.Client, name string) []*locks.Lease
	// try makes one non-waiting attempt that needs what the holds have;
	// it releases what it took.
	try func(ctx context.Context, c *locks.Client, name string) error
	// wait waits for what the holds have; opts come after revokeOpts.
	wait func(ctx context.Context, c *locks.Client, name string, opts ...locks.Option) (*locks.Lease, error)
}

var revokeOpts = []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}

func revokeKinds() []revokeKind {
	must := func(l *locks.Lease, err error) func(t *testing.T) *locks.Lease {
		return func(t *testing.T) *locks.Lease {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	}
	release := func(ctx context.Context, l *locks.Lease, err error) error {
		if err == nil {
			return l.Unlock(ctx)
		}
		return err
	}
	return []revokeKind{{
		kind: "Mutex",
		hold: func(ctx context.Context, t *testing.T, c *locks.Client, name string) []*locks.Lease {
			return []*locks.Lease{must(mutex(t, c, name, revokeOpts...).Lock(ctx))(t)}
		},
		try: func(ctx context.Context, c *locks.Client, name string) error {
			m, _ := c.Mutex(name, revokeOpts...)
			l, err := m.TryLock(ctx)
			return release(ctx, l, err)
		},
		wait: func(ctx context.Context, c *locks.Client, name string, opts ...locks.Option) (*locks.Lease, error) {
			m, _ := c.Mutex(name, append(revokeOpts, opts...)...)
			return m.Lock(ctx)
		},
	}, {
		kind: "RWMutex writer",
		hold: func(ctx context.Context, t *testing.T, c *locks.Client, name string) []*locks.Lease {
			return []*locks.Lease{must(rwmutex(t, c, name, revokeOpts...).Lock(ctx))(t)}
		},
		try: func(ctx context.Context, c *locks.Client, name string) error {
			rw, _ := c.RWMutex(name, revokeOpts...)
			l, err := rw.TryRLock(ctx)
			return release(ctx, l, err)
		},
		wait: func(ctx context.Context, c *locks.Client, name string, opts ...locks.Option) (*locks.Lease, error) {
			rw, _ := c.RWMutex(name, append(revokeOpts, opts...)...)
			return rw.Lock(ctx)
		},
	}, {
		kind: "RWMutex readers",
		hold: func(ctx context.Context, t *testing.T, c *locks.Client, name string) []*locks.Lease {
			rw := rwmutex(t, c, name, revokeOpts...)
			return []*locks.Lease{must(rw.RLock(ctx))(t), must(rw.RLock(ctx))(t)}
		},
		try: func(ctx context.Context, c *locks.Client, name string) error {
			rw, _ := c.RWMutex(name, revokeOpts...)
			l, err := rw.TryLock(ctx)
			return release(ctx, l, err)
		},
		wait: func(ctx context.Context, c *locks.Client, name string, opts ...locks.Option) (*locks.Lease, error) {
			rw, _ := c.RWMutex(name, append(revokeOpts, opts...)...)
			return rw.Lock(ctx)
		},
	}, {
		kind: "Semaphore",
		hold: func(ctx context.Context, t *testing.T, c *locks.Client, name string) []*locks.Lease {
			s := semaphore(t, c, name, 3, revokeOpts...)
			return []*locks.Lease{must(s.Acquire(ctx, 2))(t), must(s.Acquire(ctx, 1))(t)}
		},
		try: func(ctx context.Context, c *locks.Client, name string) error {
			s, _ := c.Semaphore(name, 3, revokeOpts...)
			l, err := s.TryAcquire(ctx, 1)
			return release(ctx, l, err)
		},
		wait: func(ctx context.Context, c *locks.Client, name string, opts ...locks.Option) (*locks.Lease, error) {
			s, _ := c.Semaphore(name, 3, append(revokeOpts, opts...)...)
			return s.Acquire(ctx, 3)
		},
	}}
}

// After ForceUnlock every revoked holder's Done closes at once, with
// ErrForced and ErrLockLost (the holders' TTL is a minute, so their next
// renewal is 20 s away: a close within the test's 5 s bound can only come
// from the revocation message; the latency is logged, not asserted, so
// that a loaded machine cannot fail the test); the name stays taken (a try fails) until the
// holders' Unlock, which returns the lease's error, confirms that they
// stopped; then the waiter gets the name at once (its waiter TTL of a
// minute leaves it a wait hint of 20 s: only the hand-over or wake-up of
// the confirming release reaches it within the test's bound).
func TestForceUnlockRevokesAtOnceAndWaitsForUnlock(t *testing.T) {
	env := revokeEnv{srv: redistest.Standalone(t)}
	for _, k := range revokeKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := timeout(t, 15*time.Second)
			name := "revoke-" + strings.ReplaceAll(k.kind, " ", "-")
			holder, listening := env.holderClient(t, false, revokeOpts...)
			holds := k.hold(ctx, t, holder, name)
			listening()
			waiter := inBackground(t, "the waiter", func() (*locks.Lease, error) { return k.wait(ctx, env.client(t, revokeOpts...), name) })
			operator := env.client(t)

			forced := time.Now()
			revoked, err := operator.ForceUnlock(ctx, name, locks.WithGrace(time.Minute))
			if err != nil || !revoked {
				t.Fatalf("ForceUnlock = %v, %v; want true", revoked, err)
			}
			for i, l := range holds {
				select {
				case <-l.Done():
					t.Logf("holder %d's Done closed %v after ForceUnlock began", i, time.Since(forced).Round(time.Microsecond))
				case <-time.After(time.Until(forced.Add(5 * time.Second))):
					t.Fatalf("holder %d's Done still open 5s after ForceUnlock began: the revocation did not reach it (its renewal is 20s away)", i)
				}
				if err := l.Err(); !errors.Is(err, locks.ErrForced) || !errors.Is(err, locks.ErrLockLost) || !strings.Contains(err.Error(), "forced unlock") {
					t.Fatalf("holder %d's Err = %v, want ErrForced and ErrLockLost", i, err)
				}
			}
			info, err := operator.Inspect(ctx, name)
			if err != nil || !info.Held || !(info.Revoked || len(info.Readers) > 0 && info.Readers[0].Revoked || len(info.Permits) > 0 && info.Permits[0].Revoked) {
				t.Fatalf("Inspect after the revocation = %+v, %v; want the name held, revoked", info, err)
			}
			if err := k.try(ctx, env.client(t), name); !errors.Is(err, locks.ErrNotAcquired) {
				t.Fatalf("a try while the revoked holders have not confirmed = %v, want ErrNotAcquired", err)
			}
			var maxToken int64
			for i, l := range holds {
				maxToken = max(maxToken, l.Token())
				if err := l.Unlock(ctx); !errors.Is(err, locks.ErrForced) {
					t.Fatalf("holder %d's Unlock = %v, want the lease's ErrForced", i, err)
				}
			}
			next := waiter()
			if next.Token() <= maxToken {
				t.Fatalf("the waiter's token %d is not above the revoked holders' %d", next.Token(), maxToken)
			}
			if err := next.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// On a healthy loopback server a revoked holder's Done closes within
// 100 ms of the ForceUnlock call. One slow sample can be the machine's
// scheduler, so each kind has three tries and passes with one under
// 100 ms; a holder that learned of the revocation by any other way (its
// renewal is 20 s away) would miss it every time.
func TestForceUnlockDoneWithin100ms(t *testing.T) {
	env := revokeEnv{srv: redistest.Standalone(t)}
	for _, k := range revokeKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := timeout(t, 60*time.Second)
			var tries []time.Duration
			for try := range 3 {
				name := fmt.Sprintf("revoke-fast-%s-%d", strings.ReplaceAll(k.kind, " ", "-"), try)
				holder, listening := env.holderClient(t, false, revokeOpts...)
				holds := k.hold(ctx, t, holder, name)
				listening()
				forced := time.Now()
				if revoked, err := env.client(t).ForceUnlock(ctx, name, locks.WithGrace(time.Minute)); err != nil || !revoked {
					t.Fatalf("ForceUnlock = %v, %v; want true", revoked, err)
				}
				var slowest time.Duration
				for i, l := range holds {
					select {
					case <-l.Done():
						slowest = max(slowest, time.Since(forced))
					case <-time.After(time.Until(forced.Add(5 * time.Second))):
						t.Fatalf("holder %d's Done still open 5s after ForceUnlock began", i)
					}
				}
				for _, l := range holds {
					_ = l.Unlock(ctx) // confirms: the lease's ErrForced
				}
				tries = append(tries, slowest.Round(time.Microsecond))
				if slowest <= 100*time.Millisecond {
					t.Logf("every holder's Done closed within %v of the ForceUnlock call (tries: %v)", slowest.Round(time.Microsecond), tries)
					return
				}
			}
			t.Errorf("the holders' Done closed %v after the ForceUnlock call in three tries, want within 100ms", tries)
		})
	}
}

// A holder that cannot be told (it drops the message and renews nothing)
// keeps the name for the grace period only: the waiter gets it after the
// grace, not before (its token, the server's time in µs, is at least the
// forced unlock's start plus the grace), and within a few seconds of it
// (with a waiter TTL of 3 s it looks again at least every second).
func TestForceUnlockGraceEndsAnUnconfirmedHold(t *testing.T) {
	env := revokeEnv{srv: redistest.Standalone(t)}
	const grace = 1500 * time.Millisecond
	for _, k := range revokeKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := timeout(t, 20*time.Second)
			name := "grace-" + strings.ReplaceAll(k.kind, " ", "-")
			holder, listening := env.holderClient(t, true, revokeOpts...)
			holds := k.hold(ctx, t, holder, name)
			listening()
			// The waiter's hint dates from before the revocation (the
			// holder's lease of a minute): it looks again within a third
			// of its waiter TTL, or when its Client's keeper finds the
			// holder gone.
			waiter := inBackground(t, "the waiter", func() (*locks.Lease, error) {
				return k.wait(ctx, env.client(t), name, locks.WithWaiterTTL(3*time.Second))
			})
			forced := time.Now()
			if revoked, err := env.client(t).ForceUnlock(ctx, name, locks.WithGrace(grace)); err != nil || !revoked {
				t.Fatalf("ForceUnlock = %v, %v; want true", revoked, err)
			}
			next := waiter()
			if floor := forced.Add(grace).UnixMicro(); next.Token() < floor {
				t.Fatalf("the waiter got the name at server time %d µs, %v before the grace ended", next.Token(), time.Duration(floor-next.Token())*time.Microsecond)
			}
			for i, l := range holds {
				if l.Err() != nil {
					t.Fatalf("the deaf holder %d's lease ended (%v): it was told after all", i, l.Err())
				}
				if err := l.Extend(ctx, 0); !errors.Is(err, locks.ErrLockLost) {
					t.Fatalf("the deaf holder %d's Extend = %v, want ErrLockLost", i, err)
				}
			}
			if err := next.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A renewal of a revoked hold (the holder missed the message) ends the
// lease with ErrForced: extend replies -2.
func TestForceUnlockRenewalOfARevokedHold(t *testing.T) {
	env := revokeEnv{srv: redistest.Standalone(t)}
	for _, k := range revokeKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := timeout(t, 15*time.Second)
			name := "renew-" + strings.ReplaceAll(k.kind, " ", "-")
			holder, listening := env.holderClient(t, true, revokeOpts...)
			holds := k.hold(ctx, t, holder, name)
			listening()
			if _, err := env.client(t).ForceUnlock(ctx, name, locks.WithGrace(time.Minute)); err != nil {
				t.Fatal(err)
			}
			for i, l := range holds {
				if err := l.Extend(ctx, 0); !errors.Is(err, locks.ErrForced) || !errors.Is(err, locks.ErrLockLost) {
					t.Fatalf("holder %d's Extend after the revocation = %v, want ErrForced and ErrLockLost", i, err)
				}
				if err := l.Unlock(ctx); !errors.Is(err, locks.ErrForced) {
					t.Fatalf("holder %d's Unlock = %v, want ErrForced", i, err)
				}
			}
			if err := k.try(ctx, env.client(t), name); err != nil {
				t.Fatalf("a try after every revoked holder confirmed = %v, want the name free", err)
			}
		})
	}
}

// WithGrace(0) removes the holds at once: a try succeeds right after, and
// the holders are told as with a grace.
func TestForceUnlockWithoutGrace(t *testing.T) {
	env := revokeEnv{srv: redistest.Standalone(t)}
	for _, k := range revokeKinds() {
		t.Run(k.kind, func(t *testing.T) {
			ctx := timeout(t, 15*time.Second)
			name := "nograce-" + strings.ReplaceAll(k.kind, " ", "-")
			holder, listening := env.holderClient(t, false, revokeOpts...)
			holds := k.hold(ctx, t, holder, name)
			listening()
			if revoked, err := env.client(t).ForceUnlock(ctx, name, locks.WithGrace(0)); err != nil || !revoked {
				t.Fatalf("ForceUnlock = %v, %v; want true", revoked, err)
			}
			if err := k.try(ctx, env.client(t), name); err != nil {
				t.Fatalf("a try right after ForceUnlock(WithGrace(0)) = %v, want the name free", err)
			}
			for i, l := range holds {
				<-l.Done()
				if err := l.Err(); !errors.Is(err, locks.ErrForced) {
					t.Fatalf("holder %d's Err = %v, want ErrForced", i, err)
				}
			}
		})
	}
}

// WithGrace refuses what it cannot mean, naming the bound.
func TestWithGraceBounds(t *testing.T) {
	c, done := newExampleClient()
	defer done()
	for _, d := range []time.Duration{-time.Millisecond, locks.MaxTTL + time.Millisecond} {
		_, err := c.ForceUnlock(context.Background(), "x", locks.WithGrace(d))
		if !errors.Is(err, locks.ErrInvalidArgument) || !strings.Contains(err.Error(), "MaxTTL") {
			t.Fatalf("WithGrace(%v): %v, want ErrInvalidArgument naming MaxTTL", d, err)
		}
	}
	if _, err := c.ForceUnlock(context.Background(), "x", nil); !errors.Is(err, locks.ErrInvalidArgument) {
		t.Fatalf("a nil ForceOption: %v, want ErrInvalidArgument", err)
	}
}

// A Client's held locks share one subscription on the server, its revoke
// channel, however many it holds (a subscription per held lock cost the
// server more than the lock itself): 100 held Mutexes, RWMutex read and
// write locks and Semaphore permits show one channel subscribed (PUBSUB
// CHANNELS, CLIENT LIST's sub=), and a ForceUnlock of one of them still
// ends exactly that lease at once: not the others, a lease of another
// lock held by the same owner token (WithOwner) included.
func TestHeldLocksShareOneRevokeSubscription(t *testing.T) {
	env := revokeEnv{srv: redistest.Standalone(t)}
	ctx := timeout(t, time.Minute)
	holder, listening := env.holderClient(t, false, revokeOpts...)
	operator := env.client(t)
	held := map[string]*locks.Lease{}
	for i := range 100 {
		var l *locks.Lease
		var err error
		name := fmt.Sprintf("many-%d", i)
		switch i % 4 {
		case 0: // every Mutex under one owner token
			l, err = mutex(t, holder, name, append(revokeOpts, locks.WithOwner("shared-owner"))...).TryLock(ctx)
		case 1:
			rw, _ := holder.RWMutex(name, revokeOpts...)
			l, err = rw.TryRLock(ctx)
		case 2:
			rw, _ := holder.RWMutex(name, revokeOpts...)
			l, err = rw.TryLock(ctx)
		case 3:
			s, _ := holder.Semaphore(name, 3, revokeOpts...)
			l, err = s.TryAcquire(ctx, 2)
		}
		if err != nil {
			t.Fatalf("taking %s: %v", name, err)
		}
		held[name] = l
	}
	listening()

	channels, err := env.srv.Do(ctx, "PUBSUB", "CHANNELS").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(channels) != 1 || !strings.HasPrefix(channels[0], "redlua:revoke:") {
		t.Fatalf("PUBSUB CHANNELS with 100 locks held = %q, want the holder's revoke channel alone", channels)
	}
	list, err := env.srv.Do(ctx, "CLIENT", "LIST").Text()
	if err != nil {
		t.Fatal(err)
	}
	subs := 0
	for _, field := range strings.Fields(list) {
		if n, ok := strings.CutPrefix(field, "sub="); ok {
			v, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("CLIENT LIST field %q: %v", field, err)
			}
			subs += v
		}
	}
	if subs != 1 {
		t.Fatalf("CLIENT LIST's sub= summed over the clients = %d with 100 locks held, want 1:\n%s", subs, list)
	}

	// Force one lock of each kind, one at a time: exactly its lease ends.
	ended := map[string]bool{}
	for _, name := range []string{"many-0", "many-1", "many-2", "many-3"} {
		forced := time.Now()
		if revoked, err := operator.ForceUnlock(ctx, name, locks.WithGrace(time.Minute)); err != nil || !revoked {
			t.Fatalf("ForceUnlock %s = %v, %v; want true", name, revoked, err)
		}
		select {
		case <-held[name].Done():
		case <-time.After(time.Until(forced.Add(5 * time.Second))):
			t.Fatalf("%s's Done still open 5s after ForceUnlock began: the revocation did not reach it (its renewal is 20s away)", name)
		}
		if err := held[name].Err(); !errors.Is(err, locks.ErrForced) {
			t.Fatalf("%s's Err = %v, want ErrForced", name, err)
		}
		ended[name] = true
		// One message carried the revocation: the other leases would have
		// ended with it.
		for other, l := range held {
			if !ended[other] && l.Err() != nil {
				t.Fatalf("ForceUnlock of %s ended the lease of %s: %v", name, other, l.Err())
			}
		}
	}
	for name, l := range held {
		err := l.Unlock(ctx)
		if ended[name] != errors.Is(err, locks.ErrForced) || !ended[name] && err != nil {
			t.Fatalf("Unlock of %s = %v (forced: %v)", name, err, ended[name])
		}
	}
}
