package lua_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// The undo of an acquisition whose caller gave up (rw.runlock, rw.unlock,
// sem.release, mutex.undo) against rw.rlock, rw.lock,
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
	runlockKeys := []string{"{r}:readers", "{r}:holds", "{r}:gone", "{r}:waiting", "{r}:wclients"}
	runlock := func(owner, attempt string, goneTTL int) []any {
		return run("rw.runlock@4", runlockKeys, owner, "{r}:released", "PUBLISH", attempt, goneTTL, "{r}:grant:")
	}
	writerUndo := func(owner, attempt string) int64 {
		return run("rw.unlock@1", []string{"{w}", "{w}:gone", "{w}:waiting", "{w}:wclients"},
			owner, "{w}:released", "{w}:grant:", "PUBLISH", attempt, 60000)[0].(int64)
	}
	mutexUndo := func(lock, owner, attempt string) int64 {
		return run("mutex.undo@3", []string{lock, lock + ":queue"}, owner, attempt, 60000, "PUBLISH")[0].(int64)
	}

	// The record, and its expiry: an empty owner only records.
	if got := runlock("", "x1", 60000); got[0] != int64(0) {
		t.Fatalf("rw.runlock with no owner = %v, want 0: recorded only", got)
	}
	runlock("", "x2", 1000)
	if ttl := rc.PTTL(ctx, "{r}:gone").Val(); ttl < 50*time.Second {
		t.Fatalf("a shorter record moved the gone hash's expiry back: PTTL %v, want about 60s", ttl)
	}
	if n := rc.HLen(ctx, "{r}:gone").Val(); n != 2 {
		t.Fatalf("gone holds %d attempts, want 2", n)
	}
	if _, err := call("rw.runlock@4", runlockKeys, "", "{r}:released", "PUBLISH", "x3", 0, "{r}:grant:"); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be a positive") {
		t.Fatalf("gone_ttl_ms 0 = %v, want an error naming gone_ttl_ms", err)
	}
	semReleaseKeys := []string{"{s}:permits", "{s}:gone", "{s}:limit", "{s}:squeue", "{s}:swaiters", "{s}:fence", "{s}:soffers"}
	if _, err := call("sem.release@5", semReleaseKeys, "o", 1, "{s}:released", "PUBLISH", "x3", -5, "{s}:grant:"); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be a positive") {
		t.Fatalf("sem.release with gone_ttl_ms -5 = %v, want an error naming gone_ttl_ms", err)
	}
	// mutex.undo moves the hash's expiry only forward too, and records the
	// attempt as g:<attempt> = its end.
	undoKeys := []string{"{u}", "{u}:queue"}
	run("mutex.undo@3", undoKeys, "alice", "u1", 60000, "PUBLISH")
	run("mutex.undo@3", undoKeys, "bob", "u2", 1000, "PUBLISH")
	if ttl := rc.PTTL(ctx, "{u}").Val(); ttl < 50*time.Second {
		t.Fatalf("after a 60 s record, a 1 s one left PTTL %v: the expiry moved back", ttl)
	}
	if end, _ := rc.HGet(ctx, "{u}", "g:u1").Int64(); end < time.Now().Add(50*time.Second).UnixMilli() {
		t.Fatalf("g:u1 = %d, want the record's end, about 60 s ahead", end)
	}
	if _, err := call("mutex.undo@3", undoKeys, "alice", "u3", "soon", "PUBLISH"); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be") {
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
		{"rw.rlock@3", "r", []string{"{r}", "{r}:readers", "{r}:holds", "{r}:waiting", "{r}:fence", "{r}:permits", "{r}:gone"},
			func(a string) []any { return []any{"alice", 10000, "1", a} },
			func(a string) { runlock("alice", a, 60000) }},
		{"rw.lock@4", "w", []string{"{w}", "{w}:readers", "{w}:holds", "{w}:waiting", "{w}:fence", "{w}:permits", "{w}:gone", "{w}:wclients"},
			func(a string) []any { return []any{"alice", 10000, 3000, "", a, "c1"} },
			func(a string) { writerUndo("alice", a) }},
		{"sem.acquire@6", "s", []string{"{s}:permits", "{s}:limit", "{s}:fence", "{s}", "{s}:readers", "{s}:gone", "{s}:squeue", "{s}:swaiters", "{s}:soffers"},
			func(a string) []any { return []any{"alice", 1, 10000, 2, a, 3000, "c1", "{s}:grant:", "PUBLISH"} },
			func(a string) {
				run("sem.release@5", semReleaseKeys, "alice", 1, "{s}:released", "PUBLISH", a, 60000, "{s}:grant:")
			}},
		{"multi.acquire@5", "m", multiKeys,
			func(a string) []any { return []any{"alice", 10000, a, "c1", ""} },
			func(a string) { mutexUndo("{m}a", "alice", a); mutexUndo("{m}b", "alice", a) }},
	}
	for _, tc := range cases {
		// Taken, then undone: the hold is gone and the attempt recorded.
		if got := run(tc.id, tc.keys, tc.args("first")...); got[0] != int64(1) {
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
		if got := run(tc.id, tc.keys, tc.args("fresh")...); got[0] != int64(1) {
			t.Errorf("%s: another attempt of the same owner = %v, want {1, token, ...}", tc.id, got)
		}
	}

	// The undo of another attempt of the owner leaves the writer's hold and
	// the MultiLock's holds, taken by "fresh" above, alone.
	if got := writerUndo("alice", "other"); got != 2 {
		t.Errorf("undoing another attempt of the writer's owner = %d, want 2 (not this attempt's hold)", got)
	}
	if owner := rc.HGet(ctx, "{w}", "owner").Val(); owner != "alice" {
		t.Errorf("after another attempt's undo the writer is %q, want alice", owner)
	}
	mutexUndo("{m}a", "alice", "other")
	if h := rc.HGet(ctx, "{m}a", "h").Val(); !strings.Contains(h, "\tfresh\talice\t") {
		t.Errorf("after another attempt's undo {m}a's hold is %q, want alice's (attempt fresh)", h)
	}

	// multi.acquire: tokens continue from the fence kept in each lock hash.
	rc.Del(ctx, "{m}a", "{m}b")
	future := time.Now().Add(time.Hour).UnixMicro()
	rc.HSet(ctx, "{m}b", "f", future)
	got := run("multi.acquire@5", multiKeys, "bob", 10000, "b1", "c1", "{}")
	if h := rc.HGet(ctx, "{m}b", "h").Val(); !strings.HasPrefix(h, "mutex\t") || !strings.HasSuffix(h, "\th\t1\tc1\tb1\tbob\t{}") {
		t.Errorf("multi.acquire wrote h %q, want mutex, until, h, 1, c1, b1, bob, {}", h)
	}
	if got[0] != int64(1) || got[2] != future+1 || got[1].(int64) >= future {
		t.Fatalf("multi.acquire = %v, want {1, server time, %d}: the token follows the hash's last fence", got, future+1)
	}
	if f := rc.HGet(ctx, "{m}a", "f").Val(); f == "" {
		t.Fatal("multi.acquire left no f field in the lock hash")
	}
	if got := run("multi.acquire@5", multiKeys, "carol", 10000, "c1", "c1", ""); got[0] != int64(0) || got[1] != int64(1) {
		t.Fatalf("multi.acquire@5 on held locks = %v, want {0, 1, hint}", got)
	}

	// Another kind of lock on one of the names is refused, naming it, while
	// its hold lasts.
	rc.Del(ctx, "{m}a", "{m}b")
	far := time.Now().Add(time.Hour).UnixMilli()
	rc.HSet(ctx, "{m}b", "h", fmt.Sprintf("semaphore\t%d\tp\t1", far))
	if got := run("multi.acquire@5", multiKeys, "carol", 10000, "c3", "c1", ""); got[0] != int64(-1) || got[1] != int64(2) || got[2] != "semaphore" {
		t.Fatalf("multi.acquire@5 with a semaphore on the second name = %v, want {-1, 2, semaphore}", got)
	}
	rc.Del(ctx, "{m}b")
	rc.HSet(ctx, "{m}a", "h", fmt.Sprintf("rwmutex\t%d\tr\t1", far))
	if got := run("multi.acquire@5", multiKeys, "carol", 10000, "c4", "c1", ""); got[0] != int64(-1) || got[1] != int64(1) || got[2] != "rwmutex" {
		t.Fatalf("multi.acquire@5 with readers on the first name = %v, want {-1, 1, rwmutex}", got)
	}
	if n := rc.Exists(ctx, "{m}b").Val(); n != 0 {
		t.Fatal("a refused multi.acquire@5 wrote the second lock")
	}
	rc.HSet(ctx, "{m}a", "h", fmt.Sprintf("rwmutex\t%d\tr\t1", time.Now().Add(-time.Second).UnixMilli()))
	if got := run("multi.acquire@5", multiKeys, "carol", 10000, "c5", "c1", ""); got[0] != int64(1) {
		t.Fatalf("multi.acquire@5 where the readers' hold ended = %v, want {1, ...}", got)
	}
	// Without lock keys: evalsha refuses before sending, and the script
	// itself when it is called some other way.
	if _, err := call("multi.acquire@5", nil, "carol", 10000, "c2", "c1", ""); err == nil || !strings.Contains(err.Error(), "KEYS") {
		t.Fatalf("multi.acquire@5 without lock keys = %v, want an error", err)
	}
	s, err := scripts(t).Lookup("multi.acquire@5")
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Eval(ctx, s.Source, nil, "carol", 10000, "c2", "c1", "").Err(); err == nil || !strings.Contains(err.Error(), "one lock key per lock") {
		t.Fatalf("EVAL of multi.acquire@5 without lock keys = %v, want the script's error", err)
	}
}
