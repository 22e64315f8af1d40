package lua_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// The undo of an acquisition whose caller gave up (rw.leave, sem.undo,
// mutex.undo) against rw.rlock, rw.lock,
// sem.acquire and multi.acquire on a real server: the undo
// records the attempt, which then takes nothing and leaves no trace when it
// arrives late, while another attempt of the same owner still takes the
// lock; the record's expiry only moves forward; the undo drops a hold only
// if its attempt took it; multi.acquire keeps the fencing token in the
// lock hash (f) and refuses another kind of lock.
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
		return run("rw.leave@6", []string{lock, lock + ":rw"}, owner, attempt, goneTTL, hold, "PUBLISH")
	}
	mutexUndo := func(lock, owner, attempt string) int64 {
		return run("mutex.undo@6", []string{lock, lock + ":queue", lock + ":gone"}, owner, attempt, 60000, "PUBLISH")[0].(int64)
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
	if _, err := call("rw.leave@6", []string{"{x}", "{x}:rw"}, "", "x3", 0, "r", "PUBLISH"); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be a positive") {
		t.Fatalf("gone_ttl_ms 0 = %v, want an error naming gone_ttl_ms", err)
	}
	if _, err := call("sem.undo@5", semKeys("s"), "o", -5); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be") {
		t.Fatalf("sem.undo with gone_ttl_ms -5 = %v, want an error naming gone_ttl_ms", err)
	}
	// mutex.undo moves the hash's expiry only forward too, and records the
	// attempt as g:<attempt> = its end.
	undoKeys := []string{"{u}", "{u}:queue", "{u}:gone"}
	run("mutex.undo@6", undoKeys, "alice", "u1", 60000, "PUBLISH")
	run("mutex.undo@6", undoKeys, "bob", "u2", 1000, "PUBLISH")
	if ttl := rc.PTTL(ctx, "{u}").Val(); ttl < 50*time.Second {
		t.Fatalf("after a 60 s record, a 1 s one left PTTL %v: the expiry moved back", ttl)
	}
	if end, _ := rc.HGet(ctx, "{u}", "g:u1").Int64(); end < time.Now().Add(50*time.Second).UnixMilli() {
		t.Fatalf("g:u1 = %d, want the record's end, about 60 s ahead", end)
	}
	if _, err := call("mutex.undo@6", undoKeys, "alice", "u3", "soon", "PUBLISH"); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be") {
		t.Fatalf("mutex.undo with gone_ttl_ms %q = %v, want an error naming gone_ttl_ms", "soon", err)
	}
	if n := len(rc.HKeys(ctx, "{u}").Val()); n != 2 {
		t.Fatalf("the refused undo wrote: {u} holds %d fields, want 2", n)
	}

	multiKeys := []string{"{m}a", "{m}b"}
	cases := []struct {
		id, tag string
		keys    []string
		args    func(attempt string) []any
		undo    func(attempt string)
	}{
		{"rw.rlock@7", "r", []string{"{r}", "{r}:rw"},
			func(a string) []any { return []any{"r:alice", 10000, "g:" + a, "wq--c1\t" + a + "\t{}"} },
			func(a string) { leave("{r}", "alice", a, "r", 60000) }},
		{"rw.lock@7", "w", []string{"{w}", "{w}:rw"},
			func(a string) []any { return []any{"alice", 10000, "g:" + a, "wq--00003000c1\t" + a + "\talice\t{}"} },
			func(a string) { leave("{w}", "alice", a, "w", 60000) }},
		// A Semaphore call's owner token is its attempt id.
		{"sem.acquire@11", "s", semKeys("s"),
			func(a string) []any { return []any{a, 1, 10000, 2, "c1\t" + a + "\t{}", "3000 PUBLISH"} },
			func(a string) { run("sem.undo@5", semKeys("s"), a, 60000) }},
		{"multi.acquire@6", "m", multiKeys,
			func(a string) []any { return []any{"alice", 10000, a, "c1", ""} },
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
	if h := rc.HGet(ctx, "{m}a", "h").Val(); !strings.Contains(h, "\tfresh\talice\t") {
		t.Errorf("after another attempt's undo {m}a's hold is %q, want alice's (attempt fresh)", h)
	}

	// multi.acquire: tokens continue from the fence kept in each lock hash.
	rc.Del(ctx, "{m}a", "{m}b")
	future := time.Now().Add(time.Hour).UnixMicro()
	rc.HSet(ctx, "{m}b", "f", future)
	got := run("multi.acquire@6", multiKeys, "bob", 10000, "b1", "c1", "{}")
	if h := rc.HGet(ctx, "{m}b", "h").Val(); !strings.HasPrefix(h, "mutex\t") || !strings.HasSuffix(h, "\th\t1\tc1\tb1\tbob\t{}") {
		t.Errorf("multi.acquire wrote h %q, want mutex, until, h, 1, c1, b1, bob, {}", h)
	}
	if got[0] != int64(1) || got[2] != future+1 || got[1].(int64) >= future {
		t.Fatalf("multi.acquire = %v, want {1, server time, %d}: the token follows the hash's last fence", got, future+1)
	}
	if f := rc.HGet(ctx, "{m}a", "f").Val(); f == "" {
		t.Fatal("multi.acquire left no f field in the lock hash")
	}
	if got := run("multi.acquire@6", multiKeys, "carol", 10000, "c1", "c1", ""); got[0] != int64(0) || got[1] != int64(1) {
		t.Fatalf("multi.acquire@6 on held locks = %v, want {0, 1, hint}", got)
	}

	// Another kind of lock on one of the names is refused, naming it, while
	// its hold lasts.
	rc.Del(ctx, "{m}a", "{m}b")
	far := time.Now().Add(time.Hour).UnixMilli()
	rc.HSet(ctx, "{m}b", "h", fmt.Sprintf("semaphore\t%d\tp\t1", far))
	if got := run("multi.acquire@6", multiKeys, "carol", 10000, "c3", "c1", ""); got[0] != int64(-1) || got[1] != int64(2) || got[2] != "semaphore" {
		t.Fatalf("multi.acquire@6 with a semaphore on the second name = %v, want {-1, 2, semaphore}", got)
	}
	rc.Del(ctx, "{m}b")
	rc.HSet(ctx, "{m}a", "h", fmt.Sprintf("rwmutex\t%d\tr\t1", far))
	if got := run("multi.acquire@6", multiKeys, "carol", 10000, "c4", "c1", ""); got[0] != int64(-1) || got[1] != int64(1) || got[2] != "rwmutex" {
		t.Fatalf("multi.acquire@6 with readers on the first name = %v, want {-1, 1, rwmutex}", got)
	}
	if n := rc.Exists(ctx, "{m}b").Val(); n != 0 {
		t.Fatal("a refused multi.acquire@6 wrote the second lock")
	}
	rc.HSet(ctx, "{m}a", "h", fmt.Sprintf("rwmutex\t%d\tr\t1", time.Now().Add(-time.Second).UnixMilli()))
	if got := run("multi.acquire@6", multiKeys, "carol", 10000, "c5", "c1", ""); got[0] != int64(1) {
		t.Fatalf("multi.acquire@6 where the readers' hold ended = %v, want {1, ...}", got)
	}
	// Without lock keys: evalsha refuses before sending, and the script
	// itself when it is called some other way.
	if _, err := call("multi.acquire@6", nil, "carol", 10000, "c2", "c1", ""); err == nil || !strings.Contains(err.Error(), "KEYS") {
		t.Fatalf("multi.acquire@6 without lock keys = %v, want an error", err)
	}
	s, err := scripts(t).Lookup("multi.acquire@6")
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Eval(ctx, s.Source, nil, "carol", 10000, "c2", "c1", "").Err(); err == nil || !strings.Contains(err.Error(), "one lock key per lock") {
		t.Fatalf("EVAL of multi.acquire@6 without lock keys = %v, want the script's error", err)
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
