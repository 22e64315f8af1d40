package locks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
)

// Calls that share an owner (WithOwner without WithReentrant, say a
// process's identity) are separate holders: one of them at a time holds
// the lock. The queue keeps one entry per owner, so the server must tell
// their calls apart by attempt: a grant goes to the call whose attempt
// queued, and the undo of a call that gave up releases only what that call
// took. Version 3 of the scripts granted to the owner: every waiting call
// of that owner took the grant, and a late undo of one call released the
// grant another call held.

// attemptLog records the acquire attempts that asked to queue and ran (their attempt ids)
// and can hold back the undo of a given-up call, as a network that drops
// it would.
type attemptLog struct {
	locks.Backend
	mu        sync.Mutex
	queued    map[string]bool // attempt ids of acquisitions that asked to queue
	holdUndo  atomic.Bool     // fail every undo (mutex.undo)
	undone    atomic.Int64    // undos that got through
	undoFails atomic.Int64    // undos failed while held back
}

func (l *attemptLog) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	switch s.Name {
	case "mutex.acquire":
		// Recorded once the server ran it, not when it is sent: a test that
		// waits for a call to have queued and then releases the lock must
		// not overtake the queueing (under load, a goroutine can stop
		// between the two for a long time; the release then handed the lock
		// to the given-up call's stale entry, whose undo the test held back).
		cmd := l.Backend.Run(ctx, s, keys, args...)
		// ARGV[2] is "g:<attempt>", and the attempt id ends with the
		// call's waiter TTL and flags: "<id>/<waiter_ttl_ms>/<flags>".
		attempt := strings.TrimPrefix(fmt.Sprint(args[1]), "g:")
		if parts := strings.Split(attempt, "/"); len(parts) == 3 && parts[1] != "0" && cmd.Err() == nil {
			l.mu.Lock()
			if l.queued == nil {
				l.queued = map[string]bool{}
			}
			l.queued[attempt] = true
			l.mu.Unlock()
		}
		return cmd
	case "mutex.undo":
		if l.holdUndo.Load() {
			l.undoFails.Add(1)
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(errors.New("connection reset (held back by the test)"))
			return cmd
		}
		cmd := l.Backend.Run(ctx, s, keys, args...)
		if cmd.Err() == nil {
			l.undone.Add(1)
		}
		return cmd
	}
	return l.Backend.Run(ctx, s, keys, args...)
}

func (l *attemptLog) queuedAttempts() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queued)
}

// settle waits for cond as waitFor does, moving a virtual clock along so
// that timers on it fire.
func settle(t *testing.T, f fixture, what string, cond func() bool) {
	t.Helper()
	var step func()
	if f.virtual {
		step = func() { f.elapse(10 * time.Millisecond) }
	}
	poll(t, what, 20*time.Second, step, cond)
}

// heldAgainstOneOwner sets the scene: another owner holds lock name (TTL a
// minute, on Client other), and m is the Mutex of owner worker-7 on a
// Client whose script calls log records.
func heldAgainstOneOwner(ctx context.Context, t *testing.T, f fixture, name string) (log *attemptLog, m *locks.Mutex, other *locks.Client, holder *locks.Lease) {
	t.Helper()
	opts := []locks.Option{locks.WithTTL(time.Minute)}
	log = &attemptLog{}
	c := f.wrap(t, func(b locks.Backend) locks.Backend { log.Backend = b; return log }, opts...)
	other = f.client(t, opts...)
	holder, err := mutex(t, other, name).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return log, mutex(t, c, name, locks.WithOwner("worker-7")), other, holder
}

// Two waiting calls of one owner: the release that frees the lock hands it
// to one of them; the other gets it only after that one unlocks.
func TestSuiteSameOwnerCallsHoldOneAtATime(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 60*time.Second)
		log, m, _, holder := heldAgainstOneOwner(ctx, t, f, "shared-owner")
		var holding, overlaps, done atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := m.Lock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if holding.Add(1) > 1 {
					overlaps.Add(1)
				}
				// Hold long enough that the other call, had it also taken the
				// grant, would be seen inside: it got the same message. (The
				// test goroutine moves a virtual clock meanwhile.)
				time.Sleep(100 * time.Millisecond)
				holding.Add(-1)
				if err := l.Unlock(ctx); err != nil {
					t.Error(err)
				}
				done.Add(1)
			}()
		}
		// Both calls are queued (each ran an attempt that asked to queue,
		// after subscribing) before the holder lets go.
		settle(t, f, "both calls queued", func() bool { return log.queuedAttempts() == 2 })
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		settle(t, f, "both calls done", func() bool { return done.Load() == 2 || ctx.Err() != nil })
		wg.Wait()
		if n := overlaps.Load(); n != 0 {
			t.Fatalf("two calls of owner worker-7 held the lock at once (%d overlaps): one grant went to both", n)
		}
	})
}

// A call that gave up while queued, and whose undo reaches the server only
// after the lock was handed to another call of the same owner, must not
// release that call's hold.
func TestSuiteLateUndoSparesAnotherCallOfTheOwner(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 60*time.Second)
		const name = "late-undo"
		log, m, other, holder := heldAgainstOneOwner(ctx, t, f, name)

		// The first call queues, then gives up; its undo cannot get through.
		log.holdUndo.Store(true)
		first, cancelFirst := context.WithCancel(ctx)
		gaveUp := make(chan error, 1)
		go func() { _, err := m.Lock(first); gaveUp <- err }()
		settle(t, f, "the first call queued", func() bool { return log.queuedAttempts() == 1 })
		cancelFirst()
		if err := <-gaveUp; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled call = %v, want context.Canceled", err)
		}
		settle(t, f, "the first undo failed", func() bool { return log.undoFails.Load() >= 1 })

		// A second call of the same owner queues and is handed the lock.
		got := make(chan *locks.Lease, 1)
		go func() {
			l, err := m.Lock(ctx)
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
		settle(t, f, "the second call queued", func() bool { return log.queuedAttempts() == 2 })
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		var lease *locks.Lease
		settle(t, f, "the hand-over", func() bool {
			select {
			case lease = <-got:
				return true
			default:
				return false
			}
		})
		if lease == nil {
			t.Fatal("the second call failed")
		}

		// Now the first call's undo gets through.
		log.holdUndo.Store(false)
		settle(t, f, "the late undo", func() bool { return log.undone.Load() >= 1 })

		if _, err := mutex(t, other, name).TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("another owner's TryLock after the late undo = %v, want ErrNotAcquired: the undo released the hold of the second call, whose lease still says held (Err %v)", err, lease.Err())
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("the second call's Unlock = %v, want nil: it still held the lock", err)
		}
	})
}

// A call whose lease ran out, after which another call of the same owner
// took the lock, neither renews nor releases that call's hold.
func TestSuiteStaleCallOfTheOwnerLeavesTheNewHold(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 30*time.Second)
		c := f.client(t)
		const name = "stale-call"
		short := mutex(t, c, name, locks.WithOwner("worker-7"), locks.WithTTL(200*time.Millisecond))
		long := mutex(t, c, name, locks.WithOwner("worker-7"), locks.WithTTL(time.Minute))
		stale, err := short.TryLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.elapse(300 * time.Millisecond) // the first lease runs out on the server
		fresh, err := long.TryLock(ctx)
		if err != nil {
			t.Fatalf("a second call after the first lease ran out = %v, want the lock", err)
		}
		if err := stale.Extend(ctx, time.Minute); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("the stale call's Extend = %v, want ErrLockLost: the hold is the other call's", err)
		}
		if err := stale.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
			t.Fatalf("the stale call's Unlock = %v, want ErrLockLost", err)
		}
		if _, err := mutex(t, f.client(t), name).TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
			t.Fatalf("another owner's TryLock after the stale Unlock = %v, want ErrNotAcquired: the fresh call still holds it", err)
		}
		if err := fresh.Unlock(ctx); err != nil {
			t.Fatalf("the fresh call's Unlock = %v", err)
		}
	})
}
