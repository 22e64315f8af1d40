package locks_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/simulate"
)

// A label with control bytes, invalid UTF-8 and a quote must not hide the
// holder (issue 13 item 6): Inspect reports host, pid and the label.
func TestSuiteInspectOddLabel(t *testing.T) {
	const label = "\x00\xff\""
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		if _, err := mutex(t, c, "odd", locks.WithLabel(label), locks.WithTTL(time.Minute)).Lock(ctx); err != nil {
			t.Fatal(err)
		}
		info, err := c.Inspect(ctx, "odd")
		if err != nil {
			t.Fatal(err)
		}
		h := info.Holder
		// A JSON writer turns the invalid byte into U+FFFD; both are fine,
		// an empty holder is not.
		if h.PID != os.Getpid() || h.Host == "" || (h.Label != label && h.Label != strings.ToValidUTF8(label, "\uFFFD")) {
			t.Fatalf("Inspect holder = %#v, want host, pid %d and label %q", h, os.Getpid(), label)
		}
	})
}

// Whatever sits in the holder's meta, Inspect reports something.
func TestInspectStoredMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, stored string
		want         locks.Metadata
	}{
		{"json", `{"host":"h1","pid":7,"label":"nightly"}`, locks.Metadata{Host: "h1", PID: 7, Label: "nightly"}},
		{"json escapes", `{"host":"h1","pid":7,"label":"\u0000\ufffd\""}`, locks.Metadata{Host: "h1", PID: 7, Label: "\x00\uFFFD\""}},
		{"go quoted", `{"host":"h1","pid":7,"label":"\x00\xff\""}`, locks.Metadata{Host: "h1", PID: 7, Label: "\x00\xff\""}},
		{"go quoted, key text inside a value", `{"host":"\"label\":\"x\"","pid":8,"label":"\a"}`, locks.Metadata{Host: `"label":"x"`, PID: 8, Label: "\a"}},
		{"other order", `{"label":"\x01", "pid": 9, "host":"h"}`, locks.Metadata{Host: "h", PID: 9, Label: "\x01"}},
		{"not metadata", `written by a shell script`, locks.Metadata{Raw: "written by a shell script"}},
		{"broken", `{"host":"h1`, locks.Metadata{Raw: `{"host":"h1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mr := miniredis.RunT(t)
			until := time.Now().Add(time.Hour).UnixMilli()
			mr.HSet("{job}", "h", fmt.Sprintf("mutex\t%d\th\t1\tc1\ta1\tsomeone\t%s", until, tc.stored), "f", "3")
			mr.SetTTL("{job}", time.Hour)
			rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { rc.Close() })
			c, err := locks.New(rc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			info, err := c.Inspect(context.Background(), "job")
			if err != nil {
				t.Fatal(err)
			}
			if !info.Held || info.Owner != "someone" || info.Token != 3 || info.Holder != tc.want {
				t.Fatalf("Inspect = %#v\nwant holder %#v", info, tc.want)
			}
		})
	}
}

func TestInspectNilContext(t *testing.T) {
	c, done := newExampleClient()
	defer done()
	//lint:ignore SA1012 the point is a nil context
	_, err := c.Inspect(nil, "job") //nolint:staticcheck
	if err == nil || !strings.Contains(err.Error(), "nil context") {
		t.Fatalf("Inspect(nil) = %v, want an error naming the nil context", err)
	}
}

// After Unlock the lock hash stays, without owner, to keep the last token
// for one lease: Inspect must still say "free", with no
// token, holder or TTL left over from the released lease.
func TestSuiteInspectAfterUnlock(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		l, err := mutex(t, c, "released", locks.WithTTL(time.Minute)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		info, err := c.Inspect(ctx, "released")
		if err != nil {
			t.Fatal(err)
		}
		if info.Held || info.Owner != "" || info.Token != 0 || info.TTL != 0 || info.Holder != (locks.Metadata{}) {
			t.Fatalf("Inspect after Unlock = %#v, want a free lock", info)
		}
	})
}

// permitsOf maps a semaphore report's holders to their permit counts,
// failing on a holder without lease time left or with more than ttl.
func permitsOf(t *testing.T, info locks.LockInfo, ttl time.Duration) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for _, p := range info.Permits {
		if p.TTL <= 0 || p.TTL > ttl {
			t.Fatalf("holder %s reported with %v left, want (0, %v]", p.Owner, p.TTL, ttl)
		}
		got[p.Owner] = p.Permits
	}
	return got
}

// Inspect on a semaphore's name reports the kind, each holder with its own
// permit count, the queued Acquire and the count SetPermits stored (0
// before, when each caller applies its own).
func TestSuiteInspectSemaphore(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 20*time.Second)
		opts := []locks.Option{locks.WithTTL(time.Minute), locks.WithWaiterTTL(time.Minute)}
		sem := semaphore(t, f.client(t, opts...), "pool", 3)
		one, err := sem.Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		two, err := sem.Acquire(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		queuedSemaphore(t, f, "pool", 3, 2, done, opts...)

		c := f.client(t)
		info, err := c.Inspect(ctx, "pool")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{one.Owner(): 1, two.Owner(): 2}
		if got := permitsOf(t, info, time.Minute); !info.Held || info.Kind != "semaphore" || len(info.Permits) != 2 ||
			got[one.Owner()] != 1 || got[two.Owner()] != 2 || info.Waiters != 1 || info.Limit != 0 || info.Owner != "" {
			t.Fatalf("Inspect = %+v\nwant a semaphore held by %v, 1 waiter, limit 0", info, want)
		}
		if err := sem.SetPermits(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if info, err := c.Inspect(ctx, "pool"); err != nil || info.Limit != 3 {
			t.Fatalf("Inspect after SetPermits(3) = %+v, %v; want limit 3", info, err)
		}

		// The waiter takes the permits given back and is the only holder.
		if err := two.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		info, err = c.Inspect(ctx, "pool")
		if err != nil {
			t.Fatal(err)
		}
		if got := permitsOf(t, info, time.Minute); len(got) != 2 || got[one.Owner()] != 1 || got[two.Owner()] != 0 || info.Waiters != 0 {
			t.Fatalf("Inspect after the waiter took the released permits = %+v", info)
		}
	})
}

// Permits whose lease ran out by the server's clock are not reported, and a
// name nothing holds reports Kind "".
func TestSuiteInspectSemaphoreExpired(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		crashed := semaphore(t, c, "slots", 3, locks.WithTTL(200*time.Millisecond))
		if _, err := crashed.Acquire(ctx, 2); err != nil { // never released
			t.Fatal(err)
		}
		live, err := semaphore(t, c, "slots", 3, locks.WithTTL(time.Minute)).Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if info, err := c.Inspect(ctx, "slots"); err != nil || len(info.Permits) != 2 {
			t.Fatalf("Inspect before the expiry = %+v, %v; want 2 holders", info, err)
		}
		f.elapse(300 * time.Millisecond)
		info, err := c.Inspect(ctx, "slots")
		if err != nil {
			t.Fatal(err)
		}
		if got := permitsOf(t, info, time.Minute); info.Kind != "semaphore" || len(got) != 1 || got[live.Owner()] != 1 {
			t.Fatalf("Inspect after one holder's permits expired = %+v; want only %s", info, live.Owner())
		}
		if err := live.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"slots", "never-used"} {
			info, err := c.Inspect(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if info.Held || info.Kind != "" || info.Permits != nil || info.Readers != nil || info.Waiters != 0 {
				t.Fatalf("Inspect(%s) of a free name = %+v, want not held, Kind \"\"", name, info)
			}
		}
	})
}

// An RWMutex held only by readers is held: Inspect lists each reader, and
// a writer reports Kind "rwmutex" with its holder as for a Mutex.
func TestSuiteInspectRWMutex(t *testing.T) {
	suite(t, func(t *testing.T, f fixture) {
		ctx := timeout(t, 10*time.Second)
		c := f.client(t)
		rw, err := c.RWMutex("table", locks.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		r1, err := rw.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := rw.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Inspect(ctx, "table")
		if err != nil {
			t.Fatal(err)
		}
		readers := map[string]bool{}
		for _, r := range info.Readers {
			if r.Holds != 1 || r.TTL <= 0 || r.TTL > time.Minute {
				t.Fatalf("reader %+v, want 1 hold and a lease left", r)
			}
			readers[r.Owner] = true
		}
		if !info.Held || info.Kind != "rwmutex" || info.Owner != "" || len(readers) != 2 || !readers[r1.Owner()] || !readers[r2.Owner()] {
			t.Fatalf("Inspect = %+v; want readers %s and %s", info, r1.Owner(), r2.Owner())
		}
		for _, r := range []*locks.Lease{r1, r2} {
			if err := r.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		w, err := rw.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info, err := c.Inspect(ctx, "table"); err != nil || info.Kind != "rwmutex" || info.Owner != w.Owner() || info.Readers != nil {
			t.Fatalf("Inspect with a writer = %+v, %v; want Kind rwmutex, owner %s", info, err, w.Owner())
		}
		if _, err := mutex(t, c, "plain").Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if info, err := c.Inspect(ctx, "plain"); err != nil || info.Kind != "mutex" || !info.Held {
			t.Fatalf("Inspect of a Mutex = %+v, %v; want Kind mutex", info, err)
		}
	})
}

// Inspect reads docs/layout.md's records, hand-built here on a real server and
// on miniredis (which refuses TIME in a read-only script: the server time
// is then K's expiry time less its PTTL): the single holder with its
// count, TTL, metadata and revocation; readers and permit holders each with
// metadata and revocation, dead ones left out; the stored limit; the
// waiters of the queue keys and of K's w: entries, dead ones left out.
func TestInspectLayoutRecords(t *testing.T) {
	meta := func(label string) string { return fmt.Sprintf(`{"host":"h1","pid":7,"label":%q}`, label) }
	check := func(t *testing.T, rc *redis.Client, now int64) {
		ctx := context.Background()
		c, err := locks.New(rc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		hset := func(key string, pairs ...any) {
			t.Helper()
			if err := rc.HSet(ctx, key, pairs...).Err(); err != nil {
				t.Fatal(err)
			}
			rc.PExpire(ctx, key, time.Hour)
		}
		// A revoked writer with 2 reentrant holds, a waiting writer whose
		// W: entry (deadline \t client) is live and one whose entry is dead.
		hset("{w}", "h", fmt.Sprintf("rwmutex\t%d\tx\t2\tc1\ta1\twriter\t%s", now+5000, meta("w")), "f", "99",
			"W:live", fmt.Sprintf("%d\tc2", now+60000), "W:dead", fmt.Sprintf("%d\tc3", now-1))
		info, err := c.Inspect(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		if !info.Held || info.Kind != "rwmutex" || info.Owner != "writer" || info.HoldCount != 2 || !info.Revoked || info.Token != 99 ||
			info.TTL <= 4*time.Second || info.TTL > 5*time.Second || info.Holder != (locks.Metadata{Host: "h1", PID: 7, Label: "w"}) || info.Waiters != 1 {
			t.Fatalf("Inspect of a revoked writer = %+v", info)
		}
		// Readers: one live (revoked), one live, one dead.
		hset("{r}", "h", fmt.Sprintf("rwmutex\t%d\tr\t3", now+60000), "f", "5",
			"r:r1", fmt.Sprintf("%d\tx\t1\tc1\ta1\t%s", now+3000, meta("r1")),
			"r:r2", fmt.Sprintf("%d\th\t3\tc2\ta2\t%s", now+60000, meta("r2")),
			"r:r3", fmt.Sprintf("%d\th\t1\tc3\ta3\t%s", now-1, meta("r3")))
		info, err = c.Inspect(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if !info.Held || info.Kind != "rwmutex" || info.Owner != "" || len(info.Readers) != 2 {
			t.Fatalf("Inspect of readers = %+v", info)
		}
		r1, r2 := info.Readers[0], info.Readers[1] // the earliest lease first
		if r1.Owner != "r1" || !r1.Revoked || r1.Holds != 1 || r1.Holder.Label != "r1" || r1.TTL > 3*time.Second ||
			r2.Owner != "r2" || r2.Revoked || r2.Holds != 3 || r2.Holder != (locks.Metadata{Host: "h1", PID: 7, Label: "r2"}) {
			t.Fatalf("readers = %+v", info.Readers)
		}
		// Permits with a stored limit and two queued Acquire calls.
		hset("{s}", "h", fmt.Sprintf("semaphore\t%d\tp\t3", now+60000), "l", "4",
			"p:o1", fmt.Sprintf("%d\th\t2\tc1\to1\t%s", now+60000, meta("o1")),
			"p:o2", fmt.Sprintf("%d\tx\t1\tc2\to2\t%s", now+1000, meta("o2")))
		rc.ZAdd(ctx, "{s}:squeue", redis.Z{Score: 1, Member: "q1"}, redis.Z{Score: 2, Member: "q2"})
		info, err = c.Inspect(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if !info.Held || info.Kind != "semaphore" || info.Limit != 4 || info.Waiters != 2 || len(info.Permits) != 2 {
			t.Fatalf("Inspect of permits = %+v", info)
		}
		p1, p2 := info.Permits[1], info.Permits[0]
		if p1.Owner != "o1" || p1.Permits != 2 || p1.Revoked || p1.Metadata.Label != "o1" || p2.Owner != "o2" || !p2.Revoked || p2.Metadata.PID != 7 {
			t.Fatalf("permit holders = %+v", info.Permits)
		}
		// A hold whose until passed: free, with no token.
		hset("{gone}", "h", fmt.Sprintf("mutex\t%d\th\t1\tc1\ta1\tghost\t", now-1), "f", "7")
		if info, err := c.Inspect(ctx, "gone"); err != nil || info.Held || info.Kind != "" || info.Token != 0 || info.Owner != "" {
			t.Fatalf("Inspect of an ended hold = %+v, %v; want free", info, err)
		}
	}
	t.Run("redis-server", func(t *testing.T) {
		srv := redistest.Standalone(t)
		rc := srv.Client()
		tm, err := rc.Time(context.Background()).Result()
		if err != nil {
			t.Fatal(err)
		}
		check(t, rc, tm.UnixMilli())
	})
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { rc.Close() })
		check(t, rc, time.Now().UnixMilli())
	})
}

// A name with 10,000 queued waiters (issue 45 item 4) is listed page by
// page: every waiter once, with its place in the queue, and each page's
// work on the server (the simulator's work meter) bounded by its count,
// not by the pile.
func TestInspectPagesTenThousandWaiters(t *testing.T) {
	const n, count = 10_000, 100
	clock := simulate.NewVirtualClock(time.Unix(1_800_000_000, 0))
	srv := simulate.New(simulate.WithClock(clock))
	c, err := locks.NewWithBackend(srv, locks.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	ctx := timeout(t, time.Minute)
	if _, err := mutex(t, c, "pile", locks.WithTTL(time.Hour)).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// The waiters' entries and queue, as mutex.acquire writes them.
	deadline := clock.Now().Add(time.Hour).UnixMilli()
	hset, zadd := []any{"HSET", "{pile}"}, []any{"ZADD", "{pile}:queue"}
	for i := range n {
		owner := fmt.Sprintf("w%05d", i)
		hset = append(hset, "w:"+owner, fmt.Sprintf("%d\t60000\t5000\tc9\ta-%s\t~", deadline, owner))
		zadd = append(zadd, i, owner)
	}
	for _, args := range [][]any{hset, zadd} {
		if err := srv.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}

	seen := map[string]bool{}
	cursor, pages, most := uint64(0), 0, int64(0)
	for {
		if pages++; pages > 2*n/count {
			t.Fatalf("no end after %d pages", pages)
		}
		srv.ResetWork()
		page, err := c.InspectPage(ctx, "pile", cursor, count)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, srv.Work().Total.Elements)
		if !page.Held || page.Owner == "" || page.Waiters != n {
			t.Fatalf("page %d: held %v, owner %q, waiters %d; want the holder and %d waiters", pages, page.Held, page.Owner, page.Waiters, n)
		}
		for _, w := range page.Queue {
			var i int64
			if _, err := fmt.Sscanf(w.Owner, "w%05d", &i); err != nil || w.Rank != i || w.TTL != time.Hour {
				t.Fatalf("waiter %+v: want rank %d and an hour left", w, i)
			}
			seen[w.Owner] = true
		}
		if cursor = page.Cursor; cursor == 0 {
			break
		}
	}
	if len(seen) != n {
		t.Fatalf("%d waiters listed in %d pages, want %d", len(seen), pages, n)
	}
	// A page: an HSCAN of about count fields, a ZRANK (log2 10,000 = 14)
	// per waiter of it, and a few constant commands.
	if bound := int64(count*(2+14) + 50); most > bound {
		t.Fatalf("a page took %d elements of work, want at most %d", most, bound)
	}
	t.Logf("%d waiters in %d pages, at most %d elements of work a page", n, pages, most)

	info, err := c.Inspect(ctx, "pile")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Held || info.Waiters != n || info.Partial {
		t.Fatalf("Inspect: held %v, waiters %d, partial %v; want held, %d, whole", info.Held, info.Waiters, info.Partial, n)
	}
}

// A forced unlock of a name with 10,000 readers or permit holders (issue
// 45 item 1) revokes them all, one page per call: each call's work on the
// server is bounded, not the pile's.
func TestForceUnlockPagesTenThousandHolders(t *testing.T) {
	const n = 10_000
	for _, tc := range []struct {
		kind, prefix string
		grace        time.Duration
	}{{"rwmutex", "r:", 10 * time.Second}, {"semaphore", "p:", 0}} {
		t.Run(tc.kind, func(t *testing.T) {
			clock := simulate.NewVirtualClock(time.Unix(1_800_000_000, 0))
			srv := simulate.New(simulate.WithClock(clock))
			c, err := locks.NewWithBackend(srv, locks.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			ctx := timeout(t, time.Minute)
			// The holders' records, as rw.rlock and sem.take write them.
			until := clock.Now().Add(time.Hour).UnixMilli()
			h := fmt.Sprintf("rwmutex\t%d\tr\t%d", until, n)
			if tc.kind == "semaphore" {
				h = fmt.Sprintf("semaphore\t%d\tp\t%d\t%d", until, until, n)
			}
			hset := []any{"HSET", "{pile}", "h", h, "f", "1"}
			for i := range n {
				hset = append(hset, fmt.Sprintf("%so%05d", tc.prefix, i), fmt.Sprintf("%d\th\t1\tc9\ta%05d\t~", until, i))
			}
			if err := srv.Do(ctx, hset...).Err(); err != nil {
				t.Fatal(err)
			}
			srv.ResetWork()
			revoked, err := c.ForceUnlock(ctx, "pile", locks.WithGrace(tc.grace))
			if err != nil || !revoked {
				t.Fatalf("ForceUnlock = %v, %v; want true", revoked, err)
			}
			w := srv.Work().Scripts["lock.forceunlock@4"]
			// A call: an HSCAN of about 500 fields, an HSET or HDEL of them,
			// a few constant commands.
			if w.Runs < 10 || w.MaxRun > 2*500+100 {
				t.Fatalf("%d calls, the largest %d elements of work; want at least 10, each at most %d", w.Runs, w.MaxRun, 2*500+100)
			}
			t.Logf("%d holders revoked in %d calls, at most %d elements of work a call", n, w.Runs, w.MaxRun)
			info, err := c.Inspect(ctx, "pile")
			if err != nil {
				t.Fatal(err)
			}
			if tc.grace == 0 {
				if info.Held || len(info.Readers)+len(info.Permits) != 0 {
					t.Fatalf("after a forced unlock without grace: held %v, %d readers, %d permit holders", info.Held, len(info.Readers), len(info.Permits))
				}
				if left := srv.Do(ctx, "HLEN", "{pile}").Val(); left != int64(1) {
					t.Fatalf("%v fields left, want the fencing token only", left)
				}
				return
			}
			if len(info.Readers) != n {
				t.Fatalf("%d readers after the forced unlock, want %d, revoked", len(info.Readers), n)
			}
			for _, r := range info.Readers {
				if !r.Revoked || r.TTL > tc.grace {
					t.Fatalf("reader %+v: want revoked, at most %v left", r, tc.grace)
				}
			}
		})
	}
}

// Holder metadata lives apart (issue 45 item 2): the holds carry "~" or a
// lock's own label, short enough for a listpack; each Client writes its
// host, pid and label once under <prefix>{redlua-holders}:<client id>;
// Inspect joins them, and a missing holder record leaves the metadata
// unknown, not an error.
func TestInspectHolderMetadataApart(t *testing.T) {
	srv := redistest.Standalone(t)
	rc := srv.Client()
	ctx := timeout(t, 20*time.Second)
	const prefix = "app:"
	c, err := locks.New(rc, locks.WithKeyPrefix(prefix), locks.WithLabel("client label"), locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rw, err := c.RWMutex("doc")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := rw.RLock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mutex(t, c, "job", locks.WithLabel("its own")).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sem, err := c.Semaphore("slots", 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}

	// One holder record, under the prefix, with a TTL of about a day.
	holders, err := rc.Keys(ctx, prefix+"{redlua-holders}:*").Result()
	if err != nil || len(holders) != 1 {
		t.Fatalf("holder keys %q (%v), want one", holders, err)
	}
	if ttl := rc.PTTL(ctx, holders[0]).Val(); ttl < 23*time.Hour || ttl > 24*time.Hour {
		t.Fatalf("the holder record's TTL = %v, want about 24h", ttl)
	}
	// The holds carry the placeholder. An RWMutex's reader records stay
	// within 64 bytes, so its hash is a listpack; a Semaphore's permit
	// record repeats its 32-byte owner as the attempt (sem.* scripts,
	// owner tokens: not this change) and is a few bytes over.
	for _, key := range []string{prefix + "{doc}", prefix + "{slots}"} {
		fields := rc.HGetAll(ctx, key).Val()
		for f, v := range fields {
			if strings.HasPrefix(f, "r:") || strings.HasPrefix(f, "p:") {
				if !strings.HasSuffix(v, "\t~") {
					t.Fatalf("%s %s = %q, want the placeholder", key, f, v)
				}
				t.Logf("%s %s: %d bytes", key, f, len(v))
			}
		}
	}
	if enc := rc.ObjectEncoding(ctx, prefix+"{doc}").Val(); enc != "listpack" {
		t.Fatalf("the RWMutex's hash is a %s, want a listpack: %q", enc, rc.HGetAll(ctx, prefix+"{doc}").Val())
	}
	if _, err := mutex(t, c, "plain").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("a Mutex's h: %d bytes", len(rc.HGet(ctx, prefix+"{plain}", "h").Val()))
	if h := rc.HGet(ctx, prefix+"{job}", "h").Val(); !strings.HasSuffix(h, "\t{\"label\":\"its own\"}") {
		t.Fatalf("a lock with its own label: h = %q, want the label alone", h)
	}

	want := locks.Metadata{Host: hostname(t), PID: os.Getpid(), Label: "client label"}
	info, err := c.Inspect(ctx, "doc")
	if err != nil || len(info.Readers) != 3 {
		t.Fatalf("Inspect = %+v, %v; want 3 readers", info, err)
	}
	for _, r := range info.Readers {
		if r.Holder != want {
			t.Fatalf("reader %+v: holder %+v, want %+v", r, r.Holder, want)
		}
	}
	if info, err := c.Inspect(ctx, "job"); err != nil || info.Holder != (locks.Metadata{Host: want.Host, PID: want.PID, Label: "its own"}) {
		t.Fatalf("Inspect of a lock with its own label = %+v, %v", info.Holder, err)
	}
	if info, err := c.Inspect(ctx, "slots"); err != nil || len(info.Permits) != 1 || info.Permits[0].Metadata != want {
		t.Fatalf("Inspect of the semaphore = %+v, %v", info.Permits, err)
	}

	// Without the holder record: unknown, not an error.
	if err := rc.Del(ctx, holders[0]).Err(); err != nil {
		t.Fatal(err)
	}
	info, err = c.Inspect(ctx, "doc")
	if err != nil || len(info.Readers) != 3 || info.Readers[0].Holder != (locks.Metadata{}) {
		t.Fatalf("Inspect without the holder record = %+v, %v; want 3 readers, metadata unknown", info, err)
	}
	if info, err := c.Inspect(ctx, "job"); err != nil || info.Holder != (locks.Metadata{Label: "its own"}) {
		t.Fatalf("Inspect of a lock with its own label, without the holder record = %+v, %v", info.Holder, err)
	}
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
