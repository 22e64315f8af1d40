package locks_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/faulttest"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// quorumServers starts n independent redis-servers and a quorum Client over
// them (fast-failing go-redis clients, also returned).
func quorumServers(t *testing.T, n int, opts ...locks.Option) ([]*redistest.Server, []redis.UniversalClient, *locks.Client) {
	t.Helper()
	var servers []*redistest.Server
	var clients []redis.UniversalClient
	for i := 0; i < n; i++ {
		s := redistest.Standalone(t)
		o := faultRedisOptions(s.Addr)
		// One retry, at once: a pooled connection to a server that was
		// restarted fails once with EOF, and the retry dials the new
		// process. One dial attempt: go-redis's default (5 attempts 100 ms
		// apart) makes every call to a dead server last the whole
		// per-server timeout instead of failing at "connection refused".
		o.MaxRetries = 1
		o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
		o.DialerRetries = 1
		rc := redis.NewClient(o)
		t.Cleanup(func() { rc.Close() })
		servers, clients = append(servers, s), append(clients, rc)
	}
	c, err := locks.NewQuorum(clients, opts...)
	if err != nil {
		t.Fatal(err)
	}
	// The servers are fresh, so the restart guard would not count them
	// for the longest lease; these tests restart a server only when no
	// lease it granted can be live (fault_restart_test.go tests the guard).
	locks.CountEveryServer(c)
	t.Cleanup(func() { c.Close() })
	return servers, clients, c
}

// reachable polls rc with PING until it answers, for at most timeout, and
// reports how long that took. After a run of failed dials go-redis probes a
// dead address only once a second, so a restarted server is usable by the
// quorum only once its own client says so.
func reachable(rc redis.UniversalClient, timeout time.Duration) (time.Duration, bool) {
	start := time.Now()
	for try := 0; try < 1000 && time.Since(start) < timeout; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rc.Ping(ctx).Err()
		cancel()
		if err == nil {
			return time.Since(start), true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start), false
}

// A quorum over 5 servers holds a lock with 2 of them dead, and refuses it
// with a clear error (ErrNoQuorum, naming the lock and how many servers
// failed out of how many) with 3 dead, both for TryLock and for a Lock that
// waits; with one of the three back it acquires again.
//
// The TTL is long (10 s) only for its per-server timeout (TTL/20 = 500 ms):
// with 2 servers dead all 3 others must answer in time, which a busy
// machine must not prevent. Acquisitions use Lock, which retries a round
// that a slow answer spoiled; the 3-dead refusals need no luck.
func TestFaultQuorumSurvivesTwoOfFiveDown(t *testing.T) {
	mostlyWaits(t)
	servers, clients, c := quorumServers(t, 5)
	ctx := context.Background()
	m, err := c.Mutex("quorum-down", locks.WithTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	acquire := func(what string) {
		t.Helper()
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		l, err := m.Lock(lctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if l.Err() != nil || l.Token() <= 0 {
			t.Fatalf("%s: a lease with Err %v and token %d, want a held lease with a token", what, l.Err(), l.Token())
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatalf("%s: unlock: %v", what, err)
		}
	}
	servers[0].Kill()
	servers[3].Kill()
	acquire("with 2 of 5 servers down")

	servers[4].Kill()
	start := time.Now()
	_, err = m.TryLock(ctx)
	took := time.Since(start)
	t.Logf("2 of 5 down: acquired and released; 3 of 5 down: TryLock after %v: %v", took.Round(time.Millisecond), err)
	if !errors.Is(err, locks.ErrNoQuorum) {
		t.Fatalf("with 3 of 5 servers down: TryLock returned %v, want ErrNoQuorum", err)
	}
	// "3 of 5 servers failed" or "2 of 5 answered": the count, either way.
	if msg := err.Error(); !strings.Contains(msg, "quorum-down") || !regexp.MustCompile(`\b[0-5] of 5\b`).MatchString(msg) {
		t.Errorf("the error should name the lock and how many of the 5 servers answered or failed: %q", msg)
	}
	lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	l, err := m.Lock(lctx)
	took = time.Since(start)
	t.Logf("3 of 5 down: Lock with a 300ms context after %v: %v", took.Round(time.Millisecond), err)
	if err == nil {
		t.Fatalf("Lock got a quorum lock with 3 of 5 servers down (token %d)", l.Token())
	}
	if !errors.Is(err, locks.ErrNoQuorum) {
		t.Errorf("with 3 of 5 servers down: Lock returned %v, want ErrNoQuorum (why its context ended without the lock)", err)
	}
	if took > 5*time.Second {
		t.Errorf("Lock with a 300ms context took %v with 3 of 5 servers down", took)
	}

	// No lease is held anywhere, so the server may come back at once.
	servers[4].Restart(t)
	if after, ok := reachable(clients[4], 10*time.Second); !ok {
		t.Fatalf("server 5 restarted but its client did not reach it within %v", after)
	}
	acquire("with one of the 3 dead servers back (2 of 5 down)")
}

// chaosTB turns redistest's Fatalf into Errorf: Server.Restart runs on the
// chaos goroutine, where FailNow must not be called.
type chaosTB struct{ testing.TB }

func (c chaosTB) Fatalf(format string, args ...any) { c.TB.Helper(); c.TB.Errorf(format, args...) }

// errorKinds counts errors by kind, keeping the first message of each.
type errorKinds struct {
	mu     sync.Mutex
	counts map[string]int
	first  map[string]string
}

func (k *errorKinds) add(kind string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.counts == nil {
		k.counts, k.first = map[string]int{}, map[string]string{}
	}
	k.counts[kind]++
	if _, ok := k.first[kind]; !ok {
		k.first[kind] = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
}

func (k *errorKinds) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.counts) == 0 {
		return "none"
	}
	kinds := make([]string, 0, len(k.counts))
	for kind := range k.counts {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for i, kind := range kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", kind, k.counts[kind])
	}
	return b.String()
}

func (k *errorKinds) count(kind string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.counts[kind]
}

// raceDetector reports whether the test binary was built with -race.
func raceDetector() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}

// 16 goroutines × 200 Lock → critical section → Unlock on one quorum lock
// over 5 servers (3,200 critical sections), while a chaos goroutine kills a
// random server and restarts it empty (no persistence) one TTL later, never
// more than 2 down at once, so a majority is always reachable. The restart
// waits one TTL because a restarted server forgot the holds it granted:
// that is Redlock's delayed restart, without which a majority can forget a
// hold. No two holds may overlap, and the fenced resource must see tokens
// strictly increasing from holder to holder.
//
// The lease (3 s) is three thousand times the critical section (1 ms), so
// only a stall of seconds could end a lease inside it; the per-server
// timeout (TTL/20 = 150 ms) and the 120 s deadline leave room for a busy
// machine, which slows the run (split votes, slow answers) without deciding
// whether holds overlap.
func TestFaultQuorumNoOverlapWhileServersRestart(t *testing.T) {
	mostlyWaits(t)
	const (
		workers    = 16
		ttl        = 3 * time.Second
		hold       = time.Millisecond
		chaosEvery = 1500 * time.Millisecond
		lockWait   = 10 * time.Second
		deadline   = 120 * time.Second
	)
	iterations := 200
	if raceDetector() {
		// About 15 critical sections a second under the race detector on
		// 2 cores: 200 each would not end within the deadline. CI runs
		// the fault suite without -race; this checks the same properties
		// on fewer rounds.
		iterations = 25
		t.Logf("race detector: %d rounds per goroutine instead of 200", iterations)
	}
	servers, clients, c := quorumServers(t, 5)
	resource := faulttest.NewFencedResource(t)
	var detector faulttest.Detector
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(deadline))
	defer cancel()

	// The chaos goroutine counts a restarted server as down until the
	// quorum's own client reaches it again: after a run of failed dials
	// go-redis probes a dead address only once a second, so a server is
	// back for the lock only when its client says so, and "at most 2 down"
	// must hold from the client's point of view.
	stop := make(chan struct{})
	var chaos sync.WaitGroup
	var kills, restarts, maxDown atomic.Int64
	var slowestBack time.Duration
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		ct := chaosTB{t}
		down := map[int]time.Time{} // index -> when it may come back
		rng := rand.New(rand.NewPCG(1, 2))
		tick := time.NewTicker(chaosEvery)
		defer tick.Stop()
		for round := 0; round < 10000; round++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for i, back := range down {
				if time.Now().Before(back) {
					continue
				}
				servers[i].Restart(ct)
				restarts.Add(1)
				after, ok := reachable(clients[i], 10*time.Second)
				slowestBack = max(slowestBack, after)
				if !ok {
					t.Errorf("server %d: its client did not reach it within %v of its restart", i+1, after.Round(time.Millisecond))
					return
				}
				delete(down, i)
			}
			if len(down) < 2 {
				i := rng.IntN(len(servers))
				if _, isDown := down[i]; !isDown {
					servers[i].Kill()
					kills.Add(1)
					down[i] = time.Now().Add(ttl + 100*time.Millisecond)
				}
			}
			if n := int64(len(down)); n > maxDown.Load() {
				maxDown.Store(n)
			}
		}
	}()

	var wg sync.WaitGroup
	var done, lost atomic.Int64
	var lockErrs, unlockErrs errorKinds
	var waitMu sync.Mutex
	var waits []time.Duration
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := c.Mutex("quorum-chaos", locks.WithTTL(ttl))
			if err != nil {
				t.Error(err)
				return
			}
			// Iteration i ends only with a critical section; a Lock call
			// that gives up (lockWait without a majority, or outrun by the
			// others: Redlock promises no fairness) is counted and retried.
			// ctx bounds the whole loop; such a call returns only when
			// lockWait ends, and any other error ends the goroutine.
			// A run fast enough to end before the chaos goroutine both
			// killed and restarted a server tested no failure: the
			// goroutines go on (within ctx and the call bound) until it has.
			chaosSeen := func() bool { return kills.Load() >= 2 && restarts.Load() >= 1 }
			for i, calls := 0, 0; (i < iterations || !chaosSeen()) && calls < 10*iterations+2000 && ctx.Err() == nil; calls++ {
				lctx, lcancel := context.WithTimeout(ctx, lockWait)
				asked := time.Now()
				l, err := m.Lock(lctx)
				lcancel()
				if err != nil {
					switch {
					case ctx.Err() != nil:
						// The test's deadline: reported by the count below.
					case errors.Is(err, locks.ErrNoQuorum):
						lockErrs.add("no quorum", err)
					case errors.Is(err, context.DeadlineExceeded):
						lockErrs.add("timed out", err)
					default:
						lockErrs.add("other", err)
						return
					}
					continue
				}
				begin := time.Now()
				waitMu.Lock()
				waits = append(waits, begin.Sub(asked))
				waitMu.Unlock()
				_ = resource.WriteChecked(l.Token(), l.Owner()) // counted in resource.Stats
				time.Sleep(hold)
				end := time.Now()
				// A lease that ran out within a 1 ms critical section means
				// a stall longer than the TTL or a lease whose validity was
				// wrong: either would make an overlap no fault of the
				// servers' chaos, so it is counted and fails the test.
				if l.Err() != nil {
					lost.Add(1)
				}
				detector.Add(faulttest.Interval{Owner: l.Owner(), Token: l.Token(), Start: begin, End: end})
				uctx, ucancel := context.WithTimeout(context.Background(), 5*time.Second)
				if err := l.Unlock(uctx); err != nil {
					switch {
					case errors.Is(err, locks.ErrNoQuorum):
						unlockErrs.add("no quorum", err)
					case errors.Is(err, locks.ErrLockLost):
						unlockErrs.add("lost", err)
					default:
						unlockErrs.add("other", err)
					}
				}
				ucancel()
				done.Add(1)
				i++
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	chaos.Wait()

	overlaps := detector.Overlaps()
	fence := resource.Stats()
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	pct := func(p float64) time.Duration {
		if len(waits) == 0 {
			return 0
		}
		return waits[int(p*float64(len(waits)-1))].Round(time.Millisecond)
	}
	t.Logf("quorum of 5, TTL %v: %d of %d critical sections (%d goroutines × %d) in %v; %d server kills, %d restarts (one TTL after the kill; reachable again at most %v later; at most %d down at once)",
		ttl, done.Load(), workers*iterations, workers, iterations, took.Round(time.Millisecond), kills.Load(), restarts.Load(), slowestBack.Round(time.Millisecond), maxDown.Load())
	t.Logf("overlaps %d; stale writes refused by the fence %d (fence: %v); leases run out in the critical section %d", len(overlaps), fence.Rejected, fence, lost.Load())
	t.Logf("Lock waits p50 %v, p99 %v, max %v; Lock errors: %v; Unlock errors: %v", pct(0.5), pct(0.99), pct(1), &lockErrs, &unlockErrs)
	for kind, msg := range lockErrs.first {
		t.Logf("first Lock error %q: %s", kind, msg)
	}
	for kind, msg := range unlockErrs.first {
		t.Logf("first Unlock error %q: %s", kind, msg)
	}
	for i, o := range overlaps {
		if i == 3 {
			break
		}
		t.Errorf("overlap: %v", o)
	}
	if fence.Rejected > 0 {
		t.Errorf("the fenced resource refused %d writes of holders (tokens not strictly increasing from holder to holder): %v", fence.Rejected, fence)
	}
	if lost.Load() > 0 {
		t.Errorf("%d leases ran out within their 1 ms critical section (TTL %v)", lost.Load(), ttl)
	}
	if n := lockErrs.count("other"); n > 0 {
		t.Errorf("%d Lock calls failed with neither ErrNoQuorum nor a timeout: %s", n, lockErrs.first["other"])
	}
	// A server that granted a lease comes back (empty) only one TTL after
	// it died, when the lease is over, so while a lease lasts at most the 2
	// servers that did not grant it can deny it: Unlock can fail to reach a
	// majority, but never find the lease lost.
	for _, kind := range []string{"lost", "other"} {
		if n := unlockErrs.count(kind); n > 0 {
			t.Errorf("%d Unlock calls failed (%s): %s", n, kind, unlockErrs.first[kind])
		}
	}
	if n := done.Load(); n < int64(workers*iterations) {
		t.Errorf("only %d of %d critical sections completed within %v", n, workers*iterations, deadline)
	}
	if kills.Load() == 0 || restarts.Load() == 0 {
		t.Errorf("the chaos goroutine killed %d and restarted %d servers: the run tested no failure", kills.Load(), restarts.Load())
	}
}
