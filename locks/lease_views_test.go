package locks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// When a lease ends, its views agree at every instant: whoever sees Done
// closed also sees Err, every context of Lease.Context and every context
// derived from those cancelled, and the local Deadline passed. Many short
// leases end on the expiry timer of a virtual clock (so they end exactly
// when the test advances it, however busy the machine), while watchers
// spin on each lease's Done channel and look at the other views the moment
// it closes; a lease whose Done closed before its contexts were cancelled
// shows up as a context with a nil Err.
func TestLeaseViewsAgreeWhenTheLeaseEnds(t *testing.T) {
	const (
		rounds   = 120
		perRound = 48
		ttl      = 20 * time.Millisecond
	)
	clock := simulate.NewVirtualClock(time.Unix(1_700_000_000, 0))
	srv := simulate.New(simulate.WithClock(clock))
	c, err := locks.NewWithBackend(srv, locks.WithClock(clock), locks.WithTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := timeout(t, time.Minute)

	var mu sync.Mutex
	var bad []string
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(bad) < 5 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	checked := 0
	for round := 0; round < rounds; round++ {
		var watchers sync.WaitGroup
		for i := 0; i < perRound; i++ {
			l, err := mutex(t, c, fmt.Sprintf("views-%d-%d", round, i)).TryLock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lctx, cancel := l.Context(context.Background())
			defer cancel()
			child, cancelChild := context.WithCancel(lctx)
			defer cancelChild()
			done := l.Done()
			watchers.Add(1)
			go func() {
				defer watchers.Done()
				// Spin (bounded) so that the watcher looks the moment Done
				// closes, then block.
				for spin := 0; spin < 200_000; spin++ {
					select {
					case <-done:
						spin = 200_000
					default:
						runtime.Gosched()
						continue
					}
				}
				<-done
				// The plain child's Err does not look at the lease: it is
				// exactly what the lease's cancellation has reached.
				if child.Err() == nil {
					report("%s: Done closed while a context derived from Lease.Context had a nil Err", l.Name())
				}
				if lctx.Err() == nil {
					report("%s: Done closed while Lease.Context's Err was nil", l.Name())
				}
				if cause := context.Cause(lctx); !errors.Is(cause, locks.ErrLockLost) {
					report("%s: Lease.Context's cause is %v, want ErrLockLost", l.Name(), cause)
				}
				if err := l.Err(); !errors.Is(err, locks.ErrLockLost) {
					report("%s: Done closed while Err is %v, want ErrLockLost", l.Name(), err)
				}
				if clock.Now().Before(l.Deadline()) {
					report("%s: Done closed at %v, before the Deadline %v", l.Name(), clock.Now(), l.Deadline())
				}
			}()
		}
		// The leases end inside Advance, on this goroutine, at the expiry
		// timer's moment.
		clock.Advance(ttl)
		watchers.Wait()
		checked += perRound
	}
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("%d leases ended on the expiry timer; views that disagreed: %d", checked, len(bad))
}

// WithWatchdog refuses a fraction that leaves no time to renew before the
// lease's local deadline, naming the bound; the bound itself is accepted
// and its renewals keep the lease.
func TestWatchdogFractionLeavesTimeToRenew(t *testing.T) {
	srv := simulate.New()
	for _, tc := range []struct {
		ttl      time.Duration
		fraction float64
		bound    string
	}{
		{30 * time.Second, 0.999999, "at most 0.9399"},
		{time.Second, 0.95, "at most 0.9380"},
		{10 * time.Millisecond, 1.0 / 3, "at most 0.2900"},
	} {
		_, err := locks.NewWithBackend(srv, locks.WithTTL(tc.ttl), locks.WithWatchdog(tc.fraction))
		if err == nil || !strings.Contains(err.Error(), "leaves no time to renew") || !strings.Contains(err.Error(), tc.bound) {
			t.Errorf("Client with TTL %v, WithWatchdog(%v) = %v, want it refused naming the bound (%s)", tc.ttl, tc.fraction, err, tc.bound)
		}
		c, err := locks.NewWithBackend(srv)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Mutex("w", locks.WithTTL(tc.ttl), locks.WithWatchdog(tc.fraction)); err == nil || !strings.Contains(err.Error(), tc.bound) {
			t.Errorf("Mutex with TTL %v, WithWatchdog(%v) = %v, want it refused naming the bound (%s)", tc.ttl, tc.fraction, err, tc.bound)
		}
		c.Close()
	}

	// 0.93 is within the bound at a 1 s TTL: on a virtual clock the
	// watchdog renews before the local deadline, lease after lease.
	clock := simulate.NewVirtualClock(time.Unix(1_700_000_000, 0))
	vsrv := simulate.New(simulate.WithClock(clock))
	c, err := locks.NewWithBackend(vsrv, locks.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := mutex(t, c, "renewed", locks.WithTTL(time.Second), locks.WithWatchdog(0.93)).TryLock(timeout(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 100; step++ {
		clock.Advance(50 * time.Millisecond)
	}
	if err := l.Err(); err != nil {
		t.Fatalf("a lease renewed every 0.93 of its TTL was lost after 5 TTLs: %v", err)
	}
}

// NewQuorum refuses the same server twice: the same go-redis client, two
// clients of one address and database, the same backend. Two databases of
// one address are refused by nothing here (they are still one server's
// fate, which the documentation says).
func TestNewQuorumRefusesDuplicateServers(t *testing.T) {
	a := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	b := redis.NewClient(&redis.Options{Addr: "127.0.0.1:2"})
	aAgain := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	aDB1 := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DB: 1})
	c3 := redis.NewClient(&redis.Options{Addr: "127.0.0.1:3"})
	for _, rc := range []*redis.Client{a, b, aAgain, aDB1, c3} {
		defer rc.Close()
	}
	for _, tc := range []struct {
		name    string
		clients []redis.UniversalClient
		servers string
	}{
		{"one client three times", []redis.UniversalClient{a, a, a}, "servers 1 and 2"},
		{"two clients of one address", []redis.UniversalClient{a, b, aAgain}, "servers 1 and 3"},
	} {
		c, err := locks.NewQuorum(tc.clients)
		if err == nil {
			c.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.servers) || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("%s: NewQuorum = %v, want it refused naming %s and the address", tc.name, err, tc.servers)
		}
	}
	c, err := locks.NewQuorum([]redis.UniversalClient{a, aDB1, c3})
	if err != nil {
		t.Errorf("NewQuorum over three address/database pairs = %v", err)
	} else {
		c.Close()
	}
	s := simulate.New()
	if _, err := locks.NewQuorumWithBackends([]locks.Backend{s, simulate.New(), s}); err == nil || !strings.Contains(err.Error(), "servers 1 and 3") {
		t.Errorf("NewQuorumWithBackends with one backend twice = %v, want it refused", err)
	}
}

// A resumed lease whose owner never held the lock finds it not held
// (ErrNotHeld), not lost: on a free lock, on a lock another owner holds
// (the made-up owner copied a real lease's token), on one server and on a
// quorum. A resumed lease of the real holder still releases it.
func TestResumedLeaseThatNeverHeld(t *testing.T) {
	ctx := timeout(t, 30*time.Second)
	servers, _ := virtualServers(3)
	single, err := locks.NewWithBackend(servers[0], locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	quorum := quorumOf(t, servers[0], servers[1], servers[2])
	for _, c := range []struct {
		name string
		c    *locks.Client
	}{{"one server", single}, {"quorum", quorum}} {
		t.Run(c.name, func(t *testing.T) {
			name := "resumed-" + strings.ReplaceAll(c.name, " ", "-")
			held, err := mutex(t, c.c, name).TryLock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := held.Marshal()
			forged := withOwner(t, s, "never-held-it")
			for _, call := range []string{"Unlock", "Extend"} {
				r, err := c.c.Resume(forged)
				if err != nil {
					t.Fatal(err)
				}
				if call == "Unlock" {
					err = r.Unlock(ctx)
				} else {
					err = r.Extend(ctx, 0)
				}
				if !errors.Is(err, locks.ErrNotHeld) || errors.Is(err, locks.ErrLockLost) {
					t.Errorf("%s of a resumed lease whose owner never held the (held) lock = %v, want ErrNotHeld", call, err)
				}
				if !errors.Is(r.Err(), locks.ErrNotHeld) {
					t.Errorf("after that %s the lease's Err is %v, want ErrNotHeld", call, r.Err())
				}
			}
			if r, err := c.c.Resume(s); err != nil {
				t.Fatal(err)
			} else if err := r.Unlock(ctx); err != nil {
				t.Fatalf("Unlock of the holder's own resumed lease = %v", err)
			}
			// The lock is free now.
			r, err := c.c.Resume(forged)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Unlock(ctx); !errors.Is(err, locks.ErrNotHeld) || errors.Is(err, locks.ErrLockLost) {
				t.Errorf("Unlock of a resumed lease whose owner never held the (free) lock = %v, want ErrNotHeld", err)
			}
		})
	}
}

// withOwner returns the marshalled lease s with another owner.
func withOwner(t *testing.T, s, owner string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	m["owner"] = owner
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A quorum Unlock retried after one that could not release (its releases
// landed, but their answers were lost) tries again,
// and reports what it found (the lock released: nil), not the first
// call's stored failure.
func TestQuorumUnlockRetriedAfterFailed(t *testing.T) {
	ctx := timeout(t, 30*time.Second)
	servers, _ := virtualServers(3)
	for trial := 0; trial < 5; trial++ {
		gate := make(chan struct{})
		c, err := locks.NewQuorumWithBackends([]locks.Backend{
			gatedRelease{servers[0], gate}, gatedRelease{servers[1], gate}, gatedRelease{servers[2], gate},
		}, locks.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		l, err := mutex(t, c, "retried").TryLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		first := l.Unlock(ctx)
		if !errors.Is(first, locks.ErrNotReleased) || !errors.Is(first, locks.ErrLockLost) {
			t.Fatalf("trial %d: Unlock whose releases' answers were lost = %v, want ErrNotReleased and ErrLockLost", trial, first)
		}
		close(gate) // the first call's releases land, before or after the retry's
		if err := l.Unlock(ctx); err != nil {
			t.Fatalf("trial %d: Unlock retried after one that failed (%v) = %v, want nil", trial, first, err)
		}
		if !errors.Is(l.Err(), locks.ErrNotHeld) {
			t.Fatalf("trial %d: after the retried Unlock the lease's Err is %v, want ErrNotHeld (unlocked)", trial, l.Err())
		}
		c.Close() // waits for the first call's releases still on their way
	}
}

// gatedRelease answers every release script with an error at once, as a
// broken connection would, and runs it once gate is closed: a release
// that reached the server, and whose answer was lost.
type gatedRelease struct {
	locks.Backend
	gate chan struct{}
}

func (g gatedRelease) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if !strings.Contains(s.Name, "release") {
		return g.Backend.Run(ctx, s, keys, args...)
	}
	select {
	case <-g.gate:
		return g.Backend.Run(ctx, s, keys, args...)
	default:
	}
	go func() {
		<-g.gate
		g.Backend.Run(context.WithoutCancel(ctx), s, keys, args...)
	}()
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(errors.New("connection reset"))
	return cmd
}

// WithMaxTTL bounds every lease of the Client: a lock with a longer TTL
// and an Extend for longer are refused, naming the bound; it is given to
// the Client only. A quorum Client without it bounds leases by
// DefaultQuorumMaxTTL.
func TestMaxTTLBoundsLeases(t *testing.T) {
	ctx := timeout(t, 10*time.Second)
	c, err := locks.NewWithBackend(simulate.New(), locks.WithMaxTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Mutex("long", locks.WithTTL(2*time.Minute)); err == nil || !strings.Contains(err.Error(), "WithMaxTTL(1m0s)") {
		t.Errorf("a Mutex with a TTL beyond WithMaxTTL = %v, want it refused naming the bound", err)
	}
	if _, err := c.Mutex("m", locks.WithMaxTTL(time.Hour)); err == nil || !strings.Contains(err.Error(), "WithMaxTTL does not apply") {
		t.Errorf("WithMaxTTL on a Mutex = %v, want it refused (Client only)", err)
	}
	l, err := mutex(t, c, "extended").TryLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(ctx, 2*time.Minute); err == nil || !strings.Contains(err.Error(), "WithMaxTTL(1m0s)") {
		t.Errorf("Extend beyond WithMaxTTL = %v, want it refused naming the bound", err)
	}
	if err := l.Extend(ctx, time.Minute); err != nil {
		t.Errorf("Extend to the bound = %v", err)
	}
	if _, err := locks.NewWithBackend(simulate.New(), locks.WithMaxTTL(time.Millisecond)); err == nil || !strings.Contains(err.Error(), "WithMaxTTL(1ms)") {
		t.Errorf("WithMaxTTL(1ms) = %v, want it refused", err)
	}

	if _, err := locks.NewQuorumWithBackends([]locks.Backend{simulate.New(), simulate.New(), simulate.New()}, locks.WithTTL(2*time.Minute)); err == nil || !strings.Contains(err.Error(), "WithMaxTTL") {
		t.Errorf("a quorum Client with a TTL beyond DefaultQuorumMaxTTL = %v, want it refused naming WithMaxTTL", err)
	}
	q, err := locks.NewQuorumWithBackends([]locks.Backend{simulate.New(), simulate.New(), simulate.New()}, locks.WithTTL(2*time.Minute), locks.WithMaxTTL(2*time.Minute))
	if err != nil {
		t.Fatalf("a quorum Client with WithMaxTTL covering its TTL = %v", err)
	}
	q.Close()
}
