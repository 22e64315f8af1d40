package lua_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
)

// The undo of an acquisition whose caller gave up (rw.leave, sem.undo,
// mutex.release with an attempt id) against rw.rlock, rw.lock,
// sem.acquire and multi.acquire on a real server: the undo
// records the attempt, which then takes nothing and leaves no trace when it
// arrives late, while another attempt of the same owner still takes the
// lock; the record's expiry only moves forward; the undo drops a hold only
// if its attempt took it; multi.acquire keeps the fencing token in the
// lock hash and refuses another kind of lock.
func TestUndoRefusesLateAttempts(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	run := mustRun(t, call)
	keysOf := func(tag string) []string {
		n, err := rc.Keys(ctx, "{"+tag+"}*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	leave := func(lock, owner, attempt, hold string, goneTTL int) []any {
		return run("rw.leave@4", []string{lock}, owner, attempt, goneTTL, hold, "PUBLISH")
	}
	mutexUndo := func(lock, owner, attempt string) int64 {
		return run("mutex.release@5", []string{lock, lock + ":queue", lock + ":waiters", lock + ":gone"},
			owner, lock+":released", lock+":grant:", "PUBLISH", attempt, 60000, "")[0].(int64)
	}

	// The record, and its expiry: an empty owner only records.
	if got := leave("{x}", "", "x1", "r", 60000); got[0] != int64(0) {
		t.Fatalf("rw.leave with no owner = %v, want 0: recorded only", got)
	}
	leave("{x}", "", "x2", "w", 1000)
	if ttl := rc.PTTL(ctx, "{x}").Val(); ttl < 50*time.Second {
		t.Fatalf("a shorter record moved the lock hash's expiry back: PTTL %v, want about 60s", ttl)
	}
	if m := rc.HGetAll(ctx, "{x}").Val(); len(m) != 2 || m["g:x1"] == "" || m["g:x2"] == "" {
		t.Fatalf("the lock hash holds %v, want g:x1 and g:x2", m)
	}
	if _, err := call("rw.leave@4", []string{"{x}"}, "", "x3", 0, "r", "PUBLISH"); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be a positive") {
		t.Fatalf("gone_ttl_ms 0 = %v, want an error naming gone_ttl_ms", err)
	}
	if _, err := call("sem.undo@2", semKeys("s"), "o", -5); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be") {
		t.Fatalf("sem.undo with gone_ttl_ms -5 = %v, want an error naming gone_ttl_ms", err)
	}
	// mutex.release moves the expiry only forward too.
	undoKeys := []string{"{u}", "{u}:queue", "{u}:waiters", "{u}:gone"}
	run("mutex.release@5", undoKeys, "alice", "{u}:released", "{u}:grant:", "PUBLISH", "u1", 60000, "")
	run("mutex.release@5", undoKeys, "bob", "{u}:released", "{u}:grant:", "PUBLISH", "u2", 1000, "")
	if ttl := rc.PTTL(ctx, "{u}:gone").Val(); ttl < 50*time.Second {
		t.Fatalf("after a 60 s record, a 1 s one left PTTL %v: the expiry moved back", ttl)
	}
	if _, err := call("mutex.release@5", undoKeys, "alice", "{u}:released", "{u}:grant:", "PUBLISH", "u3", "soon", ""); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be a positive") {
		t.Fatalf("mutex.release with gone_ttl_ms %q = %v, want an error naming gone_ttl_ms", "soon", err)
	}
	if n := rc.HLen(ctx, "{u}:gone").Val(); n != 2 {
		t.Fatalf("the refused undo wrote: gone holds %d attempts, want 2", n)
	}

	multiKeys := []string{"{m}a:gone", "{m}a", "{m}a:readers", "{m}a:permits", "{m}b", "{m}b:readers", "{m}b:permits"}
	cases := []struct {
		id, tag string
		keys    []string
		args    func(attempt string) []any
		undo    func(attempt string)
	}{
		{"rw.rlock@4", "r", []string{"{r}"},
			func(a string) []any { return []any{"r:alice", 10000, "g:" + a, "wq--c1\t" + a + "\t{}"} },
			func(a string) { leave("{r}", "alice", a, "r", 60000) }},
		{"rw.lock@5", "w", []string{"{w}"},
			func(a string) []any { return []any{"alice", 10000, "g:" + a, "wq--00003000c1\t" + a + "\talice\t{}"} },
			func(a string) { leave("{w}", "alice", a, "w", 60000) }},
		// A Semaphore call's owner token is its attempt id.
		{"sem.acquire@8", "s", semKeys("s"),
			func(a string) []any { return []any{a, 1, 10000, 2, "c1\t" + a + "\t{}", "3000 PUBLISH"} },
			func(a string) { run("sem.undo@2", semKeys("s"), a, 60000) }},
		{"multi.acquire@3", "m", multiKeys,
			func(a string) []any { return []any{"alice", 10000, "", a} },
			func(a string) { mutexUndo("{m}a", "alice", a); mutexUndo("{m}b", "alice", a) }},
	}
	for _, tc := range cases {
		// Taken, then undone: the hold is gone and the attempt recorded.
		if got := run(tc.id, tc.keys, tc.args("first")...); !tookIt(got) {
			t.Fatalf("%s: a free lock = %v, want {1, token, ...}", tc.id, got)
		}
		tc.undo("first")
		if got := run(tc.id, tc.keys, tc.args("first")...); got[0] != int64(0) || got[1] != int64(0) {
			t.Errorf("%s: the undone attempt again = %v, want {0, 0, ...}: refused", tc.id, got)
		}
		// Undone before it arrives: it takes nothing and writes nothing.
		tc.undo("late")
		before := keysOf(tc.tag)
		if got := run(tc.id, tc.keys, tc.args("late")...); got[0] != int64(0) || got[1] != int64(0) {
			t.Errorf("%s: a recorded attempt = %v, want {0, 0, ...}: refused", tc.id, got)
		}
		if after := keysOf(tc.tag); len(after) != len(before) {
			t.Errorf("%s: a refused attempt wrote keys: %v, before %v", tc.id, after, before)
		}
		if got := run(tc.id, tc.keys, tc.args("fresh")...); !tookIt(got) {
			t.Errorf("%s: another attempt of the same owner = %v, want {1, token, ...}", tc.id, got)
		}
	}

	// The undo of another attempt of the owner leaves the writer's hold and
	// the MultiLock's holds, taken by "fresh" above, alone.
	if got := leave("{w}", "alice", "other", "w", 60000); got[0] != int64(0) {
		t.Errorf("undoing another attempt of the writer's owner = %v, want 0 (not this attempt's hold)", got)
	}
	if h := strings.Split(rc.HGet(ctx, "{w}", "h").Val(), "\t"); len(h) < 7 || h[6] != "alice" {
		t.Errorf("after another attempt's undo the writer's h is %q, want alice's", h)
	}
	mutexUndo("{m}a", "alice", "other")
	if owner := rc.HGet(ctx, "{m}a", "owner").Val(); owner != "alice" {
		t.Errorf("after another attempt's undo {m}a is held by %q, want alice", owner)
	}

	// multi.acquire: tokens continue from the fence kept in each lock hash.
	rc.Del(ctx, "{m}a", "{m}b")
	future := time.Now().Add(time.Hour).UnixMicro()
	rc.HSet(ctx, "{m}b", "fence", future)
	got := run("multi.acquire@3", multiKeys, "bob", 10000, "", "b1")
	if a := rc.HGet(ctx, "{m}b", "attempt").Val(); a != "b1" {
		t.Errorf("multi.acquire recorded attempt %q in the lock hash, want b1", a)
	}
	if got[0] != int64(1) || got[2] != future+1 || got[1].(int64) >= future {
		t.Fatalf("multi.acquire = %v, want {1, server time, %d}: the token follows the hash's last fence", got, future+1)
	}
	if f := rc.HGet(ctx, "{m}a", "fence").Val(); f == "" {
		t.Fatal("multi.acquire@3 left no fence field in the lock hash")
	}
	if got := run("multi.acquire@3", multiKeys, "carol", 10000, "", "c1"); got[0] != int64(0) || got[1] != int64(1) {
		t.Fatalf("multi.acquire@3 on held locks = %v, want {0, 1, pttl}", got)
	}

	// Another kind of lock on one of the names is refused, naming it.
	rc.Del(ctx, "{m}a", "{m}b")
	far := float64(time.Now().Add(time.Hour).UnixMilli())
	rc.ZAdd(ctx, "{m}b:permits", redis.Z{Score: far, Member: "sem-owner:1"})
	if got := run("multi.acquire@3", multiKeys, "carol", 10000, "", "c3"); got[0] != int64(-1) || got[1] != int64(2) || got[2] != "semaphore" {
		t.Fatalf("multi.acquire@3 with a semaphore on the second name = %v, want {-1, 2, semaphore}", got)
	}
	rc.Del(ctx, "{m}b:permits")
	rc.ZAdd(ctx, "{m}a:readers", redis.Z{Score: far, Member: "reader"})
	if got := run("multi.acquire@3", multiKeys, "carol", 10000, "", "c4"); got[0] != int64(-1) || got[1] != int64(1) || got[2] != "rwmutex" {
		t.Fatalf("multi.acquire@3 with a reader on the first name = %v, want {-1, 1, rwmutex}", got)
	}
	rc.Del(ctx, "{m}a:readers")
	rc.HSet(ctx, "{m}b", "owner", "writer", "kind", "rwmutex")
	if got := run("multi.acquire@3", multiKeys, "carol", 10000, "", "c5"); got[0] != int64(-1) || got[1] != int64(2) || got[2] != "rwmutex" {
		t.Fatalf("multi.acquire@3 with a writer on the second name = %v, want {-1, 2, rwmutex}", got)
	}
	if n := rc.Exists(ctx, "{m}a").Val(); n != 0 {
		t.Fatal("a refused multi.acquire@3 wrote the first lock")
	}
	// Without lock keys: evalsha refuses before sending, and the script
	// itself when it is called some other way.
	if _, err := call("multi.acquire@3", []string{"{m}a:gone"}, "carol", 10000, "", "c2"); err == nil || !strings.Contains(err.Error(), "at least 2 KEYS") {
		t.Fatalf("multi.acquire@3 without lock keys = %v, want an error", err)
	}
	s, err := scripts(t).Lookup("multi.acquire@3")
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Eval(ctx, s.Source, []string{"{m}a:gone", "{m}a"}, "carol", 10000, "", "c2").Err(); err == nil || !strings.Contains(err.Error(), "a lock, readers and permits key per lock") {
		t.Fatalf("EVAL of multi.acquire@3 without lock keys = %v, want the script's error", err)
	}
}

// tookIt says an acquire script's reply grants: {1, token, ...}, or the
// token alone (an integer).
func tookIt(reply []any) bool {
	if len(reply) == 1 {
		token, ok := reply[0].(int64)
		return ok && token > 1
	}
	return reply[0] == int64(1)
}
