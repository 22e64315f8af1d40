package lua_test

import (
	"context"
	"testing"

	"github.com/redlua/redlua/internal/redistest"
)

// mutex.acquire@6 on a real server: a caller that holds the lock gets its
// fencing token alone, an integer, on the fast path and on the long one; a
// given-up attempt that arrives late takes nothing although the fast path no
// longer asks the gone hash about it; a name held by another kind, and
// reentry, behave as in version 5.
func TestMutexAcquireV6(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	keysOf := func(n string) []string {
		return []string{n, n + ":queue", n + ":waiters", n + ":readers", n + ":permits", n + ":gone"}
	}
	acquire := func(name, owner, reentrant string, waiterTTL int, attempt string) any {
		t.Helper()
		r, err := call("mutex.acquire@6", keysOf(name), owner, 60000, reentrant, "", waiterTTL, "0", "c-"+owner, attempt)
		if err != nil {
			t.Fatalf("mutex.acquire@6 %s %s: %v", owner, attempt, err)
		}
		return r
	}
	release := func(name, owner, attempt, leaseAttempt string) int64 {
		t.Helper()
		r, err := call("mutex.release@5", []string{name, name + ":queue", name + ":waiters", name + ":gone"},
			owner, name+":released", name+":grant:", "PUBLISH", attempt, 60000, leaseAttempt)
		if err != nil {
			t.Fatalf("mutex.release@5 %s: %v", owner, err)
		}
		return r.(int64)
	}
	token := func(r any, what string) int64 {
		t.Helper()
		n, ok := r.(int64)
		if !ok || n < 1_000_000_000_000_000 {
			t.Fatalf("%s = %#v, want the fencing token alone (server time in µs)", what, r)
		}
		return n
	}

	t1 := token(acquire("{x}", "alice", "0", 3000, "a-1"), "alice on a free lock")
	if got := token(acquire("{x}", "alice", "0", 3000, "a-1"), "alice's same call again"); got != t1 {
		t.Fatalf("alice's retry got token %d, want her first %d", got, t1)
	}
	if got, ok := acquire("{x}", "bob", "0", 0, "b-1").([]any); !ok || got[0] != int64(0) || got[2] != int64(0) {
		t.Fatalf("bob's TryLock on a held lock = %#v, want {0, hint, 0}", got)
	}
	if n := release("{x}", "alice", "", "a-1"); n != 1 {
		t.Fatalf("alice's release = %d, want 1 (freed)", n)
	}
	t2 := token(acquire("{x}", "alice", "0", 3000, "a-2"), "alice on the freed lock")
	if t2 <= t1 {
		t.Fatalf("second token %d not above the first %d", t2, t1)
	}
	release("{x}", "alice", "", "a-2")

	// carol gave up on c-1 (a timeout); it reaches the server afterwards.
	if n := release("{x}", "carol", "c-1", ""); n != -1 {
		t.Fatalf("undoing carol's c-1 on a free lock = %d, want -1", n)
	}
	if r := acquire("{x}", "carol", "0", 3000, "c-1"); !isWait(r) {
		t.Fatalf("carol's given-up c-1 arriving late = %#v, want {0, 0, 0}: it must take nothing", r)
	}
	if owner := rc.HGet(ctx, "{x}", "owner").Val(); owner != "" {
		t.Fatalf("the late c-1 left owner %q", owner)
	}
	if t3 := token(acquire("{x}", "carol", "0", 3000, "c-2"), "carol's next call while the gone hash exists"); t3 <= t2 {
		t.Fatalf("carol's token %d not above %d", t3, t2)
	}

	rc.HSet(ctx, "{y}", "owner", "w", "kind", "rwmutex")
	if got, ok := acquire("{y}", "dave", "0", 3000, "d-1").([]any); !ok || got[0] != int64(-1) || got[1] != "rwmutex" {
		t.Fatalf("a Mutex on an RWMutex's name = %#v, want {-1, rwmutex}", got)
	}

	t4 := token(acquire("{z}", "erin", "1", 3000, "e-1"), "erin, reentrant")
	if got := token(acquire("{z}", "erin", "1", 3000, "e-2"), "erin re-entering"); got != t4 {
		t.Fatalf("reentry got token %d, want %d", got, t4)
	}
	if n := rc.HGet(ctx, "{z}", "count").Val(); n != "2" {
		t.Fatalf("count after reentry = %q, want 2", n)
	}
}

// isWait reports an acquire reply {0, ...}: the caller does not hold the lock.
func isWait(r any) bool {
	a, ok := r.([]any)
	return ok && len(a) > 0 && a[0] == int64(0)
}
