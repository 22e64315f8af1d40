package locks_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
)

// The watchdog reports the loss when the server stops answering (paused,
// as in a partition or a stuck server) or dies, instead of letting the
// holder believe it still owns the lock.
func TestWatchdogReportsLossWhenServerPausedOrKilled(t *testing.T) {
	for _, how := range []string{"paused", "killed"} {
		t.Run(how, func(t *testing.T) {
			srv := redistest.Standalone(t)
			rc := srv.Client(func(o *redis.Options) {
				o.MaxRetries = -1
				o.ReadTimeout = 50 * time.Millisecond
				o.DialTimeout = 50 * time.Millisecond
			})
			var lost []locks.Event
			done := make(chan struct{}, 1)
			c, err := locks.New(rc, locks.WithObserver(func(e locks.Event) {
				if e.Kind == locks.EventLost {
					lost = append(lost, e)
					done <- struct{}{}
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const ttl = 300 * time.Millisecond
			m, _ := c.Mutex("guarded", locks.WithTTL(ttl), locks.WithWatchdog(0))
			ctx := context.Background()
			l, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			work, stop := l.Context(ctx)
			defer stop()
			if how == "paused" {
				srv.Pause()
				defer srv.Resume()
			} else {
				srv.Kill()
			}
			select {
			case <-l.Done():
			case <-time.After(5 * ttl):
				t.Fatal("the holder was not told that its lease ended")
			}
			if !errors.Is(l.Err(), locks.ErrLockLost) {
				t.Fatalf("Err = %v, want ErrLockLost", l.Err())
			}
			<-work.Done()
			if cause := context.Cause(work); !errors.Is(cause, locks.ErrLockLost) {
				t.Fatalf("the lease's context ended with %v, want ErrLockLost as cause", cause)
			}
			if !strings.Contains(l.Err().Error(), "guarded") {
				t.Errorf("the error does not name the lock: %v", l.Err())
			}
			<-done
			if c.Stats().Lost != 1 || len(lost) != 1 {
				t.Errorf("stats %+v, events %v: want exactly one lost lease", c.Stats(), lost)
			}
		})
	}
}

// A waiter that died while queued holds up a fair queue for at most its
// waiter lease, not for the lock's whole TTL.
func TestFairDeadWaiterDelaysAtMostItsWaiterLease(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	const waiterTTL = 300 * time.Millisecond
	c, err := locks.New(srv.Client(), locks.WithFair(waiterTTL), locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	holder, err := mustMutex(t, c, "q").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A waiter queues, then its process dies: it never refreshes, and never
	// leaves the queue.
	dead, cancelDead := context.WithCancel(ctx)
	defer cancelDead()
	deadBackend := &frozenBackend{Backend: mustRunner(t, srv)}
	deadClient, _ := locks.NewWithBackend(deadBackend, locks.WithFair(waiterTTL), locks.WithTTL(time.Minute))
	go mustMutex(t, deadClient, "q").Lock(dead)
	// Dead means after the attempt that follows its subscription: until
	// then it is alive, and on a busy machine that attempt could come after
	// the release below and claim the grant (holding the lock for its
	// minute-long TTL), which is not the case this test is about.
	waitFor(t, func() bool {
		info, _ := c.Inspect(ctx, "q")
		return deadBackend.frozen.Load() && info.Waiters == 1
	})

	live := mustMutex(t, c, "q")
	got := make(chan error, 1)
	go func() {
		l, err := live.Lock(ctx)
		if err == nil {
			l.Unlock(ctx)
		}
		got <- err // buffered: a test that already failed does not wait for it
	}()
	waitFor(t, func() bool { info, _ := c.Inspect(ctx, "q"); return info.Waiters == 2 })
	holder.Unlock(ctx)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the live waiter's Lock: %v", err)
		}
	case <-time.After(20 * waiterTTL):
		t.Fatal("the live waiter is stuck behind the dead one")
	}
}

// frozenBackend lets a waiter queue once and then drops all its traffic, as
// a crashed process would: it dies right after the first attempt that
// follows its subscription (the one that queues).
type frozenBackend struct {
	locks.Backend
	subscribed, frozen atomic.Bool
}

func (f *frozenBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if f.frozen.Load() {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(errors.New("the process is dead"))
		return cmd
	}
	cmd := f.Backend.Run(ctx, s, keys, args...)
	if f.subscribed.Load() {
		f.frozen.Store(true)
	}
	return cmd
}

func (f *frozenBackend) Subscribe(ctx context.Context, ch string, deliver func(string)) (func(), error) {
	unsubscribe, err := f.Backend.Subscribe(ctx, ch, deliver)
	f.subscribed.Store(true)
	return unsubscribe, err
}

func TestBadInput(t *testing.T) {
	srv := redistest.Standalone(t)
	if _, err := locks.NewWithBackend(nil); err == nil {
		t.Error("nil backend accepted")
	}
	if _, err := locks.New(nil); err == nil {
		t.Error("nil client accepted")
	}
	c, err := locks.New(srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name string
		opts []locks.Option
		want string
	}{
		{"", nil, "empty lock name"},
		{"{x}", nil, "contains '{'"},
		{"a", []locks.Option{locks.WithTTL(0)}, "WithTTL(0s): the TTL must be at least 10ms"},
		{"a", []locks.Option{locks.WithTTL(2 * time.Millisecond)}, "at least 10ms"},
		{"a", []locks.Option{locks.WithWatchdog(1.5)}, "WithWatchdog(1.5): the fraction must be above 0 and below 1"},
		{"a", []locks.Option{locks.WithWatchdog(-1)}, "WithWatchdog(-1)"},
		{"a", []locks.Option{locks.WithTTL(time.Second), locks.WithWatchdog(1e-9)}, "would renew every"},
		{"a", []locks.Option{locks.WithFair(-time.Second)}, "WithFair(-1s)"},
		{"a", []locks.Option{locks.WithOwner("")}, "owner token is empty"},
		{"a", []locks.Option{locks.WithOwner("worker\t7")}, `WithOwner("worker\t7"): the owner token contains a tab`},
		{"a", []locks.Option{nil}, "option 1 is nil"},
		{"a", []locks.Option{locks.WithReaderPreference()}, "WithReaderPreference does not apply to a Mutex"},
		{"a", []locks.Option{locks.WithFair(time.Microsecond)}, "waiter TTL"},
	} {
		if _, err := c.Mutex(tc.name, tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Mutex(%q) = %v, want an error about %q", tc.name, err, tc.want)
		}
	}
	if _, err := locks.New(srv.Client(), locks.WithTTL(-time.Second)); err == nil {
		t.Error("a negative default TTL was accepted")
	}
}

func mustMutex(t *testing.T, c *locks.Client, name string, opts ...locks.Option) *locks.Mutex {
	t.Helper()
	m, err := c.Mutex(name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustRunner(t *testing.T, srv *redistest.Server) locks.Backend {
	t.Helper()
	r, err := evalsha.New(srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
