package locks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// A rolling upgrade runs a script's version N and N+1 on one lock: N+1
// must read what N wrote and N what N+1 writes. testdata/upgrade holds
// previous versions of pinned scripts (each file as lua/scripts.sum
// recorded it); this test runs Clients with the previous set beside
// Clients with the current one on one lock of that script's kind and
// checks that each version's try fails beside the other's hold, then
// mutual exclusion (and the count), fencing order and, for the Mutex,
// hand-over both ways; for the Semaphore, that the previous set's
// release, SetPermits, give-up and keeper serve no waiter beside the
// current version's hold (servesBesideHold). It fails when a pinned script replaced a version
// that lua/scripts.sum marks released and testdata/upgrade does not hold
// that version, when a script there has no workload for its kind, and
// when a file's content is not what the ledger recorded. It also runs
// mutex.acquire@11, rw.rlock@4 and sem.take@2, which 0.1.0's versions
// replaced before that release, as worked examples.
func TestRollingUpgradeRunsBothVersionsOnOneLock(t *testing.T) {
	ledger := readLedger(t)
	previous := upgradeScripts(t, "testdata/upgrade", ledger)
	if len(previous) == 0 {
		t.Fatal("testdata/upgrade holds no script")
	}
	current, err := embeddedScripts()
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, old := range previous {
		held[old.ID()] = true
		for _, now := range current.list() {
			if now.Name == old.Name && now.Version <= old.Version {
				t.Errorf("testdata/upgrade/%s: the pinned version is %s, not newer", old.File, now.ID())
			}
		}
	}
	for _, now := range current.list() {
		last := 0
		for v := now.Version - 1; v > 0 && last == 0; v-- {
			if ledger[fmt.Sprintf("%s@%d", now.Name, v)].Released {
				last = v
			}
		}
		if id := fmt.Sprintf("%s@%d", now.Name, last); last > 0 && !held[id] {
			t.Errorf("%s replaced %s, which was released: a rolling upgrade runs both, so put lua/%s.v%d.lua in testdata/upgrade", now.ID(), id, now.Name, last)
		}
	}
	srv := redistest.Standalone(t)
	for _, old := range previous {
		t.Run(old.ID(), func(t *testing.T) {
			kind, _, _ := strings.Cut(old.Name, ".")
			if taken := crossTries(t, srv, old, "upgrade-tries-"+old.ID()); len(taken) > 0 {
				t.Errorf("%s beside the current scripts: %s", old.ID(), strings.Join(taken, "; "))
			}
			switch kind {
			case "mutex":
				mixed := mixedMutexRun(t, srv, old, "upgrade-"+old.ID())
				if mixed.overlaps > 0 || mixed.regressions > 0 {
					t.Errorf("%s beside the current scripts: %d overlapping holds, %d fencing tokens not above the previous holder's", old.ID(), mixed.overlaps, mixed.regressions)
				}
				t.Logf("%s beside the current scripts: %d holds, hand-overs old→new %d, new→old %d", old.ID(), mixed.holds, mixed.oldToNew, mixed.newToOld)
				handOverBothWays(t, srv, old, "upgrade-turns-"+old.ID())
			case "rw":
				got := mixedRWRun(t, srv, old, "upgrade-"+old.ID())
				if got.overlaps > 0 || got.regressions > 0 {
					t.Errorf("%s beside the current scripts: %d holds beside a writer, %d writer tokens not above the previous writer's", old.ID(), got.overlaps, got.regressions)
				}
				t.Logf("%s beside the current scripts: %d read and write holds", old.ID(), got.holds)
			case "sem":
				holds, most := mixedSemaphoreRun(t, srv, old, "upgrade-"+old.ID())
				if most > 3 {
					t.Errorf("%s beside the current scripts: %d permits of 3 held at once", old.ID(), most)
				}
				if served := servesBesideHold(t, srv, old, "upgrade-serves-"+old.ID()); served != "" {
					t.Errorf("%s beside the current scripts: %s", old.ID(), served)
				}
				t.Logf("%s beside the current scripts: %d holds, at most %d of 3 permits at once", old.ID(), holds, most)
			default:
				t.Fatalf("%s: no mixed-version workload for %q scripts: add one to this test", old.ID(), kind)
			}
		})
	}

	// The check can fail: a previous version that reads the hold from
	// another field (a layout change N+1 did not account for) takes the
	// lock beside the other version's hold, or, for a script that serves
	// the queue and takes nothing itself, serves a waiter beside it.
	for _, old := range previous {
		t.Run("an incompatible "+old.Name+" is caught", func(t *testing.T) {
			if semServing[old.Name] {
				const from = "'h', 'q'"
				if !strings.Contains(old.Source, from) {
					t.Fatalf("%s: its first read of h (%s) is not where this test expects it", old.ID(), from)
				}
				broken, err := registry.ParseScript(old.File, []byte(strings.Replace(old.Source, from, "'hold', 'q'", 1)))
				if err != nil {
					t.Fatal(err)
				}
				if served := servesBesideHold(t, srv, broken, "upgrade-broken-"+old.Name); served == "" {
					t.Errorf("a %s that does not see the current hold: the waiter was not served beside the hold", old.Name)
				} else {
					t.Logf("caught: %s", served)
				}
				return
			}
			src := strings.ReplaceAll(old.Source, "redis.call('HMGET', lock, 'h',", "redis.call('HMGET', lock, 'hold',")
			if src == old.Source {
				t.Fatalf("%s: the fast path's HMGET of h is not where this test expects it", old.ID())
			}
			broken, err := registry.ParseScript(old.File, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if taken := crossTries(t, srv, broken, "upgrade-broken-"+old.Name); len(taken) == 0 {
				t.Errorf("a %s that does not see the current hold: every try beside the other version's hold failed", old.Name)
			} else {
				t.Logf("caught: %s", strings.Join(taken, "; "))
			}
		})
	}
}

// readLedger reads lua/scripts.sum.
func readLedger(t *testing.T) registry.Sum {
	t.Helper()
	f, err := lua.FS.Open("scripts.sum")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ledger, err := registry.ReadSum(f)
	if err != nil {
		t.Fatal(err)
	}
	return ledger
}

// upgradeScripts parses every script in dir and checks that the ledger
// recorded each with this very content.
func upgradeScripts(t *testing.T, dir string, ledger registry.Sum) []*registry.Script {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*registry.Script
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := registry.ParseScript(filepath.Base(path), src)
		if err != nil {
			t.Fatal(err)
		}
		if want := ledger[s.ID()].SHA1; want != registry.SourceSHA1(string(src)) {
			t.Fatalf("%s: SHA1 %s, but lua/scripts.sum records %s as %q: copy the recorded version (git show <commit>:lua/%s)", path, registry.SourceSHA1(string(src)), s.ID(), want, filepath.Base(path))
		}
		out = append(out, s)
	}
	return out
}

// handOverBothWays queues a caller of the current scripts behind a holder
// of the previous set, then one of the previous set behind it: each
// release hands the lock to the other version's waiter, with a larger
// fencing token.
func handOverBothWays(t *testing.T, srv *redistest.Server, old *registry.Script, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	oldM, newM := mixedMutex(t, srv, old, true, name), mixedMutex(t, srv, old, false, name)
	admin := srv.Client()
	defer admin.Close()
	queued := func(what string) {
		t.Helper()
		for range 1000 {
			if n, err := admin.ZCard(ctx, "{"+name+"}:queue").Result(); err == nil && n > 0 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("%s did not queue within 5s", what)
	}
	waitFor := func(m *Mutex) chan *Lease {
		got := make(chan *Lease, 1)
		go func() {
			l, err := m.Lock(ctx)
			if err != nil {
				t.Errorf("Lock: %v", err)
			}
			got <- l
		}()
		return got
	}
	first, err := oldM.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pending := waitFor(newM)
	queued("the current version's Lock")
	if err := first.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	second := <-pending
	if second == nil || second.Token() <= first.Token() {
		t.Fatalf("old→new: the current version's waiter got %v after token %d", second, first.Token())
	}
	pending = waitFor(oldM)
	queued("the previous version's Lock")
	if err := second.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	third := <-pending
	if third == nil || third.Token() <= second.Token() {
		t.Fatalf("new→old: the previous version's waiter got %v after token %d", third, second.Token())
	}
	if err := third.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// mixedClient is a new Client (TTL a minute, then opts) that runs the
// current scripts, or with useOld the previous set: old in place of the
// current version of its name.
func mixedClient(t *testing.T, srv *redistest.Server, old *registry.Script, useOld bool, opts ...Option) *Client {
	t.Helper()
	current, err := embeddedScripts()
	if err != nil {
		t.Fatal(err)
	}
	withOld := *current
	swapped := false
	for _, p := range []**registry.Script{
		&withOld.mutexAcquire, &withOld.mutexRelease, &withOld.mutexExtend, &withOld.mutexUndo,
		&withOld.rlock, &withOld.runlock, &withOld.rextend, &withOld.wlock, &withOld.wleave, &withOld.wunlock,
		&withOld.semTake, &withOld.semAcquire, &withOld.semRelease, &withOld.semUndo, &withOld.semExtend, &withOld.semLimit, &withOld.semKeepQueued,
		&withOld.multiAcquire, &withOld.forceUnlock, &withOld.keepQueued, &withOld.inspect,
		&withOld.holderWrite, &withOld.holderRead,
	} {
		if (*p).Name == old.Name {
			*p, swapped = old, true
		}
	}
	if !swapped || len(withOld.list()) != 23 {
		t.Fatalf("%s: no pinned script is named %s (or this list misses one of scriptSet's %d)", old.ID(), old.Name, len(withOld.list()))
	}
	rc := srv.Client()
	c, err := New(rc, append([]Option{WithTTL(time.Minute)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if useOld {
		c.scripts = &withOld
	}
	t.Cleanup(func() { c.Close(); rc.Close() })
	return c
}

// mixedMutex is a Mutex on name of a mixedClient.
func mixedMutex(t *testing.T, srv *redistest.Server, old *registry.Script, useOld bool, name string) *Mutex {
	t.Helper()
	m, err := mixedClient(t, srv, old, useOld).Mutex(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mixedRun is what a mixed-version run saw.
type mixedRun struct {
	holds, overlaps, regressions int
	oldToNew, newToOld           int
}

// contend runs two Clients with the current scripts and two with old in
// place of the current version of its name, four goroutines each: every
// goroutine g takes what take(c, g) takes 15 times and holds it 1 ms. held
// and released run under one lock as each hold begins and ends. The TTL (a
// minute) is far beyond any scheduling delay, so an overlap can only be a
// script's doing.
func contend(t *testing.T, srv *redistest.Server, old *registry.Script,
	take func(c *Client, g int) func(context.Context) (*Lease, error),
	held func(isOld bool, g int, l *Lease), released func(g int)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 4 {
		isOld := i%2 == 0
		c := mixedClient(t, srv, old, isOld)
		for g := range 4 {
			acquire := take(c, g)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 15 {
					l, err := acquire(ctx)
					if err != nil {
						t.Errorf("client %d goroutine %d: %v", i, g, err)
						return
					}
					mu.Lock()
					held(isOld, i*4+g, l)
					mu.Unlock()
					time.Sleep(time.Millisecond)
					mu.Lock()
					released(i*4 + g)
					mu.Unlock()
					if err := l.Unlock(ctx); err != nil {
						t.Errorf("client %d goroutine %d: Unlock: %v", i, g, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}

// mixedMutexRun contends on one Mutex and counts the holds taken beside
// another, the fencing tokens not above the previous holder's, and the
// hand-overs between the versions.
func mixedMutexRun(t *testing.T, srv *redistest.Server, old *registry.Script, name string) (got mixedRun) {
	t.Helper()
	holder, lastOld, lastToken := -1, false, int64(0)
	contend(t, srv, old, func(c *Client, _ int) func(context.Context) (*Lease, error) {
		m, err := c.Mutex(name)
		if err != nil {
			t.Fatal(err)
		}
		return m.Lock
	}, func(isOld bool, g int, l *Lease) {
		if holder >= 0 {
			got.overlaps++
		}
		if got.holds > 0 {
			if l.Token() <= lastToken {
				got.regressions++
			}
			if lastOld && !isOld {
				got.oldToNew++
			} else if !lastOld && isOld {
				got.newToOld++
			}
		}
		got.holds++
		holder, lastOld, lastToken = g, isOld, l.Token()
	}, func(g int) {
		if holder == g {
			holder = -1
		}
	})
	return got
}

// mixedRWRun contends on one RWMutex (in each Client two goroutines write
// and two read) and counts the holds taken beside a writer and the
// writers' fencing tokens not above the previous writer's.
func mixedRWRun(t *testing.T, srv *redistest.Server, old *registry.Script, name string) (got mixedRun) {
	t.Helper()
	readers, writing, lastWriter := 0, false, int64(0)
	writer := func(g int) bool { return g%2 == 0 }
	contend(t, srv, old, func(c *Client, g int) func(context.Context) (*Lease, error) {
		rw, err := c.RWMutex(name)
		if err != nil {
			t.Fatal(err)
		}
		if writer(g) {
			return rw.Lock
		}
		return rw.RLock
	}, func(_ bool, g int, l *Lease) {
		got.holds++
		if writing || (writer(g) && readers > 0) {
			got.overlaps++
		}
		if !writer(g) {
			readers++
			return
		}
		if l.Token() <= lastWriter {
			got.regressions++
		}
		writing, lastWriter = true, l.Token()
	}, func(g int) {
		if writer(g) {
			writing = false
		} else {
			readers--
		}
	})
	return got
}

// mixedSemaphoreRun contends on one Semaphore of 3 permits (goroutines
// take 1 or 2) and returns the holds and the most permits held at once.
func mixedSemaphoreRun(t *testing.T, srv *redistest.Server, old *registry.Script, name string) (holds, most int) {
	t.Helper()
	inUse := 0
	count := func(g int) int { return 1 + g%2 }
	contend(t, srv, old, func(c *Client, g int) func(context.Context) (*Lease, error) {
		sem, err := c.Semaphore(name, 3)
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context) (*Lease, error) { return sem.Acquire(ctx, count(g)) }
	}, func(_ bool, g int, _ *Lease) {
		holds++
		inUse += count(g)
		most = max(most, inUse)
	}, func(g int) { inUse -= count(g) })
	return holds, most
}

// semServing are the Semaphore scripts that serve the queue and take no
// permits for their caller: the cross-version tries do not run them, so
// servesBesideHold checks them (and every other sem script too).
var semServing = map[string]bool{"sem.release": true, "sem.keepqueued": true, "sem.setlimit": true, "sem.undo": true}

// servesBesideHold runs each script that serves a Semaphore's queue, of
// the previous set, beside a hold of the current one, where it must not
// serve: the current version holds 2 of 3 permits, the previous version
// 1, and a call of the previous set (waiter TTL 300 ms: its keeper runs
// sem.keepqueued every 100 ms) queues for 2. The previous version's
// release (1 permit back), SetPermits(3), a call that queues behind the
// waiter and gives up (sem.undo) and the keeper each serve the queue's
// head, where the waiter does not fit. It returns what was served, or ""
// when the waiter took its permits only once the current hold ended.
func servesBesideHold(t *testing.T, srv *redistest.Server, old *registry.Script, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sem := func(useOld bool, opts ...Option) *Semaphore {
		s, err := mixedClient(t, srv, old, useOld, opts...).Semaphore(name, 3)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	current, previous := sem(false), sem(true)
	held, err := current.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	one, err := previous.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	waiter := sem(true, WithWaiterTTL(300*time.Millisecond))
	served := make(chan error, 1)
	go func() {
		l, err := waiter.Acquire(ctx, 2)
		if err == nil {
			defer l.Unlock(ctx)
		}
		served <- err
	}()
	admin := srv.Client()
	defer admin.Close()
	queue := "{" + name + "}:squeue"
	for i := 0; ; i++ {
		if n, err := admin.ZCard(ctx, queue).Result(); err == nil && n > 0 {
			break
		}
		if i == 1000 {
			t.Fatal("the waiter did not queue within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// servedAfter reports the waiter's return within wait after step, as
	// the finding; "" while it waits.
	servedAfter := func(step string, wait time.Duration) string {
		select {
		case err := <-served:
			return fmt.Sprintf("the waiter's Acquire(2) returned %v beside the current version's hold of 2, after %s", err, step)
		case <-time.After(wait):
			return ""
		}
	}
	if err := one.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if got := servedAfter("the previous version's release of 1 permit", 100*time.Millisecond); got != "" {
		return got
	}
	if err := previous.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if got := servedAfter("the previous version's SetPermits(3)", 100*time.Millisecond); got != "" {
		return got
	}
	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	if l, err := previous.Acquire(short, 1); err == nil {
		stop()
		_ = l.Unlock(ctx)
		return "an Acquire(1) queued behind the waiter took a permit beside the current version's hold of 2"
	}
	stop()
	if got := servedAfter("the previous version's give-up behind the waiter", 100*time.Millisecond); got != "" {
		return got
	}
	if got := servedAfter("the previous version's keeper (300 ms)", 300*time.Millisecond); got != "" {
		return got
	}
	if err := held.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("the waiter once the current hold ended: %v", err)
	}
	return ""
}

// crossTries holds the lock with one version and tries to take it with the
// other, both ways, where the try must fail: a Mutex beside a Mutex
// holder; an RWMutex reader and writer beside a writer, and a writer
// beside a reader; one permit beside all 3 of a Semaphore. It returns the
// tries that took the lock.
func crossTries(t *testing.T, srv *redistest.Server, old *registry.Script, name string) (taken []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type tryFunc func(context.Context) (*Lease, error)
	// pair returns, for one version, how to hold and how to try.
	pair := func(c *Client) (holds, tries map[string]tryFunc) {
		switch kind, _, _ := strings.Cut(old.Name, "."); kind {
		case "mutex":
			m, err := c.Mutex(name)
			if err != nil {
				t.Fatal(err)
			}
			return map[string]tryFunc{"Lock": m.Lock}, map[string]tryFunc{"TryLock": m.TryLock}
		case "rw":
			rw, err := c.RWMutex(name)
			if err != nil {
				t.Fatal(err)
			}
			return map[string]tryFunc{"Lock": rw.Lock, "RLock": rw.RLock}, map[string]tryFunc{"TryLock": rw.TryLock, "TryRLock": rw.TryRLock}
		case "sem":
			sem, err := c.Semaphore(name, 3)
			if err != nil {
				t.Fatal(err)
			}
			return map[string]tryFunc{"Acquire(3)": func(ctx context.Context) (*Lease, error) { return sem.Acquire(ctx, 3) }},
				map[string]tryFunc{"TryAcquire(1)": func(ctx context.Context) (*Lease, error) { return sem.TryAcquire(ctx, 1) }}
		}
		t.Fatalf("%s: no cross-version tries for its kind: add them to this test", old.ID())
		return nil, nil
	}
	oldHolds, oldTries := pair(mixedClient(t, srv, old, true))
	newHolds, newTries := pair(mixedClient(t, srv, old, false))
	for _, way := range []struct {
		holder, trier string
		holds, tries  map[string]tryFunc
	}{{"current", "previous", newHolds, oldTries}, {"previous", "current", oldHolds, newTries}} {
		for holdName, hold := range way.holds {
			l, err := hold(ctx)
			if err != nil {
				t.Fatalf("the %s version's %s: %v", way.holder, holdName, err)
			}
			for tryName, try := range way.tries {
				if holdName == "RLock" && tryName == "TryRLock" {
					continue // readers share
				}
				got, err := try(ctx)
				if err == nil {
					taken = append(taken, fmt.Sprintf("the %s version's %s took the lock beside the %s version's %s", way.trier, tryName, way.holder, holdName))
					_ = got.Unlock(ctx)
				} else if !errors.Is(err, ErrNotAcquired) {
					t.Fatalf("the %s version's %s beside the %s version's %s: %v", way.trier, tryName, way.holder, holdName, err)
				}
			}
			_ = l.Unlock(ctx)
		}
	}
	return taken
}
