package locks_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/simulate"
)

// virtualServers are n simulators, each with its own virtual clock, as
// independent primaries have.
func virtualServers(n int) ([]*simulate.Server, []*simulate.VirtualClock) {
	servers, clocks := make([]*simulate.Server, n), make([]*simulate.VirtualClock, n)
	for i := range servers {
		clocks[i] = simulate.NewVirtualClock(time.Now())
		servers[i] = simulate.New(simulate.WithClock(clocks[i]))
	}
	return servers, clocks
}

// quorumOf is a quorum Client with a one-minute TTL on backends.
func quorumOf(t *testing.T, backends ...locks.Backend) *locks.Client {
	t.Helper()
	c, err := locks.NewQuorumWithBackends(backends, locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// holdOn takes name on one server alone, as a plain Client of that server
// would (the quorum's minority, or a stray hold).
func holdOn(t *testing.T, srv *simulate.Server, name string) *locks.Lease {
	t.Helper()
	c, err := locks.NewWithBackend(srv, locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	l, err := mutex(t, c, name).TryLock(timeout(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Inspect on a quorum Client reports the quorum's view: who holds a
// majority, until when, and every server's own report. Operators asking
// "who holds it?" of a Redlock otherwise see one server's answer, which a
// minority hold or a down server makes wrong.
func TestQuorumInspect(t *testing.T) {
	ctx := timeout(t, 30*time.Second)

	t.Run("held by a majority", func(t *testing.T) {
		servers, clocks := virtualServers(3)
		qc := quorumOf(t, servers[0], servers[1], servers[2])
		m := mutex(t, qc, "report")
		l, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Lock returned on a majority; the third acquisition lands after.
		poll(t, "the hold on every server", 10*time.Second, nil, func() bool {
			info, err := qc.Inspect(ctx, "report")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range info.Servers {
				if s.Info.Owner != l.Owner() {
					return false
				}
			}
			return true
		})
		// The servers' leases run out at different times: 30, 50 and 60 s
		// from now. The hold keeps a majority until the second longest ends.
		clocks[0].Advance(30 * time.Second)
		clocks[1].Advance(10 * time.Second)
		info, err := qc.Inspect(ctx, "report")
		if err != nil {
			t.Fatal(err)
		}
		if !info.Held || info.Owner != l.Owner() || info.Kind != "mutex" {
			t.Fatalf("Inspect = held %v owner %q kind %q, want held by %q, a mutex", info.Held, info.Owner, info.Kind, l.Owner())
		}
		// The lease carries the largest token of the majority that answered
		// its Lock first; Inspect, the largest of all.
		largest := int64(0)
		for _, s := range info.Servers {
			largest = max(largest, s.Info.Token)
		}
		if info.Token != largest || info.Token < l.Token() {
			t.Fatalf("Token = %d, want the servers' largest %d (the lease has %d)", info.Token, largest, l.Token())
		}
		if info.TTL <= 45*time.Second || info.TTL > 50*time.Second {
			t.Fatalf("TTL = %v, want the second longest of the servers' leases (50s): a majority holds it until then", info.TTL)
		}
		if len(info.Servers) != 3 {
			t.Fatalf("Servers = %+v, want 3 reports", info.Servers)
		}
		for i, s := range info.Servers {
			if s.Server != i+1 || s.Err != nil || s.Info.Owner != l.Owner() {
				t.Fatalf("server %d: %+v, want it held by %q", i+1, s, l.Owner())
			}
		}
	})

	t.Run("held with a server down", func(t *testing.T) {
		servers, _ := virtualServers(2)
		qc := quorumOf(t, servers[0], deadBackend{simulate.New()}, servers[1])
		m := mutex(t, qc, "one-down")
		l, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		info, err := qc.Inspect(ctx, "one-down")
		if err != nil {
			t.Fatalf("Inspect = %v, want the two answering servers' majority to decide", err)
		}
		if !info.Held || info.Owner != l.Owner() {
			t.Fatalf("Inspect = held %v owner %q, want held by %q", info.Held, info.Owner, l.Owner())
		}
		if s := info.Servers[1]; s.Err == nil || !strings.Contains(s.Err.Error(), "connection refused") {
			t.Fatalf("server 2 = %+v, want its error", s)
		}
	})

	t.Run("a minority hold is not held", func(t *testing.T) {
		servers, _ := virtualServers(3)
		stray := holdOn(t, servers[2], "minority")
		qc := quorumOf(t, servers[0], servers[1], servers[2])
		m := mutex(t, qc, "minority")
		info, err := qc.Inspect(ctx, "minority")
		if err != nil {
			t.Fatal(err)
		}
		if info.Held || info.Owner != "" {
			t.Fatalf("Inspect = held %v owner %q, want free: one of three servers is no majority", info.Held, info.Owner)
		}
		if s := info.Servers[2]; !s.Info.Held || s.Info.Owner != stray.Owner() {
			t.Fatalf("server 3 = %+v, want its hold by %q reported", s, stray.Owner())
		}
		// And the next Lock indeed takes it, on the two free servers.
		if _, err := m.TryLock(ctx); err != nil {
			t.Fatalf("TryLock = %v, want the majority of free servers to grant it", err)
		}
	})

	t.Run("undecided", func(t *testing.T) {
		servers, _ := virtualServers(2)
		stray := holdOn(t, servers[0], "undecided")
		qc := quorumOf(t, servers[0], servers[1], deadBackend{simulate.New()})
		// Server 1 holds it, server 2 does not, server 3 is down: whether it
		// is held depends on server 3.
		info, err := qc.Inspect(ctx, "undecided")
		if !errors.Is(err, locks.ErrNoQuorum) || !strings.Contains(err.Error(), "server 3") {
			t.Fatalf("Inspect = %v, want ErrNoQuorum naming server 3", err)
		}
		if info.Held || len(info.Servers) != 3 || info.Servers[0].Info.Owner != stray.Owner() || info.Servers[2].Err == nil {
			t.Fatalf("Inspect = %+v, want not held, with every server's report", info)
		}
		// Both servers free and one down: free, whatever server 3 holds.
		if err := stray.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if info, err := qc.Inspect(ctx, "undecided"); err != nil || info.Held {
			t.Fatalf("Inspect = %+v, %v; want free: two free servers of three leave no owner a majority", info, err)
		}
	})
}

// ForceUnlock on a quorum Client frees the name on every server it can
// reach, and succeeds when that is a majority: a down server (here the
// first) must not stop it from freeing the others, or the name stays
// taken until the lease runs out although the operator freed it.
func TestQuorumForceUnlock(t *testing.T) {
	ctx := timeout(t, 30*time.Second)
	servers, _ := virtualServers(2)
	qc := quorumOf(t, deadBackend{simulate.New()}, servers[0], servers[1])
	m := mutex(t, qc, "stuck")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := qc.ForceUnlock(ctx, "stuck", locks.WithGrace(0))
	if err != nil || !removed {
		t.Fatalf("ForceUnlock = %v, %v; want the holder removed on the two live servers", removed, err)
	}
	nextC := quorumOf(t, deadBackend{simulate.New()}, servers[0], servers[1])
	next := mutex(t, nextC, "stuck")
	l2, err := next.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock after ForceUnlock = %v, want the name free", err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, locks.ErrLockLost) {
		t.Fatalf("the removed holder's Unlock = %v, want ErrLockLost", err)
	}
	if err := l2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// With a grace period the name stays taken on the majority until the
	// revoked holder's Unlock confirms that it stopped.
	l3, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if revoked, err := qc.ForceUnlock(ctx, "stuck", locks.WithGrace(time.Minute)); err != nil || !revoked {
		t.Fatalf("ForceUnlock with a grace = %v, %v; want the holder revoked", revoked, err)
	}
	if _, err := next.TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatalf("TryLock before the revoked holder's Unlock = %v, want ErrNotAcquired", err)
	}
	_ = l3.Unlock(ctx) // the confirmation; a quorum lease was not told, so it may return nil
	l4, err := next.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock after the revoked holder's Unlock = %v, want the name free", err)
	}
	if err := l4.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// Two of three down: the one live server is freed, and the error says
	// that is no majority, naming the others.
	loneC := quorumOf(t, servers[0], deadBackend{simulate.New()}, deadBackend{simulate.New()})
	holdOn(t, servers[0], "alone")
	removed, err = loneC.ForceUnlock(ctx, "alone")
	if !errors.Is(err, locks.ErrNoQuorum) || !removed || !strings.Contains(err.Error(), "server 2") || !strings.Contains(err.Error(), "server 3") {
		t.Fatalf("ForceUnlock = %v, %v; want removed on server 1 and ErrNoQuorum naming servers 2 and 3", removed, err)
	}
}
