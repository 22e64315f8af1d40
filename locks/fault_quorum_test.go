package locks_test

import (
	"context"
	"errors"
	"math/rand/v2"
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
		// One retry: a pooled connection to a server that was restarted
		// fails once with EOF, and the retry dials the new process.
		o.MaxRetries = 1
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

// 16 goroutines × 200 lock/unlock rounds on one quorum lock over 5 servers,
// while a chaos loop kills a random server and brings it back (empty: no
// persistence) after one TTL, at most two down at a time. A restarted
// server forgot the locks it held; waiting one TTL before it answers again
// is Redlock's delayed restart, without which a majority can forget a
// hold. No two holds may overlap, and the fenced resource must accept
// every holder's write in token order.
//
// Lock calls that found no majority before their context ended are counted
// and reported (Lock retries rounds without a majority until then); at most
// 30 s are spent, and at least 100 holds are required.
func TestFaultQuorumNoOverlapWhileServersRestart(t *testing.T) {
	const (
		workers    = 16
		iterations = 200
		ttl        = 2 * time.Second  // each server gets ttl/20 to answer
		budget     = 30 * time.Second // CI time: the safety check does not need all 3,200 rounds
	)
	servers, c := quorumServers(t, 5)
	resource := faulttest.NewFencedResource(t)
	var detector faulttest.Detector
	ctx := context.Background()

	stop := make(chan struct{})
	var chaos sync.WaitGroup
	var kills atomic.Int64
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		down := map[int]time.Time{} // index -> when it may come back
		rng := rand.New(rand.NewPCG(1, 2))
		for round := 0; round < 10000; round++ {
			select {
			case <-stop:
				for i := range down {
					servers[i].Restart(t)
				}
				return
			case <-time.After(100 * time.Millisecond):
			}
			for i, back := range down {
				if time.Now().After(back) {
					servers[i].Restart(t)
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
		}
	}()

	var wg sync.WaitGroup
	var holds, failures, lost atomic.Int64
	var failMu sync.Mutex
	var failSamples []string
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := c.Mutex("quorum-chaos", locks.WithTTL(ttl))
			if err != nil {
				t.Error(err)
				return
			}
			// 200 Lock calls each, none past the budget; one that ends
			// without the lock (no majority, or outrun by the others until the
			// budget ran out: Redlock promises no fairness) counts as a
			// failure, not a hold. Any other error fails the test.
			for i := 0; i < iterations && time.Since(start) < budget; i++ {
				lctx, cancel := context.WithDeadline(ctx, start.Add(budget))
				l, err := m.Lock(lctx)
				cancel()
				if err != nil {
					if !errors.Is(err, locks.ErrNoQuorum) && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Lock failed with %v, want ErrNoQuorum or the end of the budget", err)
					}
					failures.Add(1)
					failMu.Lock()
					if len(failSamples) < 3 {
						failSamples = append(failSamples, strings.ReplaceAll(err.Error(), "\n", "; "))
					}
					failMu.Unlock()
					continue
				}
				begin := time.Now()
				_ = resource.WriteChecked(l.Token(), l.Owner())
				end := time.Now()
				if l.Err() != nil {
					lost.Add(1)
				}
				detector.Add(faulttest.Interval{Owner: l.Owner(), Token: l.Token(), Start: begin, End: end})
				holds.Add(1)
				_ = l.Unlock(ctx)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	chaos.Wait()
	overlaps := detector.Overlaps()
	fence := resource.Stats()
	t.Logf("quorum of 5, %d goroutines × %d rounds in %v with %d server kills (restart after one TTL, ≤2 down): %d holds, %d Lock failures %v, %d leases lost in the critical section, %d overlaps; fence: %v",
		workers, iterations, took.Round(time.Millisecond), kills.Load(), holds.Load(), failures.Load(), failSamples, lost.Load(), len(overlaps), fence)
	for i, o := range overlaps {
		if i == 3 {
			break
		}
		t.Errorf("overlap: %v", o)
	}
	if fence.Rejected > 0 {
		t.Errorf("the fenced resource refused %d writes of holders (tokens not increasing): %v", fence.Rejected, fence)
	}
	// Liveness under chaos depends on how busy the machine is (each server
	// has ttl/20 to answer); safety does not. Require some real contention.
	if holds.Load() < 100 {
		t.Errorf("only %d of %d Lock calls held the lock within %v: too few holds to show anything", holds.Load(), workers*iterations, budget)
	}
}
