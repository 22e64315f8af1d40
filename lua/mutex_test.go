package lua_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

// The mutex scripts' calls, as the locks package makes them (KEYS lock,
// queue; a name's lock hash "{N}" holds h, f, q, g:<attempt> and w:<owner>).
type mutexCalls struct {
	t    *testing.T
	call func(id string, keys []string, args ...any) (any, error)
}

// acquire calls mutex.acquire@14; the attempt id carries the call's mode:
// "<id>/<waiter_ttl_ms>/<flags>".
func (m mutexCalls) acquire(lock, owner string, ttl int, attempt, client, meta string) any {
	m.t.Helper()
	r, err := m.call("mutex.acquire@14", []string{lock, lock + ":queue"}, acquireArgs(owner, ttl, attempt, client, meta)...)
	if err != nil {
		m.t.Fatalf("mutex.acquire@14 %s %s: %v", owner, attempt, err)
	}
	return r
}

func (m mutexCalls) release(lock, owner, leaseAttempt string) int64 {
	m.t.Helper()
	r, err := m.call("mutex.release@11", []string{lock, lock + ":queue"}, "\t"+attemptID(leaseAttempt)+"\t"+owner+"\t")
	if err != nil {
		m.t.Fatalf("mutex.release@11 %s: %v", owner, err)
	}
	return r.(int64)
}

func (m mutexCalls) undo(lock, owner, attempt string, goneTTL int) int64 {
	m.t.Helper()
	r, err := m.call("mutex.undo@6", []string{lock, lock + ":queue", lock + ":gone"}, owner, attempt, goneTTL, "PUBLISH")
	if err != nil {
		m.t.Fatalf("mutex.undo@6 %s %s: %v", owner, attempt, err)
	}
	return r.(int64)
}

func (m mutexCalls) extend(lock, owner string, ttl int, leaseAttempt string) int64 {
	m.t.Helper()
	r, err := m.call("mutex.extend@6", []string{lock, lock + ":queue"}, owner, ttl, leaseAttempt)
	if err != nil {
		m.t.Fatalf("mutex.extend@6 %s: %v", owner, err)
	}
	return r.(int64)
}

// acquireArgs is mutex.acquire@14's ARGV for a call of owner.
func acquireArgs(owner string, ttl int, attempt, client, meta string) []any {
	return []any{ttl, "g:" + attempt, client + "\t" + attemptID(attempt) + "\t" + owner + "\t" + meta}
}

// attemptID is an attempt's bare id, as a hold records it (mutex.acquire@14).
func attemptID(attempt string) string {
	id, _, _ := strings.Cut(attempt, "/")
	return id
}

// token is an acquire reply that says "held": the fencing token alone.
func token(t *testing.T, r any, what string) int64 {
	t.Helper()
	n, ok := r.(int64)
	if !ok || n < 1_000_000_000_000_000 {
		t.Fatalf("%s = %#v, want the fencing token alone (server time in µs)", what, r)
	}
	return n
}

// waitReply is an acquire reply {0, hint, position, ...}.
func waitReply(t *testing.T, r any, what string, position int64) []any {
	t.Helper()
	a, ok := r.([]any)
	if !ok || len(a) < 3 || a[0] != int64(0) || a[2] != position {
		t.Fatalf("%s = %#v, want {0, hint, %d, ...}", what, r, position)
	}
	return a
}

// hold splits a lock hash's h: kind, until, state, count, client, attempt, owner, meta.
func hold(t *testing.T, srv *redistest.Server, lock string) []string {
	t.Helper()
	h, _ := srv.Do(context.Background(), "HGET", lock, "h").Text()
	if h == "" {
		return nil
	}
	parts := strings.SplitN(h, "\t", 8)
	if len(parts) != 8 {
		t.Fatalf("%s h = %q: want 8 tab-separated fields", lock, h)
	}
	return parts
}

// listen collects the messages of channels.
func listenAll(t *testing.T, r *evalsha.Runner, channels ...string) func() map[string][]string {
	var mu sync.Mutex
	heard := map[string][]string{}
	for _, ch := range channels {
		unsub, err := r.Subscribe(context.Background(), ch, func(p string) { mu.Lock(); heard[ch] = append(heard[ch], p); mu.Unlock() })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(unsub)
	}
	return func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]string{}
		for k, v := range heard {
			out[k] = append([]string(nil), v...)
		}
		return out
	}
}

// until waits for cond, at most 5 s (pub/sub delivery is asynchronous).
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// mutex.acquire, mutex.release and mutex.undo on a real server: the fast
// path replies with the token alone and leaves h and f only; a release
// hands the lock to the oldest live waiter and tells only that waiter's
// client; an uncontended release publishes nothing; an attempt given up on
// takes nothing when it arrives late; another kind of lock on the name is
// refused; fencing tokens come from server time and survive the loss of
// every key.
func TestMutexQueueAndHandoff(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	r, call := scriptCaller(t, srv)
	m := mutexCalls{t, call}
	heard := listenAll(t, r, "{o}:grant:cb", "{o}:grant:cc", "{o}:released")

	before := time.Now().UnixMicro()
	first := token(t, m.acquire("{o}", "alice", 10000, "a1/0/-", "ca", `{"x":1}`), "alice on a free lock")
	if first < before {
		t.Fatalf("token %d, want >= %d (server time in µs)", first, before)
	}
	h := hold(t, srv, "{o}")
	if h[0] != "mutex" || h[2] != "h" || h[3] != "1" || h[4] != "ca" || h[5] != "a1" || h[6] != "alice" || h[7] != `{"x":1}` {
		t.Fatalf("h = %q, want mutex, until, h, 1, ca, a1, alice, meta", h)
	}
	if fields, _ := srv.Do(ctx, "HKEYS", "{o}").StringSlice(); len(fields) != 2 {
		t.Fatalf("the fast path wrote fields %v, want h and f", fields)
	}
	if got := token(t, m.acquire("{o}", "alice", 10000, "a1/0/-", "ca", `{"x":1}`), "alice's same call again"); got != first {
		t.Fatalf("a retry of the same call got %d, want its token %d", got, first)
	}
	waitReply(t, m.acquire("{o}", "bob", 10000, "b1/0/-", "cb", ""), "bob's TryLock while held", 0)
	if n, _ := srv.Do(ctx, "HEXISTS", "{o}", "q").Int64(); n != 0 {
		t.Fatal("a TryLock set q: the release would look for waiters")
	}
	waitReply(t, m.acquire("{o}", "bob", 10000, "b2/3000/-", "cb", ""), "bob's Lock while held", 1)
	waitReply(t, m.acquire("{o}", "carol", 10000, "c1/3000/-", "cc", ""), "carol's Lock", 2)
	if q, _ := srv.Do(ctx, "HGET", "{o}", "q").Int64(); q <= time.Now().UnixMilli() {
		t.Fatalf("q = %d after queueing, want a time ahead", q)
	}

	if n := m.release("{o}", "alice", "a1/0/-"); n != 3 {
		t.Fatalf("release with waiters = %d, want 3 (handed on)", n)
	}
	if !eventually(func() bool { return len(heard()["{o}:grant:cb"]) > 0 }) {
		t.Fatal("no grant message to bob's client")
	}
	if got := heard(); len(got["{o}:grant:cb"]) != 1 || len(got["{o}:grant:cc"]) != 0 || len(got["{o}:released"]) != 0 {
		t.Fatalf("messages %v: want one grant to bob's client and nothing else", got)
	}
	h = hold(t, srv, "{o}")
	if h[6] != "bob" || h[2] != "g" || h[5] != "b2" {
		t.Fatalf("after the hand-over h = %q, want bob's grant (state g, attempt b2)", h)
	}
	var until int64
	fmt.Sscan(h[1], &until)
	if left := until - time.Now().UnixMilli(); left > 3000 {
		t.Fatalf("a handed-over hold lasts %d ms, want at most the waiter lease 3000", left)
	}
	// bob claims it: the full lease, the grant's token, above alice's.
	claimed := token(t, m.acquire("{o}", "bob", 10000, "b2/3000/-", "cb", ""), "bob's claim")
	if claimed <= first {
		t.Fatalf("claim = %d, want a token > %d", claimed, first)
	}
	h = hold(t, srv, "{o}")
	fmt.Sscan(h[1], &until)
	if left := until - time.Now().UnixMilli(); h[2] != "h" || left <= 3000 {
		t.Fatalf("a claimed hold: state %s, %d ms left; want h and the full 10000", h[2], left)
	}

	// carol gives up (an ambiguous timeout): her attempt, arriving late,
	// neither queues nor takes the lock.
	if n := m.undo("{o}", "carol", "c1/3000/-", 20000); n != 0 {
		t.Fatalf("carol's undo = %d, want 0 (bob holds it)", n)
	}
	if n := m.release("{o}", "bob", "b2/3000/-"); n != 1 {
		t.Fatalf("release with no live waiter = %d, want 1", n)
	}
	if r := m.acquire("{o}", "carol", 10000, "c1/3000/-", "cc", ""); !isWait(r) || r.([]any)[1] != int64(0) {
		t.Fatalf("a given-up attempt arriving late = %#v, want {0, 0, 0}", r)
	}
	if h := hold(t, srv, "{o}"); h != nil {
		t.Fatalf("a given-up attempt took the lock: h %q", h)
	}
	if got := heard(); len(got["{o}:released"]) != 1 {
		t.Fatalf("released messages %v: want one, from the release that found carol's waiting entry but no live waiter", got["{o}:released"])
	}

	// An uncontended pair publishes nothing and leaves no q.
	m.release("{o}", "dave", "")
	token(t, m.acquire("{o}", "dave", 10000, "d1/0/-", "cd", ""), "dave")
	if n := m.release("{o}", "dave", "d1/0/-"); n != 1 {
		t.Fatalf("dave's release = %d, want 1", n)
	}
	time.Sleep(50 * time.Millisecond) // a message, had one been sent, arrives by now
	if got := heard(); len(got["{o}:released"]) != 1 {
		t.Fatalf("an uncontended release published: %v", got["{o}:released"])
	}

	// Another kind of lock on the name is refused while its hold lasts.
	future := time.Now().Add(time.Minute).UnixMilli()
	srv.Do(ctx, "HSET", "{o}", "h", fmt.Sprintf("semaphore\t%d\tp\t1", future))
	if got, ok := m.acquire("{o}", "erin", 10000, "e1/0/-", "ce", "").([]any); !ok || got[0] != int64(-1) || got[1] != "semaphore" {
		t.Fatalf("mutex on a semaphore's name = %#v, want {-1, semaphore}", got)
	}
	if n := m.release("{o}", "erin", ""); n != 0 {
		t.Fatalf("a mutex release on a semaphore's name = %d, want 0", n)
	}
	srv.Do(ctx, "HSET", "{o}", "h", fmt.Sprintf("semaphore\t%d\tp\t1", time.Now().Add(-time.Second).UnixMilli()))
	token(t, m.acquire("{o}", "erin", 10000, "e1/0/-", "ce", ""), "a mutex where another kind's hold ended")

	// Fencing after every key is gone (a restart without persistence).
	last := token(t, m.acquire("{o}", "erin", 10000, "e1/0/-", "ce", ""), "erin again")
	if err := srv.Do(ctx, "FLUSHALL").Err(); err != nil {
		t.Fatal(err)
	}
	if got := token(t, m.acquire("{o}", "frank", 10000, "f1/0/-", "cf", ""), "frank"); got <= last {
		t.Fatalf("token after losing every key = %d, want above %d", got, last)
	}
	m.release("{o}", "frank", "f1/0/-")
	if keys, _ := srv.Do(ctx, "KEYS", "*").StringSlice(); len(keys) != 1 || keys[0] != "{o}" {
		t.Fatalf("keys left after release: %v, want only the lock hash (its last token)", keys)
	}
	if ttl, _ := srv.Do(ctx, "PTTL", "{o}").Int64(); ttl < 0 {
		t.Fatalf("the lock hash that keeps the last token has no TTL (%d): it would stay forever", ttl)
	}
}

// Calls that share an owner are told apart by their attempt ids: a grant
// goes to the call that queued, and names it; only that call claims it;
// another call's undo, Unlock or renewal leaves its hold alone.
func TestMutexCallsOfOneOwner(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	r, call := scriptCaller(t, srv)
	m := mutexCalls{t, call}
	field := func(f string) string {
		v, _ := srv.Do(ctx, "HGET", "{p}", f).Text()
		return v
	}
	token(t, m.acquire("{p}", "alice", 10000, "a1/3000/-", "ca", ""), "alice")
	// Two calls of worker-7 queue; the entry is the last one's.
	m.acquire("{p}", "worker-7", 10000, "w1/3000/-", "cw", `{"pid":1}`)
	m.acquire("{p}", "worker-7", 10000, "w2/3000/-", "cw", `{"pid":1}`)
	if entry := field("w:worker-7"); !strings.HasSuffix(entry, "\tcw\tw2\t"+`{"pid":1}`) {
		t.Fatalf("waiter entry %q, want it to end with the client, the last call's attempt w2 and the meta", entry)
	}
	heard := make(chan string, 4)
	unsub, err := r.Subscribe(ctx, "{p}:grant:cw", func(p string) { heard <- p })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	if n := m.release("{p}", "alice", "a1/3000/-"); n != 3 {
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
	if h := hold(t, srv, "{p}"); h[5] != "w2" || h[7] != `{"pid":1}` || h[4] != "cw" {
		t.Fatalf("after the hand-over h = %q, want attempt w2, client cw and the entry's meta", h)
	}

	// w1 does not claim w2's grant; it queues again behind it.
	waitReply(t, m.acquire("{p}", "worker-7", 10000, "w1/3000/-", "cw", ""), "another call's attempt at a grant", 1)
	// w1 gives up: its undo leaves w2's hold, and removes only its own entry.
	if n := m.undo("{p}", "worker-7", "w1/3000/-", 20000); n != 2 {
		t.Fatalf("undo of w1 while w2 holds = %d, want 2 (not its hold)", n)
	}
	if field("w:worker-7") != "" {
		t.Fatal("w1's undo left its own entry")
	}
	// A stale Unlock or renewal of w1 (as if its lease had run out) leaves
	// w2's hold alone; w2's own succeed.
	if n := m.extend("{p}", "worker-7", 10000, "w1/3000/-"); n != 0 {
		t.Fatalf("w1's renewal of w2's hold = %d, want 0", n)
	}
	if n := m.release("{p}", "worker-7", "w1/3000/-"); n != 0 {
		t.Fatalf("w1's Unlock of w2's hold = %d, want 0", n)
	}
	if n := m.extend("{p}", "worker-7", 10000, "w2/3000/-"); n != 1 {
		t.Fatalf("w2's renewal = %d, want 1", n)
	}
	if h := hold(t, srv, "{p}"); h[2] != "h" {
		t.Fatalf("a renewed grant is in state %q, want h", h[2])
	}
	token(t, m.acquire("{p}", "worker-7", 10000, "w2/3000/-", "cw", ""), "w2 claiming its hold")
	if n := m.release("{p}", "worker-7", "w2/3000/-"); n != 1 {
		t.Fatalf("w2's Unlock = %d, want 1 (freed)", n)
	}

	// Reentry: one holder, a count; the last release frees it.
	t4 := token(t, m.acquire("{p}", "erin", 10000, "e1/3000/r", "ce", ""), "erin, reentrant")
	if got := token(t, m.acquire("{p}", "erin", 10000, "e2/3000/r", "ce", ""), "erin re-entering"); got != t4 {
		t.Fatalf("reentry got token %d, want %d", got, t4)
	}
	if h := hold(t, srv, "{p}"); h[3] != "2" {
		t.Fatalf("count after reentry = %q, want 2", h[3])
	}
	if n := m.release("{p}", "erin", ""); n != 2 {
		t.Fatalf("first reentrant release = %d, want 2", n)
	}
	if n := m.release("{p}", "erin", ""); n != 1 {
		t.Fatalf("second reentrant release = %d, want 1", n)
	}

	// A tab in an owner or attempt would break the record: refused.
	m.acquire("{p}", "bob", 10000, "b1/3000/-", "cb", "")
	for _, args := range [][]any{acquireArgs("carol", 10000, "c\t1/3000/-", "cc", ""), acquireArgs("car\tol", 10000, "c1/0/-", "cc", "")} {
		if _, err := call("mutex.acquire@14", []string{"{p}", "{p}:queue"}, args...); err == nil || !strings.Contains(err.Error(), "no other tab") {
			t.Fatalf("acquire %q = %v, want an error naming the tab", args, err)
		}
	}
}

// mutex.acquire and mutex.keepqueued: queueing gives the queue key and the
// lock hash an expiry of at least the waiter's TTL, a TryLock writes no
// queue, and the keeper moves the expiry and q forward with the deadlines.
func TestMutexQueueExpires(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	m := mutexCalls{t, call}
	token(t, m.acquire("{x}", "alice", 1000, "a1/3000/-", "ca", ""), "alice")
	waitReply(t, m.acquire("{x}", "bob", 1000, "b1/0/-", "cb", ""), "bob's TryLock", 0)
	if n := rc.Exists(ctx, "{x}:queue").Val(); n != 0 {
		t.Fatal("a TryLock wrote the queue")
	}
	waitReply(t, m.acquire("{x}", "bob", 1000, "b1/3000/-", "cb", ""), "bob's Lock", 1)
	for _, key := range []string{"{x}:queue", "{x}"} {
		if ttl := rc.PTTL(ctx, key).Val(); ttl <= 2*time.Second || ttl > 3*time.Second {
			t.Fatalf("%s PTTL %v after queueing with a 3s waiter TTL, want (2s, 3s]", key, ttl)
		}
		rc.PExpire(ctx, key, 500*time.Millisecond) // as if the last refresh were 2.5s ago
	}
	rc.HSet(ctx, "{x}", "q", time.Now().Add(500*time.Millisecond).UnixMilli())
	got, err := call("mutex.keepqueued@6", []string{"{x}", "{x}:queue"}, "bob", "nobody")
	if a, ok := got.([]any); err != nil || !ok || len(a) != 4 || a[0] != int64(1) || a[2] != int64(1) || a[3] != int64(0) {
		t.Fatalf("keepqueued bob, nobody = %v, %v; want {1, left, 1, 0}", got, err)
	}
	for _, key := range []string{"{x}:queue", "{x}"} {
		if ttl := rc.PTTL(ctx, key).Val(); ttl <= 2*time.Second || ttl > 3*time.Second {
			t.Fatalf("%s PTTL %v after the keeper moved bob's deadline by 3s, want (2s, 3s]", key, ttl)
		}
	}
	if q, _ := rc.HGet(ctx, "{x}", "q").Int64(); q < time.Now().Add(2*time.Second).UnixMilli() {
		t.Fatalf("q = %d after the keeper, want bob's new deadline", q)
	}
}

// mutex.extend works on any single holder (a Mutex, an RWMutex writer),
// replies -2 for a revoked hold, and never extends another call's hold or
// readers; the scripts refuse arguments outside the client's limits,
// naming them; a quorum's waiter (flag w) sets q, so that the release
// publishes "released".
func TestMutexExtendLimitsAndWatch(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	r, call := scriptCaller(t, srv)
	m := mutexCalls{t, call}
	future := time.Now().Add(time.Minute).UnixMilli()

	rc.HSet(ctx, "{w}", "h", fmt.Sprintf("rwmutex\t%d\th\t1\tc1\tw1\twriter\t{}", future))
	if n := m.extend("{w}", "writer", 120000, "w1"); n != 1 {
		t.Fatalf("extend of an RWMutex writer = %d, want 1", n)
	}
	if h := hold(t, srv, "{w}"); h[0] != "rwmutex" || h[6] != "writer" || h[7] != "{}" {
		t.Fatalf("after the extend h = %q, want the writer's record with a new until", h)
	}
	if ttl := rc.PTTL(ctx, "{w}").Val(); ttl < 110*time.Second {
		t.Fatalf("extend left the hash's PTTL at %v, want at least the new lease", ttl)
	}
	if n := m.extend("{w}", "writer", 120000, "w2"); n != 0 {
		t.Fatalf("another call's extend = %d, want 0", n)
	}
	rc.HSet(ctx, "{w}", "h", fmt.Sprintf("rwmutex\t%d\tr\t2", future))
	if n := m.extend("{w}", "writer", 120000, ""); n != 0 {
		t.Fatalf("extend on readers = %d, want 0", n)
	}
	rc.HSet(ctx, "{w}", "h", fmt.Sprintf("mutex\t%d\tx\t1\tc1\tw1\twriter\t{}", future))
	if n := m.extend("{w}", "writer", 120000, "w1"); n != -2 {
		t.Fatalf("extend of a revoked hold = %d, want -2", n)
	}
	if n := m.release("{w}", "writer", "w1"); n != 1 {
		t.Fatalf("release of a revoked hold = %d, want 1 (dropped like a held one)", n)
	}
	if n := m.extend("{w}", "writer", 120000, "w1"); n != -1 {
		t.Fatalf("extend after the release = %d, want -1", n)
	}

	for _, c := range []struct {
		id   string
		keys []string
		args []any
		want string
	}{
		{"mutex.acquire@14", []string{"{l}", "{l}:queue"}, acquireArgs("o", 0, "a/0/-", "c", ""), "ttl_ms must be"},
		{"mutex.acquire@14", []string{"{l}", "{l}:queue"}, acquireArgs("o", 604800001, "a/0/-", "c", ""), "ttl_ms must be"},
		{"mutex.extend@6", []string{"{l}", "{l}:queue"}, []any{"o", "soon", ""}, "ttl_ms must be"},
		{"multi.acquire@6", []string{"{l}"}, []any{"o", -1, "a", "c", ""}, "ttl_ms must be"},
		{"mutex.undo@6", []string{"{l}", "{l}:queue", "{l}:gone"}, []any{"o", "a", 0, "PUBLISH"}, "gone_ttl_ms must be"},
		{"mutex.undo@6", []string{"{l}", "{l}:queue", "{l}:gone"}, []any{"o", "a", "soon", "PUBLISH"}, "gone_ttl_ms must be"},
	} {
		if _, err := call(c.id, c.keys, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v = %v, want an error with %q", c.id, c.args, err, c.want)
		}
	}
	token(t, m.acquire("{l}", "o", 10000, "a/0/-", "c", ""), "o")
	if _, err := call("mutex.acquire@14", []string{"{l}", "{l}:queue"}, acquireArgs("p", 10000, "b/86400001/-", "c", "")...); err == nil || !strings.Contains(err.Error(), "waiter_ttl_ms") {
		t.Errorf("a waiter TTL beyond MaxWaiterTTL = %v, want an error naming waiter_ttl_ms", err)
	}

	heard := listenAll(t, r, "{l}:released")
	waitReply(t, m.acquire("{l}", "p", 10000, "b/0/w", "c", ""), "a quorum waiter", 0)
	if q, _ := rc.HGet(ctx, "{l}", "q").Int64(); q <= time.Now().UnixMilli() {
		t.Fatalf("a waiter with flag w left q %d, want the hold's end", q)
	}
	if n := m.release("{l}", "o", "a/0/-"); n != 1 {
		t.Fatalf("release = %d, want 1", n)
	}
	if !eventually(func() bool { return len(heard()["{l}:released"]) == 1 }) {
		t.Fatalf("released messages %v, want one", heard())
	}
	if n := rc.HExists(ctx, "{l}", "q").Val(); n {
		t.Fatal("the release left q behind")
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

// isWait reports an acquire reply {0, ...}: the caller does not hold the lock.
func isWait(r any) bool {
	a, ok := r.([]any)
	return ok && len(a) > 0 && a[0] == int64(0)
}

// Waiter entries never outlive their place: once q's time passed (every
// deadline is at most q), the next acquire or release drops q and the
// entries of the queue, and the acquire after it is fast again; the keeper
// does not bring back a dead entry whose owner left the queue.
func TestMutexDeadWaitersGo(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	m := mutexCalls{t, call}
	fields := func() []string { return rc.HKeys(ctx, "{d}").Val() }

	token(t, m.acquire("{d}", "alice", 60000, "a1/1000/-", "ca", ""), "alice")
	waitReply(t, m.acquire("{d}", "bob", 60000, "b1/1000/-", "cb", ""), "bob queues", 1)
	// bob's place ran out and the queue key expired with it; the hash
	// lives on with alice's hold.
	past := time.Now().Add(-time.Second).UnixMilli()
	rc.HSet(ctx, "{d}", "q", past, "w:bob", fmt.Sprintf("%d\t60000\t1000\tcb\tb1/1000/-\t", past))
	rc.Del(ctx, "{d}:queue")
	got, err := call("mutex.keepqueued@6", []string{"{d}", "{d}:queue"}, "bob")
	if a, ok := got.([]any); err != nil || !ok || len(a) != 3 || a[2] != int64(0) {
		t.Fatalf("keepqueued of bob's dead entry outside the queue = %v, %v; want {1, left, 0}", got, err)
	}
	if n := rc.HExists(ctx, "{d}", "w:bob").Val(); n {
		t.Fatal("the keeper left bob's dead entry")
	}
	// A dead waiter still in the queue (which lives as long as the hash
	// when the scripts set its expiry) goes with a stale q: the release
	// finds it through the queue, not by scanning the hash.
	rc.HSet(ctx, "{d}", "w:bob", fmt.Sprintf("%d\t60000\t1000\tcb\tb1/1000/-\t", past))
	rc.ZAdd(ctx, "{d}:queue", redis.Z{Score: 1, Member: "bob"})
	m.release("{d}", "alice", "a1/1000/-")
	if f := fields(); len(f) != 1 || f[0] != "f" {
		t.Fatalf("after a release with a stale q the hash has %v, want only f", f)
	}

	// The same through an acquire: a stale q and a dead entry go.
	rc.HSet(ctx, "{d}", "q", past, "w:carol", fmt.Sprintf("%d\t60000\t1000\tcc\tc1/1000/-\t", past))
	rc.ZAdd(ctx, "{d}:queue", redis.Z{Score: 1, Member: "carol"})
	token(t, m.acquire("{d}", "dave", 60000, "d1/0/-", "cd", ""), "dave over a stale q")
	if f := fields(); len(f) != 2 || rc.Exists(ctx, "{d}:queue").Val() != 0 {
		t.Fatalf("after an acquire over a stale q the hash has %v and the queue %d keys, want h and f, no queue", f, rc.Exists(ctx, "{d}:queue").Val())
	}
}

// mutex.acquire's fast path keeps the lock hash alive for the hold with
// one PEXPIREAT: a new hash gets a TTL of the hold (a second call, NX), a
// hash that held a fencing token only ever has its TTL moved later (GT;
// an acquire whose hold ends sooner, as pairs in one millisecond do, costs
// no second call), and a hash a Semaphore's stored count made persistent
// stays persistent.
func TestMutexAcquireExpiry(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	m := mutexCalls{t, call}
	pexpireats := func() int64 {
		t.Helper()
		info := rc.Info(ctx, "commandstats").Val()
		_, rest, ok := strings.Cut(info, "cmdstat_pexpireat:calls=")
		if !ok {
			return 0
		}
		var n int64
		fmt.Sscan(strings.SplitN(rest, ",", 2)[0], &n)
		return n
	}

	before := pexpireats()
	token(t, m.acquire("{e}", "alice", 10000, "a1/0/-", "ca", ""), "alice on a new hash")
	if n := pexpireats() - before; n != 2 {
		t.Fatalf("%d PEXPIREAT calls for a new hash, want 2 (GT, then NX)", n)
	}
	if ttl := rc.PTTL(ctx, "{e}").Val(); ttl <= 9*time.Second || ttl > 10*time.Second {
		t.Fatalf("PTTL %v after a 10s hold on a new hash, want (9s, 10s]", ttl)
	}
	if r := m.release("{e}", "alice", "a1/0/-"); r != 1 {
		t.Fatalf("release = %d, want 1", r)
	}

	before = pexpireats()
	token(t, m.acquire("{e}", "bob", 1000, "b1/0/-", "cb", ""), "bob, a shorter hold")
	if n := pexpireats() - before; n != 1 {
		t.Fatalf("%d PEXPIREAT calls for a hold that ends before the hash's TTL, want 1", n)
	}
	if ttl := rc.PTTL(ctx, "{e}").Val(); ttl <= 8*time.Second {
		t.Fatalf("PTTL %v after a shorter hold, want alice's (over 8s): GT never shortens", ttl)
	}
	m.release("{e}", "bob", "b1/0/-")
	before = pexpireats()
	token(t, m.acquire("{e}", "carol", 20000, "c1/0/-", "cc", ""), "carol, a longer hold")
	if ttl := rc.PTTL(ctx, "{e}").Val(); ttl <= 19*time.Second || pexpireats()-before != 1 {
		t.Fatalf("PTTL %v, %d PEXPIREAT calls after a 20s hold, want over 19s in one call", ttl, pexpireats()-before)
	}
	m.release("{e}", "carol", "c1/0/-")

	// A stored semaphore count keeps the hash for good.
	if _, err := call("sem.setlimit@8", []string{"{e}", "{e}:squeue", "{e}:sem"}, 3); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	token(t, m.acquire("{e}", "dave", 1000, "d1/0/-", "cd", ""), "dave on a persistent hash")
	if ttl := rc.PTTL(ctx, "{e}").Val(); ttl != -1 {
		t.Fatalf("PTTL %v after a hold on a hash with a stored count, want -1 (persistent)", ttl)
	}
}

// A hold written before mutex.acquire@14 records the attempt with its mode
// and "~" as its meta; the current scripts, given the bare id (as the locks
// package sends it), still re-enter, extend, release and undo it, and a
// hand-over writes the bare id and an empty meta (64 bytes with default
// options: the hash stays a listpack).
func TestMutexOlderHoldFormat(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	_, call := scriptCaller(t, srv)
	m := mutexCalls{t, call}
	old := func(lock, attempt, owner string) {
		t.Helper()
		until := time.Now().Add(time.Hour).UnixMilli()
		h := fmt.Sprintf("mutex\t%d\th\t1\tc1\t%s\t%s\t~", until, attempt, owner)
		if err := srv.Do(ctx, "HSET", lock, "h", h, "f", "1").Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The same call again (a retry after a lost reply) holds it.
	old("{old}", "a1/3000/-", "alice")
	if got := m.acquire("{old}", "alice", 10000, "a1/3000/-", "c1", ""); got != int64(1) {
		t.Fatalf("retry of the older hold's attempt = %#v, want its token 1", got)
	}
	if h := hold(t, srv, "{old}"); h[5] != "a1" || h[7] != "" {
		t.Fatalf("retried hold %q, want the bare id and an empty meta", h)
	}
	old("{old}", "a1/3000/-", "alice")
	if n := m.extend("{old}", "alice", 10000, "a1"); n != 1 {
		t.Fatalf("extend of an older hold by its bare id = %d, want 1", n)
	}
	if n := m.extend("{old}", "alice", 10000, "a2"); n != 0 {
		t.Fatalf("extend of an older hold by another attempt = %d, want 0", n)
	}
	if n := m.release("{old}", "alice", "a2"); n != 0 {
		t.Fatalf("release of an older hold by another attempt = %d, want 0", n)
	}
	if n := m.release("{old}", "alice", "a1"); n != 1 {
		t.Fatalf("release of an older hold by its bare id = %d, want 1", n)
	}
	old("{old}", "a1/3000/-", "alice")
	if n := m.undo("{old}", "alice", "a2/3000/-", 60000); n != 2 {
		t.Fatalf("undo of another attempt on an older hold = %d, want 2", n)
	}
	// A waiter queued with "~" (an older client) gets the lock from the
	// undo of the older hold, as the bare id and an empty meta.
	if r, ok := m.acquire("{old}", "bob", 10000, "b1/3000/-", "c2", "~").([]any); !ok || r[2] != int64(1) {
		t.Fatalf("bob's acquire = %#v, want queued first", r)
	}
	if n := m.undo("{old}", "alice", "a1/3000/-", 60000); n != 3 {
		t.Fatalf("undo of an older hold's attempt = %d, want 3 (handed over)", n)
	}
	h := hold(t, srv, "{old}")
	if h[2] != "g" || h[5] != "b1" || h[6] != "bob" || h[7] != "" {
		t.Fatalf("handed-over hold %q, want bob's bare id b1 and an empty meta", h)
	}
	if _, ok := m.acquire("{old}", "bob", 10000, "b1/3000/-", "c2", "").(int64); !ok {
		t.Fatal("bob's claim failed")
	}
	// A waiter entry of an older version (the attempt with its mode) is
	// handed the lock with that attempt, which that version's claim
	// compares whole.
	if err := srv.Do(ctx, "HSET", "{old}", "w:carol", fmt.Sprintf("%d\t10000\t3000\tc3\tk1/3000/-\t~", time.Now().Add(time.Hour).UnixMilli()), "q", fmt.Sprint(time.Now().Add(time.Hour).UnixMilli())).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Do(ctx, "ZADD", "{old}:queue", 1, "carol").Err(); err != nil {
		t.Fatal(err)
	}
	if n := m.release("{old}", "bob", "b1/3000/-"); n != 3 {
		t.Fatalf("bob's release = %d, want 3 (handed to carol)", n)
	}
	if h := hold(t, srv, "{old}"); h[2] != "g" || h[5] != "k1/3000/-" || h[6] != "carol" || h[7] != "" {
		t.Fatalf("hold handed to an older entry %q, want its attempt k1/3000/- whole and an empty meta", h)
	}
	if n := m.release("{old}", "carol", "k1"); n != 1 {
		t.Fatalf("carol's release by her bare id = %d, want 1", n)
	}
	if enc, _ := srv.Do(ctx, "OBJECT", "ENCODING", "{old}").Text(); enc != "listpack" {
		t.Fatalf("encoding %s, want listpack", enc)
	}
}
