package locks_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// Redlock's known weak spot, under test: A holds a lock on a bare majority
// of independent servers (the others cannot be reached from A), one of
// A's servers is killed and restarted at once, empty, and B asks for the
// lock on all of them. Counted, the restarted server and the servers A
// could not reach are a majority for B, while A is still inside its lease:
// two holders. A quorum Client counts a server only once it has been up
// for longer than the longest lease (WithMaxTTL) plus a drift margin, or
// at once when it persists every write (appendfsync always).
//
// Each trial takes a fraction of a second: it does not wait for A's lease
// to end, as the restarted server simply does not count. Servers start
// fresh, so they count only once up for the bound (about 4 s here); a
// pool of servers lets trials go on while the servers restarted by the
// previous trials wait for that. The TTL (3 s) is long enough that a
// trial on a busy machine (a restart, new clients' dials) still asks
// while A's lease lasts, and that the quorum's per-server timeout
// (TTL/20, 150 ms) covers a dial; with appendfsync always, where nothing
// waits, it is 5 s, which also covers an fsync.
const (
	restartTrials = 50
	restartMaxTTL = 3 * time.Second
)

func TestFaultQuorumRestartedServerNotCounted3(t *testing.T) {
	mostlyWaits(t)
	restartRun(t, 3, restartTrials, false, true)
}

func TestFaultQuorumRestartedServerNotCounted5(t *testing.T) {
	mostlyWaits(t)
	restartRun(t, 5, restartTrials, false, true)
}

// With appendfsync always a restarted server remembers A's hold: it counts
// at once (A's Extend confirms on it, which needs it for a majority) and
// still refuses B.
func TestFaultQuorumRestartedServerWithFsyncCounts(t *testing.T) {
	mostlyWaits(t)
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d servers", n), func(t *testing.T) { restartRun(t, n, restartTrials, true, true) })
	}
}

// The guard is what prevents the double grant: with it turned off, the
// same trials grant the lock to B while A holds it.
func TestFaultQuorumRestartedServerCountedWithoutGuard(t *testing.T) {
	mostlyWaits(t)
	restartRun(t, 3, 5, false, false)
}

// pooled is a server of a restart run, and when the guard counts it.
type pooled struct {
	srv      *redistest.Server
	countsAt time.Time
}

func restartRun(t *testing.T, n, trials int, fsync, guard bool) {
	majority := n/2 + 1
	ttl := restartMaxTTL
	if fsync {
		ttl = 5 * time.Second
	}
	// A server counts once up for the bound, plus the drift margin, plus
	// the second that INFO's whole-second uptime may hide.
	mature := ttl + ttl/100 + 2*time.Millisecond + time.Second + 100*time.Millisecond
	var args []redistest.Option
	if fsync {
		args = append(args, redistest.WithArgs("--appendonly", "yes", "--appendfsync", "always"))
	}
	// Without persistence each trial makes one server uncounted for the
	// bound; the spare servers keep the next trials going meanwhile.
	size, wait := n, time.Duration(0)
	if !fsync && guard {
		size, wait = n+10, mature
	}
	pool := make([]*pooled, size)
	for i := range pool {
		pool[i] = &pooled{srv: redistest.Standalone(t, args...), countsAt: time.Now().Add(wait)}
	}
	ctx := timeout(t, 3*time.Minute)
	start := time.Now()
	var doubles, refused, inconclusive, extended int
	var waited time.Duration
	var firstRefusal, firstDouble string
	for trial := 0; trial < trials; trial++ {
		// n servers that count, the earliest ready first.
		var set []*pooled
		for try := 0; try < 100 && len(set) < n; try++ {
			set = set[:0]
			next := time.Time{}
			for _, p := range pool {
				if !time.Now().Before(p.countsAt) {
					if len(set) < n {
						set = append(set, p)
					}
				} else if next.IsZero() || p.countsAt.Before(next) {
					next = p.countsAt
				}
			}
			if len(set) < n {
				d := time.Until(next)
				waited += d
				time.Sleep(d)
			}
		}
		if len(set) < n {
			t.Fatalf("trial %d: fewer than %d servers count", trial, n)
		}
		name := fmt.Sprintf("restart-%d", trial)
		victim := set[0]

		// A reaches only a bare majority: the others are addresses where
		// nothing listens.
		var aClients []redis.UniversalClient
		dead := deadAddrs(t, len(set)-majority)
		for i, p := range set {
			addr := p.srv.Addr
			if i >= majority {
				addr = dead[i-majority]
			}
			aClients = append(aClients, restartClient(t, addr))
		}
		a := restartQuorum(t, aClients, ttl, guard)
		// With only a bare majority reachable, one slow answer (a busy
		// machine) fails the round: a few rounds are allowed.
		var al *locks.Lease
		var err error
		for try := 0; try < 5 && al == nil; try++ {
			if al, err = mutex(t, a, name).TryLock(ctx); err != nil && try == 4 {
				t.Fatalf("trial %d: A on a bare majority of %d: %v", trial, n, err)
			}
		}

		victim.srv.Restart(t)
		restarted := time.Now()
		if !fsync && guard {
			victim.countsAt = restarted.Add(mature)
		}
		if fsync {
			// Counted at once, and remembering A's hold: A's renewal
			// reaches a majority only with it.
			if err := al.Extend(ctx, 0); err != nil {
				t.Errorf("trial %d: A's Extend after its server restarted with appendfsync always = %v, want the server counted at once", trial, err)
			} else {
				extended++
			}
		}

		var bClients []redis.UniversalClient
		for _, p := range set {
			bClients = append(bClients, restartClient(t, p.srv.Addr))
		}
		b := restartQuorum(t, bClients, ttl, guard)
		bl, err := mutex(t, b, name).TryLock(ctx)
		asked := time.Now()
		switch {
		case err == nil && al.Err() == nil && asked.Before(al.Deadline()):
			doubles++
			if firstDouble == "" {
				firstDouble = fmt.Sprintf("trial %d: B granted %v after the restart, A's lease held until %v more", trial, asked.Sub(restarted).Round(time.Millisecond), al.Deadline().Sub(asked).Round(time.Millisecond))
			}
		case err == nil:
			inconclusive++ // A's lease had ended: a busy machine, no test
		case errors.Is(err, locks.ErrNotAcquired) || errors.Is(err, locks.ErrNoQuorum):
			refused++
			if firstRefusal == "" {
				firstRefusal = err.Error()
			}
		default:
			t.Errorf("trial %d: B's TryLock = %v, want ErrNotAcquired", trial, err)
		}
		if bl != nil {
			_ = bl.Unlock(ctx)
		}
		if !fsync && guard && trial == 0 {
			// Inspect names the restarted server and when it counts.
			info, _ := b.Inspect(ctx, name)
			if len(info.Servers) != n || info.Servers[0].Err == nil || !strings.Contains(info.Servers[0].Err.Error(), "restarted, not counted until") {
				t.Errorf("Inspect after the restart: server 1 %+v, want \"restarted, not counted until ...\"", info.Servers)
			} else {
				t.Logf("Inspect, server 1: %v", info.Servers[0].Err)
			}
		}
		if fsync && trial == 0 {
			info, err := b.Inspect(ctx, name)
			if err != nil || len(info.Servers) != n || info.Servers[0].Err != nil {
				t.Errorf("Inspect after a restart with appendfsync always = %v, server 1 %+v, want it counted", err, info.Servers)
			}
		}
		_ = al.Unlock(ctx)
		b.Close()
		a.Close()
		for _, rc := range append(aClients, bClients...) {
			rc.Close()
		}
	}
	mode := "without persistence"
	if fsync {
		mode = "appendfsync always"
	}
	t.Logf("%d servers, %s, guard %v: %d trials in %v (%v waiting for servers to count): B granted while A held %d, refused %d, inconclusive %d; A extended on the restarted server %d",
		n, mode, guard, trials, time.Since(start).Round(time.Millisecond), waited.Round(time.Millisecond), doubles, refused, inconclusive, extended)
	if firstRefusal != "" {
		t.Logf("first refusal: %s", firstRefusal)
	}
	if firstDouble != "" {
		t.Logf("first double grant: %s", firstDouble)
	}
	if inconclusive > trials/10 {
		t.Errorf("%d of %d trials inconclusive (A's lease of %v ended before B asked)", inconclusive, trials, ttl)
	}
	if guard {
		if doubles > 0 {
			t.Errorf("B was granted the lock while A held it in %d of %d trials", doubles, trials)
		}
		if fsync && extended < trials {
			t.Errorf("A's Extend confirmed on the restarted server in %d of %d trials", extended, trials)
		}
	} else if doubles == 0 {
		t.Errorf("without the restart guard B was never granted the lock while A held it (%d trials): the trials do not test the guard", trials)
	}
}

// restartQuorum is a quorum Client whose leases (ttl) are its longest
// (WithMaxTTL); guard false turns the restart guard off.
func restartQuorum(t *testing.T, clients []redis.UniversalClient, ttl time.Duration, guard bool) *locks.Client {
	t.Helper()
	c, err := locks.NewQuorum(clients, locks.WithTTL(ttl), locks.WithMaxTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	if !guard {
		locks.CountEveryServer(c)
	}
	return c
}

// restartClient is a fast-failing go-redis client, as quorumServers makes.
func restartClient(t *testing.T, addr string) *redis.Client {
	o := faultRedisOptions(addr)
	o.MaxRetries = 1
	o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	o.DialerRetries = 1
	return redis.NewClient(o)
}

// deadAddrs returns n distinct loopback addresses where nothing listens:
// the ports are held open together, so that the kernel hands out n
// different ones (one at a time, it may hand out the same port again),
// then closed.
func deadAddrs(t *testing.T, n int) []string {
	var addrs []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}
