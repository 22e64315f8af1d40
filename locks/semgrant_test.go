package locks_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
)

// A release hands the freed permit to the next queued Acquire inside the
// release script (sem.release@5): the waiters, each with its own Client as
// separate processes have, run sem.acquire once to queue and once more
// after subscribing, and not again when their turn comes (waking every
// waiter on every release would cost 8+7+...+1 = 36 runs after queueing;
// waking the next waiter only, which then took the permit itself, 8).
// Their fencing tokens grow from one holder to the next.
func TestSuiteSemaphoreHandsPermitsOver(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 30*time.Second)
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}
		holder, err := semaphore(t, f.client(t, opts...), "handed", 1).Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		const waiters = 8
		runs := new(atomic.Int64)
		type result struct {
			token int64
			err   error
		}
		results := make(chan result, waiters)
		for range waiters {
			sem := semaphore(t, counted(t, f, "sem.acquire", runs, opts...), "handed", 1)
			go func() {
				l, err := sem.Acquire(ctx, 1)
				if err != nil {
					results <- result{err: err}
					return
				}
				token := l.Token()
				results <- result{token, l.Unlock(ctx)}
			}()
		}
		poll(t, "every waiter queues", 10*time.Second, func() {}, func() bool { return runs.Load() >= 2*waiters })
		queued := runs.Load()
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for range waiters {
			r := <-results
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.token <= holder.Token() || seen[r.token] {
				t.Errorf("a handed-over lease has token %d: want one above the first holder's %d, and no two alike", r.token, holder.Token())
			}
			seen[r.token] = true
		}
		// A waiter whose grant arrived while it was looking by itself (its
		// own second look, or its keeper) claims it with one more run.
		if after := runs.Load() - queued; after > waiters/2 {
			t.Fatalf("%d sem.acquire runs after the %d waiters queued, want about 0: releases wake waiters instead of handing them the permit", after, waiters)
		}
	})
}

// stoppedBackend stands for a process stopped (SIGSTOP) while it waits:
// once frozen, its script calls block and the messages it receives are
// held, until thaw delivers the messages and lets the calls through. Its
// keeper's refreshes instead report every call still queued without
// reaching the server, which is what a stopped keeper amounts to: it
// refreshes nothing and wakes no one. (Blocking them would stop the
// simulator's virtual clock, which runs the keeper's timer on the
// goroutine that moves it.)
type stoppedBackend struct {
	locks.Backend
	mu      sync.Mutex
	frozen  chan struct{} // non-nil while calls block; closed when they may go on
	holding bool          // messages are held
	held    []func()
	blocked atomic.Int64 // calls that blocked
}

func (b *stoppedBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	b.mu.Lock()
	frozen := b.frozen
	b.mu.Unlock()
	if frozen != nil && s.Name == "sem.keepqueued" {
		queued := make([]any, len(args)) // args: owners...
		for i := range queued {
			queued[i] = int64(1)
		}
		cmd := redis.NewCmd(ctx)
		cmd.SetVal(queued)
		return cmd
	}
	if frozen != nil {
		b.blocked.Add(1)
		<-frozen
	}
	return b.Backend.Run(ctx, s, keys, args...)
}

func (b *stoppedBackend) Subscribe(ctx context.Context, channel string, deliver func(string)) (func(), error) {
	return b.Backend.Subscribe(ctx, channel, func(p string) {
		b.mu.Lock()
		if b.holding {
			b.held = append(b.held, func() { deliver(p) })
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		deliver(p)
	})
}

func (b *stoppedBackend) freeze() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frozen, b.holding = make(chan struct{}), true
}

// deliver hands over the held messages, as a resumed process reads what
// waited in its socket.
func (b *stoppedBackend) deliver() {
	b.mu.Lock()
	held := b.held
	b.held, b.holding = nil, false
	b.mu.Unlock()
	for _, deliver := range held {
		deliver()
	}
}

// resume lets the blocked calls go on.
func (b *stoppedBackend) resume() {
	b.mu.Lock()
	frozen := b.frozen
	b.frozen = nil
	b.mu.Unlock()
	close(frozen)
}

// A waiter stopped while queued is handed the permit while stopped. The
// grant lasts the waiter's TTL (300 ms); when the process resumes after
// that, another caller holds the permit, and the stopped waiter's Acquire
// must not return a lease built from the old grant (whose Err would say
// "held" while the other holds the permit): it waits its turn again and
// gets the permit when the other releases it, with a larger token.
//
// How the process resumes decides which check finds the grant stale:
//   - asleep: it stopped between two looks and reads the grant first; the
//     lease's local deadline, counted from the attempt that queued it,
//     has passed.
//   - looking: it stopped in the middle of a look (sent before it
//     stopped), which queues it again before it reads the grant; the
//     local deadline has passed too.
//   - looks first: it stopped between two looks, and on resuming looks
//     again (its timer was due) before it reads the grant: that attempt,
//     sent after the grant ran out, queues it again with a fresh local
//     deadline, and only the grant's token, older than the attempt's
//     server time, tells that the grant is stale.
func TestSuiteSemaphoreFrozenGranteeGetsNoStaleLease(t *testing.T) {
	mostlyWaits(t)
	const ttl = 300 * time.Millisecond
	for _, mode := range []string{"asleep", "looking", "looks first"} {
		t.Run(mode, func(t *testing.T) {
			suite(t, func(t *testing.T, f fixture) { frozenGrantee(t, f, ttl, mode) })
		})
	}
}

func frozenGrantee(t *testing.T, f fixture, ttl time.Duration, mode string) {
	ctx := timeout(t, 30*time.Second)
	// The waiter's next look: a third of its waiter TTL, or, at the head,
	// when the holder's permit would run out.
	holderTTL, waiterTTL := time.Minute, time.Minute
	switch mode {
	case "looking":
		waiterTTL = ttl
	case "looks first":
		holderTTL = 2 * time.Second
	}
	holder, err := semaphore(t, f.client(t, locks.WithTTL(holderTTL)), "frozen", 1).Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	runs := new(atomic.Int64)
	var fb *stoppedBackend
	waiting := f.wrap(t, func(b locks.Backend) locks.Backend {
		fb = &stoppedBackend{Backend: scriptCounter{Backend: b, name: "sem.acquire", runs: runs}}
		return fb
	}, locks.WithTTL(ttl), locks.WithWaiterTTL(waiterTTL))
	type result struct {
		lease *locks.Lease
		err   error
	}
	done := make(chan result, 1)
	go func() {
		l, err := semaphore(t, waiting, "frozen", 1).Acquire(ctx, 1)
		done <- result{l, err}
	}()
	poll(t, "the waiter queues", 10*time.Second, func() {}, func() bool { return runs.Load() >= 2 })

	fb.freeze()
	if mode == "looking" {
		// Its next look comes within a third of its waiter TTL.
		poll(t, "the waiter stops in a look", 10*time.Second, func() {}, func() bool { return fb.blocked.Load() > 0 })
	}
	if err := holder.Unlock(ctx); err != nil { // hands the permit to the stopped waiter
		t.Fatal(err)
	}
	f.elapse(ttl + 100*time.Millisecond)
	if f.real == nil && !f.virtual {
		time.Sleep(ttl + 100*time.Millisecond) // miniredis: the server's clock moved, not the waiter's
	}
	other, err := semaphore(t, f.client(t, locks.WithTTL(time.Minute)), "frozen", 1).TryAcquire(ctx, 1)
	if err != nil {
		t.Fatalf("the permit handed to the stopped waiter is still taken after its TTL: %v", err)
	}
	if mode == "looks first" {
		before := runs.Load()
		fb.resume()
		poll(t, "the resumed waiter looks again", 10*time.Second, func() {}, func() bool { return runs.Load() > before })
		fb.deliver()
	} else {
		fb.deliver()
		fb.resume()
	}

	select {
	case r := <-done:
		if r.err == nil {
			t.Fatalf("the resumed waiter got a lease (token %d, Err %v) while another holds the only permit", r.lease.Token(), r.lease.Err())
		}
		t.Fatalf("the resumed waiter failed: %v", r.err)
	case <-time.After(time.Second):
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("the waiter after the other released: %v", r.err)
	}
	if r.lease.Token() <= other.Token() {
		t.Fatalf("the waiter's lease has token %d, want one above the other's %d", r.lease.Token(), other.Token())
	}
	_ = r.lease.Unlock(ctx) // its 300 ms may have run out on a busy machine
}
