package locks

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// countingBackend counts script runs by name, and which calls ran the
// acquire scripts (by the argument that names the call).
type countingBackend struct {
	Backend
	mu      sync.Mutex
	runs    map[string]int
	callers map[string]map[string]bool
}

// callerArg is the argument of an acquire script that names the call:
// mutex.acquire's holder, sem.acquire's owner.
var callerArg = map[string]int{"mutex.acquire": 2, "sem.acquire": 0}

func (b *countingBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	b.mu.Lock()
	b.runs[s.Name]++
	if i, ok := callerArg[s.Name]; ok && i < len(args) {
		if b.callers == nil {
			b.callers = map[string]map[string]bool{}
		}
		if b.callers[s.Name] == nil {
			b.callers[s.Name] = map[string]bool{}
		}
		b.callers[s.Name][fmt.Sprint(args[i])] = true
	}
	b.mu.Unlock()
	return b.Backend.Run(ctx, s, keys, args...)
}

// forgetCallers starts a new count of the calls that ran each script.
func (b *countingBackend) forgetCallers() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.callers = nil
}

// callerCount is how many distinct calls ran script name since
// forgetCallers.
func (b *countingBackend) callerCount(name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.callers[name])
}

func (b *countingBackend) count(name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[name]
}

// keeperFixture is a lock held by one Client for an hour and n Lock calls
// of a second Client queued behind it, on the simulator's virtual clock.
type keeperFixture struct {
	clock   *simulate.VirtualClock
	srv     *simulate.Server
	counted *countingBackend
	waiter  *Client
	k       keys
	sem     bool // a Semaphore's queue (k.semQueue) rather than a Mutex's (k.queue)
	results chan error
	cancel  context.CancelFunc
}

func newKeeperFixture(t *testing.T, n int, waiterTTL time.Duration) *keeperFixture {
	return newQueuedFixture(t, n, waiterTTL, false)
}

// newQueuedFixture makes a keeperFixture for a Mutex, or for a Semaphore of
// one permit (sem).
func newQueuedFixture(t *testing.T, n int, waiterTTL time.Duration, sem bool) *keeperFixture {
	t.Helper()
	f := &keeperFixture{clock: simulate.NewVirtualClock(time.Now()), sem: sem, results: make(chan error, n)}
	f.srv = simulate.New(simulate.WithClock(f.clock))
	f.counted = &countingBackend{Backend: f.srv, runs: map[string]int{}}
	holder, err := NewWithBackend(f.srv, WithClock(f.clock), WithTTL(time.Hour), WithWatchdog(0))
	if err != nil {
		t.Fatal(err)
	}
	f.waiter, err = NewWithBackend(f.counted, WithClock(f.clock), WithWaiterTTL(waiterTTL), WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// locker returns how to take the lock (or its one permit) through c;
	// it runs on the test's goroutine.
	locker := func(c *Client) func(context.Context) (*Lease, error) {
		if sem {
			s, err := c.Semaphore("slots", 1)
			if err != nil {
				t.Fatal(err)
			}
			// The lock hash holds the queued calls' entries (w:) and the
			// holders' records: deleting it is a holder vanishing without a
			// release.
			f.k = s.k
			return func(ctx context.Context) (*Lease, error) { return s.Acquire(ctx, 1) }
		}
		m, err := c.Mutex("batch")
		if err != nil {
			t.Fatal(err)
		}
		f.k = m.k
		return m.Lock
	}
	if _, err := locker(holder)(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ctx context.Context
	ctx, f.cancel = context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(f.cancel)
	take := locker(f.waiter)
	for range n {
		go func() {
			l, err := take(ctx)
			if err == nil {
				err = l.Unlock(context.Background())
			}
			f.results <- err
		}()
	}
	// Every call is queued and handed to the keeper (bounded wait).
	for deadline := time.Now().Add(20 * time.Second); f.kept() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 20s only %d of %d calls were queued with the keeper", f.kept(), n)
		}
	}
	return f
}

func (f *keeperFixture) kept() int {
	f.waiter.keeper.mu.Lock()
	defer f.waiter.keeper.mu.Unlock()
	if kl := f.waiter.keeper.locks[keptKey(f.k, f.sem)]; kl != nil {
		return len(kl.calls)
	}
	return 0
}

// liveWaiters counts the queue entries whose waiter deadline is ahead of
// the server's (virtual) time: the w:<owner> fields of the lock hash.
func (f *keeperFixture) liveWaiters(t *testing.T) int {
	t.Helper()
	// Both kinds keep their waiter entries as w:<owner> fields of the lock
	// hash.
	all, err := f.srv.Do(context.Background(), "HGETALL", f.k.lock).Result()
	if err != nil {
		t.Fatal(err)
	}
	fields, _ := all.(map[any]any)
	var entries []string
	for field, v := range fields {
		if strings.HasPrefix(field.(string), "w:") {
			entries = append(entries, v.(string))
		}
	}
	now := f.clock.Now().UnixMilli()
	live := 0
	for _, e := range entries {
		deadline, err := strconv.ParseInt(strings.Fields(e)[0], 10, 64)
		if err != nil {
			t.Fatalf("waiter entry %q: %v", e, err)
		}
		if deadline > now {
			live++
		}
	}
	return live
}

// keptForTenWaiterTTLs lets ten waiter TTLs of virtual time pass and
// checks that the n queued calls stay queued on about one <kind>.keepqueued
// run per refresh period, and that the calls did not refresh themselves
// with <kind>.acquire.
func (f *keeperFixture) keptForTenWaiterTTLs(t *testing.T, n int, waiterTTL time.Duration, kind string) {
	t.Helper()
	f.counted.forgetCallers()
	for range 100 { // 10 waiter TTLs
		f.clock.Advance(waiterTTL / 10)
	}
	if live := f.liveWaiters(t); live != n {
		t.Fatalf("after 10 waiter TTLs, %d of %d waiters are still queued", live, n)
	}
	keeps, callers := f.counted.count(kind+".keepqueued"), f.counted.callerCount(kind+".acquire")
	// One refresh per third of the waiter TTL: 30 periods.
	if keeps < 25 || keeps > 35 {
		t.Errorf("%s.keepqueued ran %d times in 30 refresh periods, want about 30", kind, keeps)
	}
	// Only the head looks by itself, on its wall-time timer: as often as a
	// busy machine's scheduler makes the loop above last, so what is
	// counted is which calls looked, not how often. Waiters that refreshed
	// themselves would be all n of them.
	if callers > n/4 {
		t.Errorf("%d of the %d queued calls ran %s.acquire while they sat in the queue: the waiters refreshed themselves", callers, n, kind)
	}
}

func (f *keeperFixture) collect(t *testing.T, n int, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for i := range n {
		select {
		case err := <-f.results:
			if err != nil {
				t.Fatalf("Lock call %d of %d: %v", i+1, n, err)
			}
		case <-timeout:
			t.Fatalf("only %d of %d queued Lock calls got the lock within %v", i, n, within)
		}
	}
}

// Waiters queued for ten waiter TTLs stay queued, refreshed by one script
// run per refresh period for all of them rather than one run per waiter;
// once the holder releases, every one of them gets the lock. Without the
// keeper the waiters' own refreshes, on wall time, would not keep up with
// the virtual clock, and their places would run out.
//
// The waiter TTL is a minute: a refresh gives up after a third of it on
// wall time (after that it would be no use to a real waiter), and on a
// busy machine, or under the race detector, a script run can take longer
// than the third of a shorter one.
func TestKeeperKeepsQueuedWaitersWithOneRunPerPeriod(t *testing.T) {
	const n, waiterTTL = 50, time.Minute
	f := newKeeperFixture(t, n, waiterTTL)
	f.keptForTenWaiterTTLs(t, n, waiterTTL, "mutex")
	if err := f.srv.Do(context.Background(), "HDEL", f.k.lock, "h").Err(); err != nil {
		t.Fatal(err) // the release is not announced: the keeper's next refresh sees no holder
	}
	f.clock.Advance(waiterTTL / 3)
	f.collect(t, n, 20*time.Second)
}

// A Client refreshes its waiters of one Mutex at most mutexKeepBatch (100)
// a run, since mutex.keepqueued refuses more: 250 waiters take three runs
// a refresh period, and every one stays queued.
func TestKeeperSendsMutexWaitersInBatches(t *testing.T) {
	const n, waiterTTL = 250, time.Minute
	f := newKeeperFixture(t, n, waiterTTL)
	before := f.counted.count("mutex.keepqueued")
	for range 30 { // 3 waiter TTLs: 9 refresh periods
		f.clock.Advance(waiterTTL / 10)
	}
	if live := f.liveWaiters(t); live != n {
		t.Fatalf("after 3 waiter TTLs, %d of %d waiters are still queued", live, n)
	}
	// 3 runs a period, 9 periods; a period's runs may straddle the end.
	if runs := f.counted.count("mutex.keepqueued") - before; runs < 21 || runs > 33 {
		t.Errorf("mutex.keepqueued ran %d times in 9 refresh periods for %d waiters, want about 27 (3 a period)", runs, n)
	}
	f.cancel()
}

// A holder that vanishes without a release (here its hold is deleted)
// announces nothing: the keeper's next refresh sees a lock with waiters
// and no holder and wakes them, long before their own timers (the head's
// is a third of its 60s waiter TTL, the others' three waiter TTLs).
func TestKeeperWakesWaitersOfAVanishedHolder(t *testing.T) {
	const n, waiterTTL = 20, time.Minute
	f := newKeeperFixture(t, n, waiterTTL)
	if err := f.srv.Do(context.Background(), "HDEL", f.k.lock, "h").Err(); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(waiterTTL / 3)
	f.collect(t, n, 10*time.Second)
}

// A waiter that the keeper finds no longer queued (here: its entry was
// removed, as a release that skipped it would) is woken to look for itself
// and queues again.
func TestKeeperWakesAWaiterThatLostItsPlace(t *testing.T) {
	const n, waiterTTL = 3, 30 * time.Second
	f := newKeeperFixture(t, n, waiterTTL)
	queued, err := f.srv.Do(context.Background(), "ZRANGE", f.k.queue, 0, -1).StringSlice()
	if err != nil || len(queued) != n {
		t.Fatalf("queue %v, %v; want %d waiters", queued, err, n)
	}
	last := queued[n-1]
	for _, cmd := range [][]any{{"ZREM", f.k.queue, last}, {"HDEL", f.k.lock, "w:" + last}} {
		if err := f.srv.Do(context.Background(), cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	acquiresBefore := f.counted.count("mutex.acquire")
	f.clock.Advance(waiterTTL / 3)
	// The woken waiter queues again, at the tail (its own sleep is 90s).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		back, err := f.srv.Do(context.Background(), "ZSCORE", f.k.queue, last).Result()
		if err == nil && back != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiter the keeper found unqueued did not queue again within 10s (acquire runs since: %d)",
				f.counted.count("mutex.acquire")-acquiresBefore)
		}
	}
	f.cancel()
	for range n {
		<-f.results
	}
}

// newSemKeeperFixture is newKeeperFixture with a semaphore of one permit
// held for an hour and n Acquire calls queued behind it.
func newSemKeeperFixture(t *testing.T, n int, waiterTTL time.Duration) *keeperFixture {
	return newQueuedFixture(t, n, waiterTTL, true)
}

// A Semaphore's queued Acquire calls are kept the same way, with
// sem.keepqueued: 20 calls queued behind a permit held for an hour stay
// queued for ten waiter TTLs on one script run per refresh period, and all
// are served once the permit is free.
// The waiter TTL is a minute, as in
// TestKeeperKeepsQueuedWaitersWithOneRunPerPeriod.
func TestKeeperKeepsQueuedSemaphoreWaiters(t *testing.T) {
	const n, waiterTTL = 20, time.Minute
	f := newSemKeeperFixture(t, n, waiterTTL)
	f.keptForTenWaiterTTLs(t, n, waiterTTL, "sem")
	if err := f.srv.Do(context.Background(), "DEL", f.k.lock).Err(); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(waiterTTL / 3) // the keeper's next refresh finds the permit free
	f.collect(t, n, 20*time.Second)
}

// A permit that vanishes without a release (its holder died; here the
// lock hash with its record is deleted) announces nothing: the keeper's next refresh
// finds the head's permit free and wakes it, long before its own timer (a
// third of its 60s waiter TTL, on wall time), and the releases then serve
// the rest.
func TestKeeperWakesTheSemaphoreHeadWhenPermitsVanish(t *testing.T) {
	const n, waiterTTL = 10, time.Minute
	f := newSemKeeperFixture(t, n, waiterTTL)
	if err := f.srv.Do(context.Background(), "DEL", f.k.lock).Err(); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(waiterTTL / 3)
	f.collect(t, n, 10*time.Second)
}
