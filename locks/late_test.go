package locks_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/keyslot"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
)

// errReplyLost stands for a timeout: the caller cannot tell whether its
// script ran.
var errReplyLost = errors.New("i/o timeout (injected: the reply was lost)")

// lateBackend makes the next acquire script's outcome unknown to its caller:
// either the script runs and its reply is lost, or the script is held back
// (as in a frozen server's buffers) and runs only when the test says so,
// after the caller gave up and undid it.
type lateBackend struct {
	locks.Backend
	holdBack bool        // false: run now, lose the reply; true: run at runLate
	down     atomic.Bool // every call fails unsent, as to a frozen server

	mu     sync.Mutex
	armed  bool
	stash  func() error // the held-back call
	caught string       // the script it caught
}

var acquireScripts = map[string]bool{
	"mutex.acquire": true, "rw.rlock": true, "rw.lock": true, "sem.acquire": true, "sem.take": true, "multi.acquire": true,
}

func (b *lateBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	b.mu.Lock()
	catch := b.armed && acquireScripts[s.Name]
	if catch {
		b.armed, b.caught = false, s.ID()
	}
	b.mu.Unlock()
	if !catch && b.down.Load() {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(errReplyLost)
		return cmd
	}
	if !catch {
		return b.Backend.Run(ctx, s, keys, args...)
	}
	if b.holdBack {
		keys, args = append([]string(nil), keys...), append([]any(nil), args...)
		b.mu.Lock()
		b.stash = func() error {
			return b.Backend.Run(context.Background(), s, keys, args...).Err()
		}
		b.mu.Unlock()
	} else {
		_ = b.Backend.Run(ctx, s, keys, args...).Err()
	}
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(errReplyLost)
	return cmd
}

func (b *lateBackend) arm() {
	b.mu.Lock()
	b.armed = true
	b.mu.Unlock()
}

// runLate runs the held-back acquisition, as a server that resumes would.
func (b *lateBackend) runLate(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	stash := b.stash
	b.mu.Unlock()
	if stash == nil {
		t.Fatal("no acquisition was held back")
	}
	if err := stash(); err != nil && !errors.Is(err, redis.Nil) {
		t.Logf("the late acquisition replied %v", err)
	}
}

// sameSlotNames returns two lock names whose keys share a cluster slot, so
// that a MultiLock takes both in one multi.acquire call.
func sameSlotNames(t *testing.T, prefix string) []string {
	t.Helper()
	first := prefix + "-0"
	want := keyslot.Of("{" + first + "}")
	for i := 1; i < 200000; i++ {
		n := fmt.Sprintf("%s-%d", prefix, i)
		if keyslot.Of("{"+n+"}") == want {
			return []string{first, n}
		}
	}
	t.Fatal("no two names share a slot")
	return nil
}

// lateKind is one lock kind's acquiring call, and how another process checks
// that nothing of that call is left.
type lateKind struct {
	name string
	// acquire makes one acquiring call with the client c; it returns a
	// release for a call that succeeded.
	acquire func(ctx context.Context, t *testing.T, c *locks.Client, lock string) (func(), error)
	// free says whether another client can take what the call would have held.
	free func(ctx context.Context, t *testing.T, c *locks.Client, lock string) bool
}

func lateKinds() []lateKind {
	const ttl = 30 * time.Second // long: only the undo may end a ghost hold within the test
	mutexFree := func(ctx context.Context, t *testing.T, c *locks.Client, lock string) bool {
		l, err := mutex(t, c, lock, locks.WithTTL(ttl)).TryLock(ctx)
		if err != nil {
			return false
		}
		_ = l.Unlock(ctx)
		return true
	}
	rw := func(t *testing.T, c *locks.Client, lock string) *locks.RWMutex {
		t.Helper()
		m, err := c.RWMutex(lock, locks.WithTTL(ttl))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	rwFree := func(ctx context.Context, t *testing.T, c *locks.Client, lock string) bool {
		l, err := rw(t, c, lock).TryLock(ctx)
		if err != nil {
			return false
		}
		_ = l.Unlock(ctx)
		return true
	}
	sem := func(t *testing.T, c *locks.Client, lock string) *locks.Semaphore {
		t.Helper()
		s, err := c.Semaphore(lock, 1, locks.WithTTL(ttl))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	lease := func(l *locks.Lease, err error) (func(), error) {
		if err != nil {
			return nil, err
		}
		return func() { _ = l.Unlock(context.Background()) }, nil
	}
	multi := func(same bool) lateKind {
		names := func(t *testing.T, lock string) []string {
			if same {
				return sameSlotNames(t, lock)
			}
			return []string{lock + "-a", lock + "-b"}
		}
		return lateKind{
			acquire: func(ctx context.Context, t *testing.T, c *locks.Client, lock string) (func(), error) {
				ml, err := c.MultiLock(names(t, lock), locks.WithTTL(ttl))
				if err != nil {
					t.Fatal(err)
				}
				l, err := ml.Lock(ctx)
				if err != nil {
					return nil, err
				}
				return func() { _ = l.Unlock(context.Background()) }, nil
			},
			free: func(ctx context.Context, t *testing.T, c *locks.Client, lock string) bool {
				for _, n := range names(t, lock) {
					if !mutexFree(ctx, t, c, n) {
						return false
					}
				}
				return true
			},
		}
	}
	kinds := []lateKind{
		{name: "Mutex.Lock",
			acquire: func(ctx context.Context, t *testing.T, c *locks.Client, lock string) (func(), error) {
				return lease(mutex(t, c, lock, locks.WithTTL(ttl)).Lock(ctx))
			},
			free: mutexFree},
		{name: "RWMutex.RLock",
			acquire: func(ctx context.Context, t *testing.T, c *locks.Client, lock string) (func(), error) {
				return lease(rw(t, c, lock).RLock(ctx))
			},
			free: rwFree},
		{name: "RWMutex.Lock",
			acquire: func(ctx context.Context, t *testing.T, c *locks.Client, lock string) (func(), error) {
				return lease(rw(t, c, lock).Lock(ctx))
			},
			free: rwFree},
		{name: "Semaphore.Acquire",
			acquire: func(ctx context.Context, t *testing.T, c *locks.Client, lock string) (func(), error) {
				return lease(sem(t, c, lock).Acquire(ctx, 1))
			},
			free: func(ctx context.Context, t *testing.T, c *locks.Client, lock string) bool {
				l, err := sem(t, c, lock).TryAcquire(ctx, 1)
				if err != nil {
					return false
				}
				_ = l.Unlock(ctx)
				return true
			}},
	}
	one, two := multi(false), multi(true)
	one.name, two.name = "MultiLock.Lock/two-slots", "MultiLock.Lock/one-slot"
	return append(kinds, one, two)
}

// An acquiring call that ends in an ambiguous error (its reply was lost, as
// on a timeout) leaves nothing behind, whether its script ran before the
// caller gave up or reaches the server only afterwards (a frozen server's
// buffers): every lock kind undoes it, and the server refuses it when it
// comes late. Otherwise the name stays held by no one for a whole lease.
//
// Modes: reply-lost (the script ran, the undo follows at once), runs-late
// (the script runs after the undo), unreachable (the undo cannot get
// through either; the script runs once the server is back, and the undo,
// retried in the background, must still follow it).
func TestSuiteAmbiguousAcquisitionLeavesNoHold(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 60*time.Second)
		for _, k := range lateKinds() {
			for _, mode := range []string{"reply-lost", "runs-late", "unreachable"} {
				holdBack := mode != "reply-lost"
				t.Run(k.name+"/"+mode, func(t *testing.T) {
					lb := &lateBackend{holdBack: holdBack}
					c := f.wrap(t, func(b locks.Backend) locks.Backend { lb.Backend = b; return lb })
					other := f.client(t)
					lock := "late-" + mode + "-" + k.name
					lb.arm()
					lb.down.Store(mode == "unreachable")
					release, err := k.acquire(ctx, t, c, lock)
					if err == nil {
						release()
						t.Fatalf("the acquiring call succeeded although its reply was lost (caught %q)", lb.caught)
					}
					if !errors.Is(err, errReplyLost) {
						t.Fatalf("the acquiring call = %v, want the injected timeout wrapped", err)
					}
					if holdBack {
						lb.runLate(t)
					}
					if mode == "unreachable" {
						// The server is back, with the late attempt done first.
						lb.down.Store(false)
						poll(t, "the lock free again after the retried undo", 10*time.Second, nil, func() bool { return k.free(ctx, t, other, lock) })
						return
					}
					if !k.free(ctx, t, other, lock) {
						t.Fatalf("after %s gave up on an ambiguous error (%s, %s), another client cannot take the lock: a ghost hold nobody will release", k.name, lb.caught, mode)
					}
				})
			}
		}
	})
}

// A reentrant RWMutex owner's read holds cannot be told apart, so the undo
// of its RLock that gave up drops none of them; it still records the
// attempt, which therefore takes nothing when it arrives late: once the
// owner releases its real read hold, the lock is free.
func TestSuiteReentrantReaderLateAttemptTakesNothing(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 30*time.Second)
		const ttl = 30 * time.Second
		lb := &lateBackend{holdBack: true}
		c := f.wrap(t, func(b locks.Backend) locks.Backend { lb.Backend = b; return lb })
		rw, err := c.RWMutex("late-reentrant-reader", locks.WithTTL(ttl), locks.WithReentrant())
		if err != nil {
			t.Fatal(err)
		}
		first, err := rw.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lb.arm()
		if l, err := rw.RLock(ctx); !errors.Is(err, errReplyLost) {
			if l != nil {
				_ = l.Unlock(ctx)
			}
			t.Fatalf("the second RLock = %v, want the injected timeout", err)
		}
		// The first read hold is still there: the undo dropped nothing.
		if err := first.Err(); err != nil {
			t.Fatalf("the owner's first read lease after the undo: Err = %v", err)
		}
		other := f.client(t)
		otherRW, err := other.RWMutex("late-reentrant-reader", locks.WithTTL(ttl))
		if err != nil {
			t.Fatal(err)
		}
		if l, err := otherRW.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			if l != nil {
				_ = l.Unlock(ctx)
			}
			t.Fatalf("another client's write TryLock while the owner reads = %v, want ErrNotAcquired", err)
		}
		lb.runLate(t)
		if err := first.Unlock(ctx); err != nil {
			t.Fatalf("the owner's Unlock of its real read hold = %v", err)
		}
		l, err := otherRW.TryLock(ctx)
		if err != nil {
			t.Fatalf("after the owner's only real read hold was released, another client's write TryLock = %v: the late RLock took a hold", err)
		}
		_ = l.Unlock(ctx)
	})
}
