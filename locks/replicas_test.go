package locks_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
)

// replicaKind is one acquiring call of one lock kind, and how another
// Client that does not wait for replicas shows the names are free again.
type replicaKind struct {
	name    string
	acquire func(ctx context.Context, c *locks.Client) (func(context.Context) error, error)
	free    func(ctx context.Context, c *locks.Client) error
}

func replicaKinds(t *testing.T) []replicaKind {
	sameSlot := sameSlotNames(t, "rep-multi")
	mutexFree := func(names ...string) func(ctx context.Context, c *locks.Client) error {
		return func(ctx context.Context, c *locks.Client) error {
			var errs []error
			for _, n := range names {
				m, err := c.Mutex(n)
				if err == nil {
					var l *locks.Lease
					if l, err = m.TryLock(ctx); err == nil {
						err = l.Unlock(ctx)
					}
				}
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		}
	}
	rwFree := func(ctx context.Context, c *locks.Client) error {
		rw, err := c.RWMutex("rep-rw")
		if err != nil {
			return err
		}
		l, err := rw.TryLock(ctx) // a writer: refused while a reader or writer holds it
		if err != nil {
			return err
		}
		return l.Unlock(ctx)
	}
	multi := func(names []string, try bool) func(ctx context.Context, c *locks.Client) (func(context.Context) error, error) {
		return func(ctx context.Context, c *locks.Client) (func(context.Context) error, error) {
			ml, err := c.MultiLock(names)
			if err != nil {
				return nil, err
			}
			var l *locks.MultiLease
			if try {
				l, err = ml.TryLock(ctx)
			} else {
				l, err = ml.Lock(ctx)
			}
			if err != nil {
				return nil, err
			}
			return l.Unlock, nil
		}
	}
	mutexNamed := func(c *locks.Client) (*locks.Mutex, error) { return c.Mutex("rep-mutex") }
	rwNamed := func(c *locks.Client) (*locks.RWMutex, error) { return c.RWMutex("rep-rw") }
	return []replicaKind{
		{"Mutex.Lock", leaseCall(mutexNamed, (*locks.Mutex).Lock), mutexFree("rep-mutex")},
		{"Mutex.TryLock", leaseCall(mutexNamed, (*locks.Mutex).TryLock), mutexFree("rep-mutex")},
		{"RWMutex.Lock", leaseCall(rwNamed, (*locks.RWMutex).Lock), rwFree},
		{"RWMutex.RLock", leaseCall(rwNamed, (*locks.RWMutex).RLock), rwFree},
		{"Semaphore.Acquire", leaseCall(func(c *locks.Client) (*locks.Semaphore, error) { return c.Semaphore("rep-sem", 1) },
			func(sem *locks.Semaphore, ctx context.Context) (*locks.Lease, error) { return sem.Acquire(ctx, 1) }),
			func(ctx context.Context, c *locks.Client) error {
				sem, err := c.Semaphore("rep-sem", 1)
				if err != nil {
					return err
				}
				l, err := sem.TryAcquire(ctx, 1)
				if err != nil {
					return err
				}
				return l.Unlock(ctx)
			}},
		{"MultiLock.Lock, two slots", multi([]string{"rep-a", "rep-b"}, false), mutexFree("rep-a", "rep-b")},
		{"MultiLock.Lock, one slot", multi(sameSlot, false), mutexFree(sameSlot...)},
		{"MultiLock.TryLock", multi([]string{"rep-a", "rep-b"}, true), mutexFree("rep-a", "rep-b")},
	}
}

// leaseCall is a replicaKind's acquire: make the lock with open, take it
// with take, and return its Unlock.
func leaseCall[L any](open func(*locks.Client) (L, error), take func(L, context.Context) (*locks.Lease, error)) func(context.Context, *locks.Client) (func(context.Context) error, error) {
	return func(ctx context.Context, c *locks.Client) (func(context.Context) error, error) {
		lock, err := open(c)
		if err != nil {
			return nil, err
		}
		l, err := take(lock, ctx)
		if err != nil {
			return nil, err
		}
		return l.Unlock, nil
	}
}

// WithReplicas holds for every kind of lock: without a replica to confirm
// it, each acquisition fails with ErrNotReplicated and is undone (another
// Client can take the names at once); with one, each succeeds.
func TestReplicasEveryKind(t *testing.T) {
	ctx := timeout(t, time.Minute)
	open := func(t *testing.T, addr string, opts ...locks.Option) *locks.Client {
		rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		c, err := locks.New(rc, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); rc.Close() })
		return c
	}
	lease := locks.WithTTL(time.Minute)

	t.Run("no replica", func(t *testing.T) {
		srv := redistest.Standalone(t)
		c := open(t, srv.Addr, lease, locks.WithReplicas(1, 20*time.Millisecond))
		other := open(t, srv.Addr, lease)
		for _, k := range replicaKinds(t) {
			t.Run(k.name, func(t *testing.T) {
				unlock, err := k.acquire(ctx, c)
				if !errors.Is(err, locks.ErrNotReplicated) {
					if unlock != nil {
						unlock(ctx)
					}
					t.Fatalf("with no replica to confirm it: %v, want ErrNotReplicated", err)
				}
				if err := k.free(ctx, other); err != nil {
					t.Fatalf("the refused acquisition was not undone: %v", err)
				}
			})
		}
	})

	t.Run("one replica", func(t *testing.T) {
		primary, _ := redistest.PrimaryReplica(t)
		c := open(t, primary.Addr, lease, locks.WithReplicas(1, 5*time.Second))
		other := open(t, primary.Addr, lease)
		for _, k := range replicaKinds(t) {
			t.Run(k.name, func(t *testing.T) {
				unlock, err := k.acquire(ctx, c)
				if err != nil {
					t.Fatalf("with a replica: %v", err)
				}
				if err := k.free(ctx, other); err == nil {
					t.Fatal("another Client took the names while they were held")
				}
				if err := unlock(ctx); err != nil {
					t.Fatal(err)
				}
				if err := k.free(ctx, other); err != nil {
					t.Fatalf("after Unlock: %v", err)
				}
			})
		}
	})
}

// A release hands the lock (or a semaphore's permit) to a queued waiter in
// its own script, which waits for no replica. A waiter WithReplicas does
// not take such a grant from the message: it claims it with an attempt of
// its own, which waits for the replica. With replication held up, that
// claim is not confirmed, and the waiter's Lock or Acquire fails with
// ErrNotReplicated instead of returning a lease a failover would lose.
func TestReplicasHandedOverLeaseWaitsForTheReplica(t *testing.T) {
	pair := redistest.NewLaggingPair(t)
	ctx := timeout(t, time.Minute)
	f := goRedisFixture(t, pair.Primary.Addr, time.Sleep, pair.Primary)
	for _, kind := range []struct {
		name, script string
		take         func(ctx context.Context, c *locks.Client) (*locks.Lease, error)
	}{
		{"mutex", "mutex.acquire", func(ctx context.Context, c *locks.Client) (*locks.Lease, error) {
			return mutex(t, c, "handed-mutex").Lock(ctx)
		}},
		{"fair mutex", "mutex.acquire", func(ctx context.Context, c *locks.Client) (*locks.Lease, error) {
			return mutex(t, c, "handed-fair", locks.WithFair(time.Minute)).Lock(ctx)
		}},
		{"semaphore", "sem.acquire", func(ctx context.Context, c *locks.Client) (*locks.Lease, error) {
			return semaphore(t, c, "handed-sem", 1).Acquire(ctx, 1)
		}},
	} {
		t.Run(kind.name, func(t *testing.T) {
			holder, err := kind.take(ctx, f.client(t, locks.WithTTL(time.Minute)))
			if err != nil {
				t.Fatal(err)
			}
			// The waiter's runs are counted by replicaCounter, which keeps
			// the Runner's WAIT (scriptCounter would hide it).
			runs := new(atomic.Int64)
			waiter := f.wrap(t, func(b locks.Backend) locks.Backend { return replicaCounter{b.(*evalsha.Runner), kind.script, runs} },
				locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute), locks.WithReplicas(1, 300*time.Millisecond))
			done := make(chan error, 1)
			go func() {
				l, err := kind.take(ctx, waiter)
				if err == nil {
					err = fmt.Errorf("got a lease (token %d) from a grant no replica confirmed", l.Token())
				}
				done <- err
			}()
			poll(t, "the waiter queues", 10*time.Second, func() {}, func() bool { return runs.Load() >= 2 })
			pair.Link.Hold()
			defer pair.Link.Release()
			if err := holder.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, locks.ErrNotReplicated) {
				t.Fatalf("the waiter handed the lock while replication is held up: %v, want ErrNotReplicated", err)
			}
		})
	}
}

// replicaCounter counts a Runner's runs of one script and keeps its WAIT.
type replicaCounter struct {
	*evalsha.Runner
	script string
	runs   *atomic.Int64
}

func (r replicaCounter) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if s.Name == r.script {
		r.runs.Add(1)
	}
	return r.Runner.Run(ctx, s, keys, args...)
}

func (r replicaCounter) RunReplicated(ctx context.Context, s *registry.Script, replicas int, timeout time.Duration, keys []string, args ...any) (*redis.Cmd, int, error) {
	if s.Name == r.script {
		r.runs.Add(1)
	}
	return r.Runner.RunReplicated(ctx, s, replicas, timeout, keys, args...)
}
