package lua_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/simulate"
)

// scriptEnv runs registry scripts and commands on one server, the
// simulator or a real redis-server, so that a contract test runs on both.
type scriptEnv struct {
	run       func(id string, keys []string, args ...any) (any, error)
	do        func(args ...any) (any, error)
	subscribe func(channel string, deliver func(string)) (func(), error)
	sim       bool
}

// scriptEnvs runs f on the simulator (virtual clock) and on a real server.
func scriptEnvs(t *testing.T, f func(t *testing.T, e scriptEnv)) {
	t.Run("simulator", func(t *testing.T) {
		reg := scripts(t)
		srv := simulate.New(simulate.WithClock(simulate.NewVirtualClock(time.Unix(1_800_000_000, 0))))
		ctx := context.Background()
		f(t, scriptEnv{
			run: func(id string, keys []string, args ...any) (any, error) {
				s, err := reg.Lookup(id)
				if err != nil {
					t.Fatal(err)
				}
				return srv.Run(ctx, s, keys, args...).Result()
			},
			do: func(args ...any) (any, error) { return srv.Do(ctx, args...).Result() },
			subscribe: func(ch string, deliver func(string)) (func(), error) {
				return srv.Subscribe(ctx, ch, deliver)
			},
			sim: true,
		})
	})
	t.Run("redis-server", func(t *testing.T) {
		srv := redistest.Standalone(t)
		runner, call := scriptCaller(t, srv)
		rc := srv.Client()
		ctx := context.Background()
		f(t, scriptEnv{
			run: call,
			do:  func(args ...any) (any, error) { return rc.Do(ctx, args...).Result() },
			subscribe: func(ch string, deliver func(string)) (func(), error) {
				return runner.Subscribe(ctx, ch, deliver)
			},
		})
	})
}

// nowMs is the server's time in ms.
func (e scriptEnv) nowMs(t *testing.T) int64 {
	t.Helper()
	v, err := e.do("TIME")
	if err != nil {
		t.Fatal(err)
	}
	parts := v.([]any)
	s, _ := strconv.ParseInt(parts[0].(string), 10, 64)
	us, _ := strconv.ParseInt(parts[1].(string), 10, 64)
	return s*1000 + us/1000
}

// hash returns K's fields.
func (e scriptEnv) hash(t *testing.T, key string) map[string]string {
	t.Helper()
	v, err := e.do("HGETALL", key)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	switch v := v.(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			out[v[i].(string)] = v[i+1].(string)
		}
	case map[any]any:
		for k, val := range v {
			out[k.(string)] = val.(string)
		}
	}
	return out
}

// set writes K's fields (pairs) and gives K an expiry of a minute.
func (e scriptEnv) set(t *testing.T, key string, pairs ...string) {
	t.Helper()
	args := []any{"HSET", key}
	for _, p := range pairs {
		args = append(args, p)
	}
	if _, err := e.do(args...); err != nil {
		t.Fatal(err)
	}
	if _, err := e.do("PEXPIRE", key, 120000); err != nil {
		t.Fatal(err)
	}
}

// messages subscribes to channels and returns what arrives, each as
// "<channel> <payload>".
func (e scriptEnv) messages(t *testing.T, channels ...string) (next func() string, quiet func()) {
	t.Helper()
	got := make(chan string, 64)
	for _, ch := range channels {
		stop, err := e.subscribe(ch, func(p string) { got <- ch + " " + p })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	next = func() string {
		t.Helper()
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no message in 10s")
			return ""
		}
	}
	quiet = func() {
		t.Helper()
		// A PING round trip on the publishing connection comes after the
		// script's messages were sent; the subscriber's connection may
		// still be reading them: a short wait, which a missing message
		// fails and a late one cannot make pass.
		if !e.sim {
			time.Sleep(50 * time.Millisecond)
		}
		select {
		case m := <-got:
			t.Fatalf("unexpected message %q", m)
		default:
		}
	}
	return next, quiet
}

// until reads field 2 (until_ms or expiry_ms) of a tab-separated value.
func fieldAt(t *testing.T, value string, i int) string {
	t.Helper()
	parts := strings.Split(value, "\t")
	if len(parts) <= i {
		t.Fatalf("value %q has no field %d", value, i)
	}
	return parts[i]
}

func msField(t *testing.T, value string, i int) int64 {
	t.Helper()
	n, err := strconv.ParseInt(fieldAt(t, value, i), 10, 64)
	if err != nil {
		t.Fatalf("value %q: field %d is not an integer", value, i)
	}
	return n
}

// between fails unless lo <= got <= hi.
func between(t *testing.T, what string, got, lo, hi int64) {
	t.Helper()
	if got < lo || got > hi {
		t.Fatalf("%s = %d, want within [%d, %d]", what, got, lo, hi)
	}
}

// lock.forceunlock@4 over hand-built K hashes of every kind (docs/layout.md):
// a grace period marks each live hold x and cuts its expiry, grace 0
// removes the holds and wakes the name's waiters when q is live, every
// holder's client is told "revoke <lock bytes> <lock>\n" then
// "<attempt> <owner bytes> <owner>\n" on its revoke channel (one per
// client, classic PUBLISH), and dead holds are neither counted nor told.
func TestLockForceUnlock(t *testing.T) {
	scriptEnvs(t, func(t *testing.T, e scriptEnv) {
		force := func(name string, grace int64) int64 {
			t.Helper()
			// The calls a forced unlock makes: one page each, until the
			// cursor comes back 0.
			cursor, total := "0", int64(0)
			for range 100 {
				v, err := e.run("lock.forceunlock@4", []string{name}, grace, "PUBLISH", name+":released", "redlua:revoke:", cursor, 1000)
				if err != nil {
					t.Fatalf("force unlock of %s: %v", name, err)
				}
				reply := v.([]any)
				total += reply[1].(int64)
				if cursor = reply[0].(string); cursor == "0" {
					return total
				}
			}
			t.Fatalf("force unlock of %s: the cursor did not come back to 0 in 100 calls", name)
			return 0
		}
		next, quiet := e.messages(t, "redlua:revoke:c1", "redlua:revoke:c2", "redlua:revoke:c3",
			"{m}:released", "{r}:released", "{s}:released")
		// rv is the message client gets on its revoke channel for the holds
		// (attempt, owner pairs) of lock.
		rv := func(client, lock string, holds ...string) string {
			m := fmt.Sprintf("redlua:revoke:%s revoke %d %s\n", client, len(lock), lock)
			for i := 0; i < len(holds); i += 2 {
				m += fmt.Sprintf("%s %d %s\n", holds[i], len(holds[i+1]), holds[i+1])
			}
			return m
		}
		expect := func(after string, want ...string) {
			t.Helper()
			var got []string
			for range want {
				got = append(got, next())
			}
			// Publication order follows HGETALL's: compare as sets.
			if strings.Join(sorted(got), "|") != strings.Join(sorted(want), "|") {
				t.Fatalf("after %s: messages %q, want %q", after, got, want)
			}
			quiet()
		}
		meta := `{"host":"h1","pid":7,"label":"job"}`

		// A Mutex holder with a minute left, and a waiter (q live).
		now := e.nowMs(t)
		e.set(t, "{m}", "h", fmt.Sprintf("mutex\t%d\th\t1\tc1\ta1\talice\t%s", now+60000, meta),
			"f", "1700000000000000", "q", strconv.FormatInt(now+30000, 10), "w:bob", "x")
		before := e.nowMs(t)
		if n := force("{m}", 10000); n != 1 {
			t.Fatalf("force unlock of a Mutex holder with a grace = %d, want 1", n)
		}
		after := e.nowMs(t)
		expect("revoking the Mutex holder", rv("c1", "{m}", "a1", "alice"))
		k := e.hash(t, "{m}")
		between(t, "the revoked holder's until", msField(t, k["h"], 1), before+10000, after+10000)
		if want := fmt.Sprintf("\tx\t1\tc1\ta1\talice\t%s", meta); !strings.HasSuffix(k["h"], want) || fieldAt(t, k["h"], 0) != "mutex" {
			t.Fatalf("h after revoking = %q, want mutex, the cut until, then %q", k["h"], want)
		}
		if k["f"] != "1700000000000000" || k["w:bob"] != "x" {
			t.Fatalf("the fence or a waiter entry changed: %v", k)
		}
		// Again with a longer grace: the expiry never grows.
		cut := msField(t, k["h"], 1)
		if n := force("{m}", 50000); n != 1 {
			t.Fatalf("a second force unlock = %d, want 1 (the revoked hold is live until its grace ends)", n)
		}
		expect("revoking again", rv("c1", "{m}", "a1", "alice"))
		if got := msField(t, e.hash(t, "{m}")["h"], 1); got != cut {
			t.Fatalf("a longer grace moved until from %d to %d", cut, got)
		}
		// Grace 0: the hold goes, waiters hear "released".
		if n := force("{m}", 0); n != 1 {
			t.Fatalf("force unlock with grace 0 = %d, want 1", n)
		}
		expect("removing the Mutex holder", rv("c1", "{m}", "a1", "alice"), "{m}:released released")
		k = e.hash(t, "{m}")
		if _, ok := k["h"]; ok || k["f"] != "1700000000000000" || k["q"] == "" {
			t.Fatalf("K after removing the holder = %v, want f and q without h", k)
		}
		if n := force("{m}", 0); n != 0 {
			t.Fatalf("force unlock of a free name = %d, want 0", n)
		}
		expect("a free name")

		// A holder whose until passed holds nothing: no count, no message,
		// no write.
		now = e.nowMs(t)
		dead := fmt.Sprintf("mutex\t%d\th\t1\tc1\ta1\talice\t", now-1)
		e.set(t, "{m}", "h", dead)
		if n := force("{m}", 0); n != 0 || e.hash(t, "{m}")["h"] != dead {
			t.Fatalf("force unlock of an ended hold = %d, h %q; want 0 and h untouched", n, e.hash(t, "{m}")["h"])
		}
		expect("an ended hold")

		// An RWMutex writer (a single holder of kind rwmutex), not yet
		// claimed (g), with no q: grace 0 removes it and wakes no one.
		now = e.nowMs(t)
		e.set(t, "{w}", "h", fmt.Sprintf("rwmutex\t%d\tg\t1\tc1\t\twriter\t%s", now+60000, meta))
		if n := force("{w}", 0); n != 1 {
			t.Fatalf("force unlock of a granted writer = %d, want 1", n)
		}
		expect("removing a writer", rv("c1", "{w}", "", "writer"))
		if _, ok := e.hash(t, "{w}")["h"]; ok {
			t.Fatal("h stays after removing the writer")
		}

		// RWMutex readers: two live (one revoked with a grace longer than
		// its expiry), one dead; a waiting writer's entry.
		now = e.nowMs(t)
		r1 := fmt.Sprintf("%d\th\t2\tc1\tra1\t%s", now+60000, meta)
		r2 := fmt.Sprintf("%d\th\t1\tc2\tra2\t%s", now+3000, meta)
		r3 := fmt.Sprintf("%d\th\t1\tc3\tra3\t%s", now-5, meta)
		e.set(t, "{r}", "h", fmt.Sprintf("rwmutex\t%d\tr\t3", now+60000), "r:r1", r1, "r:r2", r2, "r:r3", r3,
			"w:wr", "entry", "f", "42")
		before = e.nowMs(t)
		if n := force("{r}", 20000); n != 2 {
			t.Fatalf("force unlock of 2 live readers = %d, want 2", n)
		}
		after = e.nowMs(t)
		expect("revoking readers", rv("c1", "{r}", "ra1", "r1"), rv("c2", "{r}", "ra2", "r2"))
		k = e.hash(t, "{r}")
		between(t, "r1's expiry", msField(t, k["r:r1"], 0), before+20000, after+20000)
		if got := k["r:r2"]; got != strings.Replace(r2, "\th\t", "\tx\t", 1) {
			t.Fatalf("r:r2 = %q, want its expiry kept (shorter than the grace) and state x", got)
		}
		if !strings.HasSuffix(k["r:r1"], fmt.Sprintf("\tx\t2\tc1\tra1\t%s", meta)) || k["r:r3"] != r3 {
			t.Fatalf("records after revoking: r1 %q, r3 %q", k["r:r1"], k["r:r3"])
		}
		if h := k["h"]; fieldAt(t, h, 0) != "rwmutex" || fieldAt(t, h, 2) != "r" || fieldAt(t, h, 3) != "3" {
			t.Fatalf("h = %q, want rwmutex, the cut until, r and the kind's own rest kept", h)
		}
		between(t, "h's until", msField(t, k["h"], 1), before+20000, after+20000)
		// Grace 0 removes every record, dead ones too, and h; no q: no
		// "released".
		if n := force("{r}", 0); n != 2 {
			t.Fatalf("force unlock of 2 revoked readers = %d, want 2", n)
		}
		expect("removing readers", rv("c1", "{r}", "ra1", "r1"), rv("c2", "{r}", "ra2", "r2"))
		k = e.hash(t, "{r}")
		if len(k) != 2 || k["w:wr"] != "entry" || k["f"] != "42" {
			t.Fatalf("K after removing the readers = %v, want only f and w:wr", k)
		}

		// Semaphore permits: two holders, a stored limit, a waiter (q live).
		now = e.nowMs(t)
		e.set(t, "{s}", "h", fmt.Sprintf("semaphore\t%d\tp\t3", now+60000), "l", "5",
			"p:o1", fmt.Sprintf("%d\th\t2\tc1\to1\t%s", now+60000, meta),
			"p:o2", fmt.Sprintf("%d\tg\t1\tc2\to2\t%s", now+60000, meta),
			"q", strconv.FormatInt(now+60000, 10))
		if n := force("{s}", 5000); n != 2 {
			t.Fatalf("force unlock of 2 permit holders = %d, want 2", n)
		}
		expect("revoking permits", rv("c1", "{s}", "o1", "o1"), rv("c2", "{s}", "o2", "o2"))
		k = e.hash(t, "{s}")
		if fieldAt(t, k["p:o1"], 1) != "x" || fieldAt(t, k["p:o2"], 1) != "x" || fieldAt(t, k["p:o2"], 2) != "1" {
			t.Fatalf("permit records after revoking: %q, %q", k["p:o1"], k["p:o2"])
		}
		if n := force("{s}", 0); n != 2 {
			t.Fatalf("force unlock with grace 0 = %d, want 2", n)
		}
		expect("removing permits", rv("c1", "{s}", "o1", "o1"), rv("c2", "{s}", "o2", "o2"), "{s}:released released")
		k = e.hash(t, "{s}")
		if len(k) != 2 || k["l"] != "5" || k["q"] == "" {
			t.Fatalf("K after removing the permits = %v, want only l and q", k)
		}

		// Several holds of one client go in one message: "revoke 3 {b}\n"
		// then "<attempt> <owner bytes> <owner>\n" each (an RWMutex call's
		// identity holds a tab).
		now = e.nowMs(t)
		e.set(t, "{b}", "h", fmt.Sprintf("rwmutex\t%d\tr\t2", now+60000),
			"r:r1", fmt.Sprintf("%d\th\t1\tc1\tra1\t{}", now+60000),
			"r:tok\tra2", fmt.Sprintf("%d\th\t1\tc1\tra2\t{}", now+60000))
		if n := force("{b}", 1000); n != 2 {
			t.Fatalf("force unlock of 2 readers of one client = %d, want 2", n)
		}
		m := next()
		body, ok := strings.CutPrefix(m, "redlua:revoke:c1 revoke 3 {b}\n")
		lines := sorted(strings.Split(strings.TrimSuffix(body, "\n"), "\n"))
		if !ok || len(lines) != 2 || lines[0] != "ra1 2 r1" || lines[1] != "ra2 7 tok\tra2" {
			t.Fatalf("the batched message = %q, want revoke 3 {b}\\n, then ra1 2 r1 and ra2 7 tok\\tra2", m)
		}
		quiet()

		// Arguments outside their bounds are refused, naming them.
		for _, grace := range []any{-1, "1.5", "x", 604800001} {
			_, err := e.run("lock.forceunlock@4", []string{"{m}"}, grace, "PUBLISH", "{m}:released", "redlua:revoke:", "0", 100)
			if err == nil || !strings.Contains(err.Error(), "grace_ms must be") {
				t.Fatalf("grace_ms %v: err %v, want one naming grace_ms", grace, err)
			}
		}
		_, err := e.run("lock.forceunlock@4", []string{"{m}"}, 0, "XPUBLISH", "{m}:released", "redlua:revoke:", "0", 100)
		if err == nil || !strings.Contains(err.Error(), "publish must be") {
			t.Fatalf("publish XPUBLISH: err %v, want one naming publish", err)
		}
		for _, bad := range [][2]any{{"-1", 100}, {"x", 100}, {"1.5", 100}, {"0", 0}, {"0", 1001}, {"0", "1.5"}} {
			_, err := e.run("lock.forceunlock@4", []string{"{m}"}, 0, "PUBLISH", "{m}:released", "redlua:revoke:", bad[0], bad[1])
			if err == nil || !strings.Contains(err.Error(), "must be a whole number") {
				t.Fatalf("cursor %v, count %v: err %v, want one naming them", bad[0], bad[1], err)
			}
		}
	})
}

func sorted(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// lock.inspect@3 returns the server's time, the hold's fields (h, f, q, l),
// the queues' lengths, HSCAN's next cursor, the page's fields and the
// queue rank of each waiter in the page; a key of another type reads as
// empty, a missing one too.
func TestLockInspect(t *testing.T) {
	scriptEnvs(t, func(t *testing.T, e scriptEnv) {
		now := e.nowMs(t)
		h := fmt.Sprintf("mutex\t%d\th\t1\tc1\ta1\talice\t{}", now+60000)
		e.set(t, "{i}", "h", h, "f", "12", "w:bob", "1\t2", "w:dan", "1\t2")
		for _, args := range [][]any{{"ZADD", "{i}:queue", 2, "bob", 1, "carol"}, {"SET", "{i}:squeue", "not a zset"}} {
			if _, err := e.do(args...); err != nil {
				t.Fatal(err)
			}
		}
		before := e.nowMs(t)
		v, err := e.run("lock.inspect@3", []string{"{i}", "{i}:queue", "{i}:squeue"}, "0", 100)
		if err != nil {
			t.Fatal(err)
		}
		after := e.nowMs(t)
		reply := v.([]any)
		if len(reply) != 6 {
			t.Fatalf("reply %v, want 6 parts", reply)
		}
		between(t, "the server time", reply[0].(int64), before, after)
		if got := fmt.Sprint(reply[1]); got != fmt.Sprint([]any{h, "12", "", ""}) {
			t.Fatalf("the hold = %s", got)
		}
		if got := fmt.Sprint(reply[2:4]); got != "[[2 0] 0]" {
			t.Fatalf("queue lengths and cursor = %s, want [[2 0] 0]", got)
		}
		fields := map[string]string{}
		var waiters []string
		flat := reply[4].([]any)
		for i := 0; i+1 < len(flat); i += 2 {
			fields[flat[i].(string)] = flat[i+1].(string)
			if strings.HasPrefix(flat[i].(string), "w:") {
				waiters = append(waiters, flat[i].(string))
			}
		}
		if len(fields) != 4 || fields["h"] != h || fields["f"] != "12" {
			t.Fatalf("K's fields = %v", fields)
		}
		ranks := reply[5].([]any)
		want := map[string]int64{"w:bob": 1, "w:dan": -1}
		if len(ranks) != len(waiters) {
			t.Fatalf("ranks %v for waiters %v", ranks, waiters)
		}
		for i, w := range waiters {
			if ranks[i].(int64) != want[w] {
				t.Fatalf("rank of %s = %v, want %d", w, ranks[i], want[w])
			}
		}
		v, err = e.run("lock.inspect@3", []string{"{free}", "{free}:queue", "{free}:squeue"}, "0", 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(v.([]any)[1:]); got != "[[   ] [0 0] 0 [] []]" {
			t.Fatalf("inspect of a free name = %s", got)
		}
		for _, bad := range [][2]any{{"-1", 100}, {"x", 100}, {"0", 0}, {"0", 1001}} {
			_, err := e.run("lock.inspect@3", []string{"{i}", "{i}:queue", "{i}:squeue"}, bad[0], bad[1])
			if err == nil || !strings.Contains(err.Error(), "must be a whole number") {
				t.Fatalf("cursor %v, count %v: err %v, want one naming them", bad[0], bad[1], err)
			}
		}
	})
}

// A hash too big for a listpack pages: every field comes back within a
// bounded number of pages of at most about count fields each.
func TestLockInspectPages(t *testing.T) {
	scriptEnvs(t, func(t *testing.T, e scriptEnv) {
		args := []any{"HSET", "{big}", "f", "1"}
		for i := range 3000 {
			args = append(args, fmt.Sprintf("w:%05d", i), "1\t2")
		}
		if _, err := e.do(args...); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		cursor, pages := "0", 0
		for {
			pages++
			if pages > 100 {
				t.Fatal("the scan did not end within 100 pages")
			}
			v, err := e.run("lock.inspect@3", []string{"{big}", "{big}:queue", "{big}:squeue"}, cursor, 100)
			if err != nil {
				t.Fatal(err)
			}
			reply := v.([]any)
			flat := reply[4].([]any)
			if len(flat)/2 > 300 {
				t.Fatalf("a page of count 100 returned %d fields", len(flat)/2)
			}
			for i := 0; i < len(flat); i += 2 {
				seen[flat[i].(string)] = true
			}
			if cursor = reply[3].(string); cursor == "0" {
				break
			}
		}
		if len(seen) != 3001 || pages < 10 {
			t.Fatalf("%d fields in %d pages, want 3001 in at least 10", len(seen), pages)
		}
	})
}
