package lua_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
)

// gone.record@1 with rw.rlock@3, rw.lock@3, sem.acquire@4 and
// multi.acquire@3 on a real server: an attempt recorded as given up takes
// nothing and leaves no trace when it arrives late, while another attempt of
// the same owner still takes the lock; the record's expiry only moves
// forward; multi.acquire@3 keeps the fencing token in the lock hash.
func TestGoneRecordRefusesLateAttempts(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	run := func(id string, keys []string, args ...any) []any {
		t.Helper()
		v, err := call(id, keys, args...)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if list, ok := v.([]any); ok {
			return list
		}
		return []any{v}
	}
	keysOf := func(tag string) []string {
		n, err := rc.Keys(ctx, "{"+tag+"}*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The record, and its expiry.
	run("gone.record@1", []string{"{g}:gone"}, "x1", 60000)
	run("gone.record@1", []string{"{g}:gone"}, "x2", 1000)
	if ttl := rc.PTTL(ctx, "{g}:gone").Val(); ttl < 50*time.Second {
		t.Fatalf("a shorter record moved the gone hash's expiry back: PTTL %v, want about 60s", ttl)
	}
	if n := rc.HLen(ctx, "{g}:gone").Val(); n != 2 {
		t.Fatalf("gone holds %d attempts, want 2", n)
	}
	if _, err := call("gone.record@1", []string{"{g}:gone"}, "x3", 0); err == nil || !strings.Contains(err.Error(), "gone_ttl_ms must be a positive") {
		t.Fatalf("gone_ttl_ms 0 = %v, want an error naming gone_ttl_ms", err)
	}

	multiKeys := []string{"{m}a:gone", "{m}a", "{m}a:readers", "{m}a:permits", "{m}b", "{m}b:readers", "{m}b:permits"}
	cases := []struct {
		id, tag string
		keys    []string
		args    func(attempt string) []any
	}{
		{"rw.rlock@3", "r", []string{"{r}", "{r}:readers", "{r}:holds", "{r}:waiting", "{r}:fence", "{r}:permits", "{r}:gone"},
			func(a string) []any { return []any{"alice", 10000, "1", a} }},
		{"rw.lock@3", "w", []string{"{w}", "{w}:readers", "{w}:holds", "{w}:waiting", "{w}:fence", "{w}:permits", "{w}:gone"},
			func(a string) []any { return []any{"alice", 10000, 3000, "", a} }},
		{"sem.acquire@4", "s", []string{"{s}:permits", "{s}:limit", "{s}:fence", "{s}", "{s}:readers", "{s}:gone"},
			func(a string) []any { return []any{"alice", 1, 10000, 2, a} }},
		{"multi.acquire@3", "m", multiKeys,
			func(a string) []any { return []any{"alice", 10000, "", a} }},
	}
	for _, tc := range cases {
		gone := tc.keys[len(tc.keys)-1]
		if tc.id == "multi.acquire@3" {
			gone = tc.keys[0]
		}
		run("gone.record@1", []string{gone}, "late", 60000)
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

	// multi.acquire@3: tokens continue from the fence kept in each lock hash.
	rc.Del(ctx, "{m}a", "{m}b")
	future := time.Now().Add(time.Hour).UnixMicro()
	rc.HSet(ctx, "{m}b", "fence", future)
	got := run("multi.acquire@3", multiKeys, "bob", 10000, "", "b1")
	if got[0] != int64(1) || got[2] != future+1 || got[1].(int64) >= future {
		t.Fatalf("multi.acquire@3 = %v, want {1, server time, %d}: the token follows the hash's last fence", got, future+1)
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
