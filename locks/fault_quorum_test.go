package locks_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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
// them (fast-failing go-redis clients).
func quorumServers(t *testing.T, n int, opts ...locks.Option) ([]*redistest.Server, *locks.Client) {
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
	t.Cleanup(func() { c.Close() })
	return servers, c
}

// A quorum over 5 servers holds a lock with 2 of them dead, and refuses it
// with a clear error (ErrNoQuorum, naming how many answered) with 3 dead.
func TestFaultQuorumSurvivesTwoOfFiveDown(t *testing.T) {
	servers, c := quorumServers(t, 5)
	ctx := context.Background()
	m, err := c.Mutex("quorum-down", locks.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	servers[0].Kill()
	servers[3].Kill()
	l, err := m.TryLock(ctx)
	if err != nil {
		t.Fatalf("with 2 of 5 servers down: %v", err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("unlock with 2 of 5 down: %v", err)
	}
	servers[4].Kill()
	start := time.Now()
	_, err = m.TryLock(ctx)
	took := time.Since(start)
	t.Logf("2 of 5 down: acquired and released; 3 of 5 down: %v after %v", err, took.Round(time.Millisecond))
	if !errors.Is(err, locks.ErrNoQuorum) {
		t.Fatalf("with 3 of 5 servers down: %v, want ErrNoQuorum", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "quorum-down") || !strings.Contains(msg, "5") {
		t.Errorf("the error should name the lock and the number of servers: %q", msg)
	}
	lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := m.Lock(lctx); err == nil {
		t.Fatal("Lock got a quorum lock with 3 of 5 servers down")
	}
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

// 16 goroutines × 200 Lock → critical section → Unlock on one quorum lock
// over 5 servers (3,200 critical sections), while a chaos goroutine kills a
// random server and restarts it empty (no persistence) one TTL later, never
// more than 2 down at once, so a majority is always reachable. The restart
// waits one TTL because a restarted server forgot the holds it granted:
// that is Redlock's delayed restart, without which a majority can forget a
// hold. No two holds may overlap, and the fenced resource must see tokens
// strictly increasing from holder to holder.
func TestFaultQuorumNoOverlapWhileServersRestart(t *testing.T) {
	const (
		workers    = 16
		iterations = 200
		ttl        = 3 * time.Second
		hold       = time.Millisecond
		chaosEvery = 500 * time.Millisecond
		lockWait   = 10 * time.Second
		deadline   = 120 * time.Second
	)
	servers, c := quorumServers(t, 5)
	resource := faulttest.NewFencedResource(t)
	var detector faulttest.Detector
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(deadline))
	defer cancel()

	stop := make(chan struct{})
	var chaos sync.WaitGroup
	var kills, restarts, maxDown atomic.Int64
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		ct := chaosTB{t}
		down := map[int]time.Time{} // index -> when it may come back
		rng := rand.New(rand.NewPCG(1, 2))
		tick := time.NewTicker(chaosEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				for i := range down {
					servers[i].Restart(ct)
					restarts.Add(1)
				}
				return
			case <-tick.C:
			}
			for i, back := range down {
				if time.Now().After(back) {
					servers[i].Restart(ct)
					restarts.Add(1)
					delete(down, i)
				}
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
			// ctx bounds the whole loop, and every failed call takes at
			// least one Lock round, so the loop ends.
			for i := 0; i < iterations && ctx.Err() == nil; {
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
					}
					continue
				}
				begin := time.Now()
				waitMu.Lock()
				waits = append(waits, begin.Sub(asked))
				waitMu.Unlock()
				_ = resource.WriteChecked(l.Token(), l.Owner())
				time.Sleep(hold)
				end := time.Now()
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
	t.Logf("quorum of 5, TTL %v: %d of %d critical sections (%d goroutines × %d) in %v; %d server kills, %d restarts (restart one TTL after the kill, at most %d down at once)",
		ttl, done.Load(), workers*iterations, workers, iterations, took.Round(time.Millisecond), kills.Load(), restarts.Load(), maxDown.Load())
	t.Logf("overlaps %d; fence: %v; leases lost in the critical section %d", len(overlaps), fence, lost.Load())
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
	if n := lockErrs.count("other"); n > 0 {
		t.Errorf("%d Lock calls failed with neither ErrNoQuorum nor a timeout: %s", n, lockErrs.first["other"])
	}
	if n := done.Load(); n < int64(workers*iterations) {
		t.Errorf("only %d of %d critical sections completed within %v", n, workers*iterations, deadline)
	}
	if kills.Load() == 0 || restarts.Load() == 0 {
		t.Errorf("the chaos goroutine killed %d and restarted %d servers: the run tested no failure", kills.Load(), restarts.Load())
	}
}
