package locks_test

import (
	"context"
	"errors"
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
		ml, err := c.MultiLock([]string{"a", "b", "c", "a"})
		if err != nil {
			t.Fatal(err)
		}
		lease, err := ml.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(lease.Leases) != 3 {
			t.Fatalf("%d leases, want 3 (duplicates ignored)", len(lease.Leases))
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
