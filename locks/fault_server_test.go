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

	"github.com/redlua/redlua/internal/faultproxy"
	"github.com/redlua/redlua/internal/faulttest"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// A restart that loses data (no persistence) and one that keeps it
// (appendonly yes + appendfsync always): the first token after the restart
// must be greater than every token issued before it, so a fenced resource
// keeps accepting the new holders and refusing the old one.
func TestFaultRestartTokensKeepGrowing(t *testing.T) {
	mostlyWaits(t)
	cases := []struct {
		name string
		args []string
	}{
		{"no persistence", nil},
		{"appendonly always", []string{"--appendonly", "yes", "--appendfsync", "always"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Standalone(t, redistest.WithArgs(tc.args...))
			ctx := context.Background()
			const ttl = time.Second
			resource := faulttest.NewFencedResource(t)
			_, c := faultClient(t, srv.Addr)
			var oracle holderOracle
			oracle.set(c, "restarted")
			resource.SetIsHolder(oracle.isHolder)
			m, _ := c.Mutex("restarted", locks.WithTTL(ttl))
			var before int64
			for i := 0; i < 20; i++ {
				l, err := m.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				before = max(before, l.Token())
				_ = resource.WriteChecked(l.Token(), l.Owner())
				if err := l.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// The last holder keeps its lease (no watchdog) across the restart.
			old, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			before = max(before, old.Token())
			_ = resource.WriteChecked(old.Token(), old.Owner())

			srv.Restart(t)
			restarted := time.Now()

			_, c2 := faultClient(t, srv.Addr)
			m2, _ := c2.Mutex("restarted", locks.WithTTL(ttl))
			lctx, cancel := context.WithTimeout(ctx, 5*ttl)
			next, err := m2.Lock(lctx)
			cancel()
			if err != nil {
				t.Fatalf("locking after the restart: %v", err)
			}
			acquiredAfter := time.Since(restarted)
			oracle.set(c2, "restarted")
			newErr := resource.WriteChecked(next.Token(), next.Owner())
			// Until its lease runs out locally, the old holder believes it holds.
			oldBelieves := time.Duration(0)
			if old.Err() == nil {
				oldBelieves = time.Until(old.Deadline())
				_ = resource.WriteChecked(old.Token(), old.Owner())
			}
			fence := resource.Stats()
			t.Logf("%s: 21 tokens before the restart (highest %d); first token after: %d, acquired %v after the restart; the old holder (no watchdog) believed it held for %v more beside the new holder; fence: %v",
				tc.name, before, next.Token(), acquiredAfter.Round(time.Millisecond), oldBelieves.Round(time.Millisecond), fence)
			_ = next.Unlock(ctx)
			if next.Token() <= before {
				t.Errorf("the first token after the restart, %d, is not above %d, the highest before", next.Token(), before)
			}
			if newErr != nil || fence.LegitRefused > 0 || fence.StaleAccepted > 0 {
				t.Errorf("fenced resource after the restart: new holder's write %v; %v", newErr, fence)
			}
		})
	}
}

// The server freezes (SIGSTOP) for 2 s while a holder renews and others'
// Lock calls time out. Acquire scripts those calls sent still sit in the
// server and run on resume; an acquisition whose caller gave up must be
// undone when the server resumes, not left to run out with its lease: no
// such ghost hold may be seen half a TTL after resume.
//
// Why half a TTL and not less: during the freeze a retried undo cannot even
// open a connection (go-redis's handshake on a new connection times out), so
// it reaches the resumed server at its next retry, every 50 ms; on a busy
// machine ghosts were seen 30-80 ms after resume, one handing the lock on
// to another waiter that had given up. An undo that never arrives leaves the
// ghost for its whole lease (TTL), twice the bound.
//
// Two client settings: go-redis timing out reads after 200 ms (before the
// Lock call's 300 ms context), and after 1 s (go-redis ignores the context
// deadline by default, so the call returns only then).
func TestFaultServerFreezeNoGhostHolds(t *testing.T) {
	mostlyWaits(t)
	for _, readTimeout := range []time.Duration{200 * time.Millisecond, time.Second} {
		t.Run("ReadTimeout="+readTimeout.String(), func(t *testing.T) {
			// With a 1 s read timeout, longer than the Lock's context, main
			// 6bf5cbf left a ghost hold of a whole TTL (1.0 s) after the server
			// resumed: the undo never reached the frozen server. The undo is
			// now retried until it does.
			serverFreezeGhosts(t, readTimeout)
		})
	}
}

func serverFreezeGhosts(t *testing.T, readTimeout time.Duration) {
	const ttl = time.Second
	const name = "frozen-server"
	srv := redistest.Standalone(t)
	ctx := context.Background()
	client := func() *locks.Client {
		o := faultRedisOptions(srv.Addr)
		o.ReadTimeout, o.WriteTimeout = readTimeout, readTimeout
		rc := redis.NewClient(o)
		c, err := locks.New(rc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); rc.Close() })
		return c
	}
	monitor := monitorHolders(t, srv.Addr, "{"+name+"}")
	hc := client()
	hm, _ := hc.Mutex(name, locks.WithTTL(ttl), locks.WithWatchdog(0))
	holder, err := hm.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Owners whose Lock gave up: a hold by one of them is a ghost.
	var mu sync.Mutex
	abandoned := map[string]bool{}
	var resumed atomic.Bool
	var wg sync.WaitGroup
	calls, timeouts := atomic.Int64{}, atomic.Int64{}
	for w := 0; w < 3; w++ {
		wc := client()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100 && !resumed.Load(); i++ {
				owner := fmt.Sprintf("waiter-%d-%d", w, i)
				m, _ := wc.Mutex(name, locks.WithTTL(ttl), locks.WithOwner(owner))
				lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				l, err := m.Lock(lctx)
				cancel()
				calls.Add(1)
				if err != nil {
					timeouts.Add(1)
					mu.Lock()
					abandoned[owner] = true
					mu.Unlock()
					continue
				}
				_ = l.Unlock(ctx) // a real acquisition (before the freeze or after resume)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	srv.Pause()
	time.Sleep(2 * time.Second)
	resumed.Store(true)
	srv.Resume()
	resumedAt := time.Now()
	// The server's time just after it resumed: ghost holds are placed
	// against it (an acquisition that waited in its buffers runs first).
	tc := redis.NewClient(faultRedisOptions(srv.Addr))
	resumedServer, err := tc.Time(ctx).Result()
	tc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var holderDone time.Duration
	select {
	case <-holder.Done():
		holderDone = -1 // closed during the freeze
	default:
	}

	// Watch the lock: how long after resume is it held by an abandoned owner?
	// A ghost counts from when the Inspect that saw it was sent (the server
	// saw it then or later), so a slow reply does not lengthen it.
	_, ic := faultClient(t, srv.Addr)
	var lastGhost time.Duration
	ghostSeen := ""
	for i := 0; i < 5000 && time.Since(resumedAt) < 5*time.Second; i++ {
		asked := time.Since(resumedAt)
		info, err := ic.Inspect(ctx, name)
		if err != nil {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		mu.Lock()
		ghost := info.Held && abandoned[info.Owner]
		mu.Unlock()
		if ghost {
			lastGhost, ghostSeen = asked, info.Owner
		} else if !info.Held && time.Since(resumedAt) > 100*time.Millisecond {
			break
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	// The server's own log of the lock's owners: a hold by an owner whose
	// Lock gave up is a ghost, and it lasts from the script that took the
	// lock to the one that freed it (or its lease's end), both timed by the
	// server. 2x the drift margin is what the issue allows; the undo is sent
	// before the server resumes (tries stay in flight), so it runs right
	// behind the late acquisition, as fast as the server works through the
	// commands that waited for it. Under the race detector with two CPU
	// hogs, server and clients share the cores with five times the work:
	// ghosts taken in that backlog lasted 10-39 ms, so there the bound is
	// ten times wider (still a quarter of the whole-TTL ghost that a
	// missing undo leaves).
	bound := 2 * (ttl/100 + 2*time.Millisecond) // 2 x locks' drift margin for ttl
	if raceDetector() {
		bound *= 10
	}
	var ghosts int
	var longest, longestAt time.Duration
	var longestOwner string
	mu.Lock()
	sawHolder := false
	for _, h := range holds(monitor.stop()) {
		sawHolder = sawHolder || h.owner == holder.Owner()
		if abandoned[h.owner] {
			ghosts++
			if d := h.until - h.from; d > longest {
				longest, longestOwner = d, h.owner
				longestAt = h.from - time.Duration(resumedServer.UnixNano())
			}
		}
	}
	mu.Unlock()
	t.Logf("server frozen 2s, TTL %v: %d Lock calls, %d gave up; holder's Done closed during the freeze: %v (Err %v); "+
		"%d ghost holds, the longest %v by server time (owner %q, taken %v after the server's first reply after resume); an Inspect sent %v after resume saw the last one (owner %q); bound %v",
		ttl, calls.Load(), timeouts.Load(), holderDone < 0, holder.Err(), ghosts, longest.Round(10*time.Microsecond), longestOwner, longestAt.Round(10*time.Microsecond),
		lastGhost.Round(time.Millisecond), ghostSeen, bound)
	if !sawHolder {
		t.Errorf("MONITOR showed no hold by the first holder %q: the monitor does not read the lock's records", holder.Owner())
	}
	if !errors.Is(holder.Err(), locks.ErrLockLost) {
		t.Errorf("the holder's lease survived a 2s freeze with TTL %v: Err = %v", ttl, holder.Err())
	}
	if longest > bound {
		t.Errorf("a ghost hold by %s lasted %v by the server's clock, above the bound (%v): its undo did not follow the late acquisition", longestOwner, longest, bound)
	}
}

// One client's connection is black-holed (an in-test proxy holds every
// byte) for 2×TTL while it holds the lock with a watchdog and another client
// waits: the holder's Done must close before the other gets the lock.
//
// With go-redis's default (ContextTimeoutEnabled off) a renewal in flight
// ignores its context deadline and waits for ReadTimeout: unless the lease
// closes Done at its local deadline by itself, the holder is told late.
func TestFaultBlackHoledHolderLosesFirst(t *testing.T) {
	mostlyWaits(t)
	for _, ctxTimeouts := range []bool{true, false} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", ctxTimeouts), func(t *testing.T) {
			blackHoleTrials(t, ctxTimeouts)
		})
	}
}

func blackHoleTrials(t *testing.T, ctxTimeouts bool) {
	const ttl = 500 * time.Millisecond
	const trials = 3
	srv := redistest.Standalone(t)
	proxy := faultproxy.New(t, srv.Addr)
	ctx := context.Background()
	for i := 0; i < trials; i++ {
		name := fmt.Sprintf("black-holed:%d", i)
		resource := faulttest.NewFencedResource(t)
		ropts := faultRedisOptions(proxy.Addr)
		ropts.ContextTimeoutEnabled = ctxTimeouts
		arc := redis.NewClient(ropts)
		t.Cleanup(func() { arc.Close() })
		ac, err := locks.New(arc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ac.Close() })
		am, _ := ac.Mutex(name, locks.WithTTL(ttl), locks.WithWatchdog(0))
		a, err := am.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = resource.WriteChecked(a.Token(), a.Owner())
		doneAt := make(chan time.Time, 1)
		go func() { <-a.Done(); doneAt <- time.Now() }()

		proxy.BlackHole(2 * ttl)
		holed := time.Now()
		_, bc := faultClient(t, srv.Addr)
		bm, _ := bc.Mutex(name, locks.WithTTL(ttl))
		lctx, cancel := context.WithTimeout(ctx, 10*ttl)
		b, err := bm.Lock(lctx)
		cancel()
		if err != nil {
			t.Fatalf("trial %d: the other client did not get the lock: %v", i, err)
		}
		bAt := time.Now()
		// The first look after the takeover must already say the lease is
		// gone (a timer that has not fired yet is no excuse).
		aErrAtTakeover := a.Err()
		aDoneAtTakeover := false
		select {
		case <-a.Done():
			aDoneAtTakeover = true
		default:
		}
		bErr := resource.WriteChecked(b.Token(), b.Owner())
		var aDone time.Time
		select {
		case aDone = <-doneAt:
		case <-time.After(10 * ttl):
			t.Fatalf("trial %d: the black-holed holder was never told", i)
		}
		staleErr := resource.WriteChecked(a.Token(), a.Owner())
		t.Logf("trial %d: black-hole %v, TTL %v: holder's Done closed %v after the black-hole began, %v before the other client got the lock (as its goroutine saw it) (Err %v); new holder's write %v, stale write refused: %v",
			i, 2*ttl, ttl, aDone.Sub(holed).Round(time.Millisecond), bAt.Sub(aDone).Round(time.Millisecond), a.Err(), bErr, errors.Is(staleErr, faulttest.ErrStale))
		if !errors.Is(aErrAtTakeover, locks.ErrLockLost) || !aDoneAtTakeover {
			t.Errorf("trial %d: when the other client got the lock, the black-holed holder's lease said Err=%v, Done closed=%v; want ErrLockLost and closed",
				i, aErrAtTakeover, aDoneAtTakeover)
		}
		if !errors.Is(staleErr, faulttest.ErrStale) || bErr != nil {
			t.Errorf("trial %d: fence: new holder's write %v, stale write %v", i, bErr, staleErr)
		}
		_ = b.Unlock(ctx)
		waitUntil(t, 10*time.Second, "the black-hole lifted", func() bool { return time.Since(holed) > 2*ttl })
	}
}
