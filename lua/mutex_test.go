package lua_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

// mutex.acquire and mutex.release on a real server: a release hands the
// lock to the oldest live waiter and tells only that waiter's client; an
// attempt given up on takes nothing when it arrives late; another kind of
// lock on the name is refused; fencing tokens come from server time and
// survive the loss of every key.
func TestMutexQueueAndHandoff(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	r, call := scriptCaller(t, srv)
	run := mustRun(t, call)
	keys := []string{"{o}", "{o}:queue", "{o}:waiters", "{o}:readers", "{o}:permits", "{o}:gone"}
	relKeys := []string{"{o}", "{o}:queue", "{o}:waiters", "{o}:gone"}
	acquire := func(owner string, waiterTTL int, client, attempt string) []any {
		return run("mutex.acquire@6", keys, owner, 10000, "0", `{"x":1}`, waiterTTL, "0", client, attempt)
	}
	release := func(owner, attempt string) int64 {
		return run("mutex.release@5", relKeys, owner, "{o}:released", "{o}:grant:", "PUBLISH", attempt, 20000, "")[0].(int64)
	}

	before := time.Now().UnixMicro()
	got := acquire("alice", 0, "ca", "a1")
	if !held(got) || got[0].(int64) < before {
		t.Fatalf("free lock = %v, want the token >= %d (server time in µs)", got, before)
	}
	first := got[0].(int64)
	if got := acquire("bob", 0, "cb", "b1"); got[0] != int64(0) || got[2] != int64(0) {
		t.Fatalf("TryLock while held = %v, want {0, pttl, 0}: not queued", got)
	}
	if got := acquire("bob", 3000, "cb", "b2"); got[0] != int64(0) || got[2] != int64(1) {
		t.Fatalf("Lock while held = %v, want {0, hint, 1}: queued first", got)
	}
	if got := acquire("carol", 3000, "cc", "c1"); got[2] != int64(2) {
		t.Fatalf("second waiter = %v, want position 2", got)
	}

	var mu sync.Mutex
	heard := map[string][]string{}
	for _, ch := range []string{"{o}:grant:cb", "{o}:grant:cc", "{o}:released"} {
		unsub, err := r.Subscribe(ctx, ch, func(p string) { mu.Lock(); heard[ch] = append(heard[ch], p); mu.Unlock() })
		if err != nil {
			t.Fatal(err)
		}
		defer unsub()
	}
	if n := release("alice", ""); n != 3 {
		t.Fatalf("release with waiters = %d, want 3 (handed on)", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(heard["{o}:grant:cb"])
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	if len(heard["{o}:grant:cb"]) != 1 || len(heard["{o}:grant:cc"]) != 0 || len(heard["{o}:released"]) != 0 {
		t.Fatalf("messages %v: want one grant to bob's client and nothing else", heard)
	}
	mu.Unlock()
	owner, _ := srv.Do(ctx, "HGET", "{o}", "owner").Text()
	if owner != "bob" {
		t.Fatalf("after the handoff the owner is %q, want bob", owner)
	}
	if pttl, _ := srv.Do(ctx, "PTTL", "{o}").Int64(); pttl > 3000 {
		t.Fatalf("a handed-over lock lives %d ms, want at most the waiter lease 3000", pttl)
	}
	// bob claims it: the full lease, a token above alice's.
	got = acquire("bob", 3000, "cb", "b2")
	if !held(got) || got[0].(int64) <= first {
		t.Fatalf("claim = %v, want a token > %d", got, first)
	}
	if pttl, _ := srv.Do(ctx, "PTTL", "{o}").Int64(); pttl <= 3000 {
		t.Fatalf("a claimed lock lives %d ms, want the full 10000", pttl)
	}

	// carol gives up (an ambiguous timeout): her attempt, arriving late,
	// neither queues nor takes the lock.
	if n := release("carol", "c1"); n != 0 {
		t.Fatalf("carol leaving = %d, want 0 (bob holds it)", n)
	}
	if n := release("bob", ""); n != 1 {
		t.Fatalf("release with no live waiter = %d, want 1", n)
	}
	if got := acquire("carol", 3000, "cc", "c1"); got[0] != int64(0) || got[2] != int64(0) {
		t.Fatalf("a given-up attempt arriving late = %v, want {0, 0, 0}", got)
	}
	if owner, _ := srv.Do(ctx, "HGET", "{o}", "owner").Text(); owner != "" {
		t.Fatalf("a given-up attempt took the lock: owner %q", owner)
	}

	// Another kind of lock on the name is refused.
	if err := srv.Do(ctx, "ZADD", "{o}:permits", time.Now().Add(time.Minute).UnixMilli(), "p:1").Err(); err != nil {
		t.Fatal(err)
	}
	if got := acquire("dave", 0, "cd", "d1"); got[0] != int64(-1) || got[1] != "semaphore" {
		t.Fatalf("mutex on a semaphore's name = %v, want {-1, semaphore}", got)
	}
	srv.Do(ctx, "DEL", "{o}:permits")

	// Fencing after every key is gone (a restart without persistence).
	got = acquire("erin", 0, "ce", "e1")
	last := got[0].(int64)
	if err := srv.Do(ctx, "FLUSHALL").Err(); err != nil {
		t.Fatal(err)
	}
	if got := acquire("frank", 0, "cf", "f1"); !held(got) || got[0].(int64) <= last {
		t.Fatalf("token after losing every key = %d, want above %d", got[1], last)
	}
	release("frank", "")
	if n, _ := srv.Do(ctx, "DBSIZE").Int64(); n > 2 {
		keys, _ := srv.Do(ctx, "KEYS", "*").StringSlice()
		t.Fatalf("keys left after release: %v", keys)
	}
	if ttl, _ := srv.Do(ctx, "PTTL", "{o}").Int64(); ttl < 0 {
		t.Fatalf("the lock hash that keeps the last token has no TTL (%d): it would stay forever", ttl)
	}
	_ = redis.Nil
}

// mutex.acquire, mutex.release and mutex.extend on a real server: calls that
// share an owner are told apart by their attempt ids. A grant goes to the
// call that queued, and names it; only that call claims it; another call's
// undo, Unlock or renewal leaves its hold alone.
func TestMutexCallsOfOneOwner(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	r, run := scriptCaller(t, srv)
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	keys := []string{"{p}", "{p}:queue", "{p}:waiters", "{p}:readers", "{p}:permits", "{p}:gone"}
	relKeys := []string{"{p}", "{p}:queue", "{p}:waiters", "{p}:gone"}
	acquire := func(owner, attempt string) []any {
		reply := must(run("mutex.acquire@6", keys, owner, 10000, "0", `{"pid":1}`, 3000, "0", "cw", attempt))
		if got, ok := reply.([]any); ok {
			return got
		}
		return []any{reply}
	}
	release := func(owner, undo, lease string) int64 {
		return must(run("mutex.release@5", relKeys, owner, "{p}:released", "{p}:grant:", "PUBLISH", undo, 20000, lease)).(int64)
	}
	extend := func(owner, lease string) int64 {
		return must(run("mutex.extend@2", []string{"{p}"}, owner, 10000, lease)).(int64)
	}
	field := func(key, f string) string {
		v, _ := srv.Do(ctx, "HGET", key, f).Text()
		return v
	}

	if got := acquire("alice", "a1"); !held(got) {
		t.Fatalf("free lock = %v, want taken", got)
	}
	// Two calls of worker-7 queue; the entry is the last one's.
	acquire("worker-7", "w1")
	acquire("worker-7", "w2")
	if entry := field("{p}:waiters", "worker-7"); !strings.HasSuffix(entry, `{"pid":1}`+"\tw2") {
		t.Fatalf("waiter entry %q, want it to end with the meta, a tab and the last call's attempt w2", entry)
	}
	heard := make(chan string, 4)
	unsub, err := r.Subscribe(ctx, "{p}:grant:cw", func(p string) { heard <- p })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	if n := release("alice", "", "a1"); n != 3 {
		t.Fatalf("release with a waiter = %d, want 3 (handed on)", n)
	}
	select {
	case msg := <-heard:
		if !strings.HasPrefix(msg, "grant ") || !strings.HasSuffix(msg, " w2 worker-7") {
			t.Fatalf("grant message %q, want \"grant <token> w2 worker-7\"", msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no grant message")
	}
	if got := field("{p}", "attempt"); got != "w2" {
		t.Fatalf("after the hand-over the hold's attempt is %q, want w2", got)
	}
	if got := field("{p}", "meta"); got != `{"pid":1}` {
		t.Fatalf("after the hand-over the holder's meta is %q, want the entry's meta without the attempt", got)
	}

	// w1 does not claim w2's grant; it queues again behind it.
	if got := acquire("worker-7", "w1"); got[0] != int64(0) || got[2] != int64(1) {
		t.Fatalf("another call's attempt at a grant = %v, want {0, hint, 1}: queued, not claimed", got)
	}
	// w1 gives up: its undo leaves w2's hold, and removes only its own entry.
	if n := release("worker-7", "w1", ""); n != 2 {
		t.Fatalf("undo of w1 while w2 holds = %d, want 2 (not its hold)", n)
	}
	if n, _ := srv.Do(ctx, "HEXISTS", "{p}:waiters", "worker-7").Int64(); n != 0 {
		t.Fatal("w1's undo left its own entry")
	}
	// A stale Unlock or renewal of w1 (as if its lease had run out) leaves
	// w2's hold alone; w2's own succeed.
	if n := extend("worker-7", "w1"); n != 0 {
		t.Fatalf("w1's renewal of w2's hold = %d, want 0", n)
	}
	if n := release("worker-7", "", "w1"); n != 0 {
		t.Fatalf("w1's Unlock of w2's hold = %d, want 0", n)
	}
	if n := extend("worker-7", "w2"); n != 1 {
		t.Fatalf("w2's renewal = %d, want 1", n)
	}
	if got := acquire("worker-7", "w2"); !held(got) {
		t.Fatalf("w2 claiming its grant = %v, want taken", got)
	}
	if n := release("worker-7", "", "w2"); n != 1 {
		t.Fatalf("w2's Unlock = %d, want 1 (freed)", n)
	}
	// An attempt id with a tab would end the entry early: refused.
	acquire("bob", "b1")
	if _, err := run("mutex.acquire@6", keys, "carol", 10000, "0", "", 3000, "0", "cc", "c\t1"); err == nil || !strings.Contains(err.Error(), "attempt must not contain a tab") {
		t.Fatalf("an attempt with a tab = %v, want an error naming it", err)
	}
}

// mustRun wraps a scriptCaller's call: it fails the test on an error and
// returns the reply as a list (a single value becomes a list of one).
func mustRun(t *testing.T, call func(id string, keys []string, args ...any) (any, error)) func(id string, keys []string, args ...any) []any {
	return func(id string, keys []string, args ...any) []any {
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
}

// scriptCaller runs registry scripts by ID on srv through an
// evalsha.Runner, which it also returns (for Subscribe).
func scriptCaller(t *testing.T, srv *redistest.Server) (*evalsha.Runner, func(id string, keys []string, args ...any) (any, error)) {
	t.Helper()
	reg := scripts(t)
	r, err := evalsha.New(srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, func(id string, keys []string, args ...any) (any, error) {
		t.Helper()
		s, err := reg.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		return r.Run(context.Background(), s, keys, args...).Result()
	}
}

// mutex.acquire and mutex.keepqueued on a real server: queueing gives the
// queue keys an expiry of at least the waiter's TTL, a TryLock (waiter TTL
// 0) writes no queue, and the keeper moves the expiry forward with the
// deadlines.
func TestMutexQueueExpires(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	run := mustRun(t, call)
	keys := []string{"{x}", "{x}:queue", "{x}:waiters", "{x}:readers", "{x}:permits", "{x}:gone"}
	acquire := func(owner string, waiterTTL int) []any {
		return run("mutex.acquire@6", keys, owner, 60000, "0", "", waiterTTL, "0", "c-"+owner, owner+"-1")
	}
	if got := acquire("alice", 3000); !held(got) {
		t.Fatalf("alice on a free lock = %v, want her token", got)
	}
	if got := acquire("bob", 0); got[0] != int64(0) || got[2] != int64(0) {
		t.Fatalf("bob's TryLock = %v, want {0, hint, 0}: not queued", got)
	}
	if n := rc.Exists(ctx, "{x}:queue", "{x}:waiters").Val(); n != 0 {
		t.Fatalf("a TryLock wrote %d queue keys", n)
	}
	if got := acquire("bob", 3000); got[0] != int64(0) || got[2] != int64(1) {
		t.Fatalf("bob's Lock = %v, want {0, hint, 1, time}: queued first", got)
	}
	for _, key := range []string{"{x}:queue", "{x}:waiters"} {
		if ttl := rc.PTTL(ctx, key).Val(); ttl <= 0 || ttl > 3*time.Second {
			t.Fatalf("%s PTTL %v after queueing with a 3s waiter TTL, want (0, 3s]", key, ttl)
		}
		rc.PExpire(ctx, key, 500*time.Millisecond) // as if the last refresh were 2.5s ago
	}
	if got := run("mutex.keepqueued@2", []string{"{x}", "{x}:queue", "{x}:waiters"}, "bob", "nobody"); len(got) != 4 || got[0] != int64(1) || got[2] != int64(1) || got[3] != int64(0) {
		t.Fatalf("keepqueued bob, nobody = %v, want {1, pttl, 1, 0}", got)
	}
	for _, key := range []string{"{x}:queue", "{x}:waiters"} {
		if ttl := rc.PTTL(ctx, key).Val(); ttl <= time.Second || ttl > 3*time.Second {
			t.Fatalf("%s PTTL %v after the keeper moved bob's deadline by 3s, want (1s, 3s]", key, ttl)
		}
	}
}

// held reports an acquire reply that is the caller's fencing token alone
// (a list of one, from mustRun): the caller holds the lock.
func held(got []any) bool {
	if len(got) != 1 {
		return false
	}
	token, ok := got[0].(int64)
	return ok && token > 1
}
