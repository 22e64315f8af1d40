package locks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/faulttest"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// A holder process frozen (SIGSTOP) for 2×TTL while another process takes
// the lock: after SIGCONT, the first look at its lease must already say
// ErrLockLost (its deadline passed while it was frozen, whether or not a
// timer or the watchdog ran since), and its stale write must be refused.
func TestFaultFrozenHolderSeesLossAtFirstCheck(t *testing.T) {
	mostlyWaits(t)
	const ttl = 500 * time.Millisecond
	const trials = 3
	srv := redistest.Standalone(t)
	for _, watchdog := range []bool{false, true} {
		mode := "no watchdog"
		var extra []string
		if watchdog {
			mode, extra = "watchdog", []string{envWatchdog + "=1"}
		}
		t.Run(mode, func(t *testing.T) {
			said, staleRefused := 0, 0
			for i := 0; i < trials; i++ {
				name := "frozen-holder:" + strings.ReplaceAll(mode, " ", "-") + ":" + string(rune('a'+i))
				resource := faulttest.NewFencedResource(t)
				w := faulttest.StartWorker(t, "TestFaultHelperWorker", "holder", workerEnv(srv.Addr, name, ttl, resource.Addr, extra...)...)
				held := w.Next("held", 30*time.Second)
				w.Freeze()
				frozenAt := time.Now()
				// Another process takes the lock once the frozen lease runs out.
				_, other := faultClient(t, srv.Addr)
				m, _ := other.Mutex(name, locks.WithTTL(10*time.Second))
				ctx, cancel := context.WithTimeout(context.Background(), 10*ttl)
				l, err := m.Lock(ctx)
				cancel()
				if err != nil {
					w.Thaw()
					t.Fatalf("trial %d: taking the lock from the frozen holder: %v", i, err)
				}
				if err := resource.WriteChecked(l.Token(), l.Owner()); err != nil {
					t.Errorf("trial %d: the new holder's write was refused: %v", i, err)
				}
				time.Sleep(time.Until(frozenAt.Add(2 * ttl)))
				w.Thaw()
				w.Send("check")
				got := w.Next("checked", 30*time.Second)
				wrote := w.Next("wrote", 30*time.Second)
				if got.N == 1 {
					said++
				} else {
					t.Errorf("trial %d: frozen for %v (TTL %v), the holder's first check said Err=%q (%s), want ErrLockLost; the other holder took the lock meanwhile",
						i, 2*ttl, ttl, got.Err, got.Note)
				}
				if strings.Contains(wrote.Err, "stale") {
					staleRefused++
				} else {
					t.Errorf("trial %d: the frozen holder's write with token %d was accepted after token %d", i, held.Token, l.Token())
				}
				_ = l.Unlock(context.Background())
				w.Stop(10 * time.Second)
			}
			t.Logf("%s: %d trials, frozen 2×TTL (%v): ErrLockLost at the first check in %d, stale writes refused %d", mode, trials, 2*ttl, said, staleRefused)
		})
	}
}

// A fair waiter frozen while queued is granted the lock while frozen; by the
// time it resumes the grant has run out and another owner holds the lock.
// Its Lock must return ErrLockLost (or an error), or a lease the server
// confirms — never a lease that says "held" while another holds it.
func TestFaultFrozenFairWaiter(t *testing.T) {
	mostlyWaits(t)
	// Fails on main 6bf5cbf in 2 of 3 trials: the resumed waiter's lease says
	// held for ~490ms more (counted from the thaw) while the third owner holds.
	const ttl = 500 * time.Millisecond
	const trials = 3
	srv := redistest.Standalone(t)
	ctx := context.Background()
	lost, confirmed, errs := 0, 0, 0
	for i := 0; i < trials; i++ {
		name := "frozen-fair:" + string(rune('a'+i))
		resource := faulttest.NewFencedResource(t)
		_, first := faultClient(t, srv.Addr)
		m, _ := first.Mutex(name, locks.WithTTL(10*time.Second), locks.WithFair(ttl))
		held, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w := faulttest.StartWorker(t, "TestFaultHelperWorker", "fairwaiter",
			workerEnv(srv.Addr, name, ttl, resource.Addr, envFair+"="+ttl.String())...)
		w.Next("queuing", 30*time.Second)
		waitUntil(t, 10*time.Second, "the worker queued", func() bool {
			info, err := first.Inspect(ctx, name)
			return err == nil && info.Waiters >= 1
		})
		w.Freeze()
		frozenAt := time.Now()
		if err := held.Unlock(ctx); err != nil { // hands the lock to the frozen waiter
			t.Fatal(err)
		}
		// A third owner queues and gets the lock once the frozen waiter's
		// grant runs out.
		_, third := faultClient(t, srv.Addr)
		m3, _ := third.Mutex(name, locks.WithTTL(10*time.Second), locks.WithFair(ttl))
		lctx, cancel := context.WithTimeout(ctx, 20*ttl)
		l3, err := m3.Lock(lctx)
		cancel()
		l3At := time.Now()
		if err != nil {
			w.Thaw()
			t.Fatalf("trial %d: the third owner did not get the lock past the frozen waiter: %v", i, err)
		}
		w.Thaw()
		thawed := time.Now()
		r := w.Next("acquired", 30*time.Second)
		t.Logf("trial %d: third owner waited %v for the lock; the waiter reported %v after the thaw", i, l3At.Sub(frozenAt).Round(time.Millisecond), time.Since(thawed).Round(time.Millisecond))
		switch {
		case r.Owner == "":
			errs++ // Lock failed: acceptable, nothing claims to hold
		case r.N == 1:
			lost++
		case r.Note == "server: held by us":
			confirmed++
		default:
			t.Errorf("trial %d: the resumed waiter's lease (token %d, deadline in %v) says held (Err=%q) while %s; the third owner holds token %d since %v after the thaw",
				i, r.Token, r.End.Sub(r.Start).Round(time.Millisecond), r.Err, r.Note, l3.Token(), thawed.Sub(l3At).Round(time.Millisecond))
		}
		_ = l3.Unlock(ctx)
		w.Stop(10 * time.Second)
	}
	t.Logf("%d trials: frozen fair waiter resumed after another owner took the lock: ErrLockLost %d, confirmed %d, Lock failed %d",
		trials, lost, confirmed, errs)
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
