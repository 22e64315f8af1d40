package lua_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redlua/redlua/internal/redistest"
)

// sem.forceunlock@1 on a real server: it removes every live holder and
// reports how many owners it removed, wakes the queued waiters that now fit
// in order ("wake <owner>" on each one's client channel, not the one behind
// that no longer fits), sends "released" for waiters that do not queue only
// when no live waiter is queued, and on a semaphore nobody holds changes
// nothing and tells no one.
func TestSemaphoreForceUnlock(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	runner, call := scriptCaller(t, srv)
	run := mustRun(t, call)
	keys := []string{"{f}:permits", "{f}:limit", "{f}:fence", "{f}", "{f}:readers", "{f}:gone", "{f}:squeue", "{f}:swaiters", "{f}:soffers"}
	forceKeys := []string{"{f}:permits", "{f}:limit", "{f}:squeue", "{f}:swaiters"}
	acquire := func(owner string, n int, client string) []any {
		return run("sem.acquire@6", keys, owner, n, 60000, 2, owner, 60000, client, "{f}:grant:", "PUBLISH")
	}
	force := func() int64 {
		t.Helper()
		got := run("sem.forceunlock@1", forceKeys, "{f}:released", "PUBLISH", "{f}:grant:")
		n, _ := got[0].(int64)
		return n
	}

	next, quiet := listen(t, runner, "{f}:grant:c2", "{f}:grant:c3", "{f}:released")

	// Nobody holds it: nothing to remove, no one told.
	if n := force(); n != 0 {
		t.Fatalf("force unlock of an unused semaphore = %d, want 0", n)
	}
	acquire("alice", 1, "c1")
	acquire("amy", 1, "c1")
	if got := acquire("bob", 2, "c2"); got[0] != int64(0) || got[3] != int64(1) {
		t.Fatalf("bob = %v, want queued first", got)
	}
	if got := acquire("dave", 1, "c3"); got[0] != int64(0) || got[3] != int64(2) {
		t.Fatalf("dave = %v, want queued second", got)
	}
	if n := force(); n != 2 {
		t.Fatalf("force unlock of alice's and amy's permits = %d, want 2 owners", n)
	}
	if n := rc.ZCard(ctx, "{f}:permits").Val(); n != 0 {
		t.Fatalf("%d permits left after the force unlock", n)
	}
	if m := next(); m != "{f}:grant:c2 wake bob" {
		t.Fatalf("after the force unlock: %q, want a wake-up for bob, the head", m)
	}
	if got := acquire("bob", 2, "c2"); got[0] != int64(1) {
		t.Fatalf("bob after the wake-up = %v, want both permits", got)
	}
	// dave, behind bob, did not fit: his wake-up would come before this.
	if n := force(); n != 1 {
		t.Fatalf("force unlock of bob's permits = %d, want 1 owner", n)
	}
	if m := next(); m != "{f}:grant:c3 wake dave" {
		t.Fatalf("after bob's removal: %q, want a wake-up for dave (none for him before)", m)
	}
	if got := acquire("dave", 1, "c3"); got[0] != int64(1) {
		t.Fatalf("dave after the wake-up = %v", got)
	}
	if n := force(); n != 1 {
		t.Fatalf("force unlock of dave's permit = %d, want 1", n)
	}
	if m := next(); m != "{f}:released released" {
		t.Fatalf("a force unlock with no one queued: %q, want \"released\" for version-4 waiters", m)
	}
	quiet()

	if _, err := call("sem.forceunlock@1", forceKeys, "{f}:released", "PUB", "{f}:grant:"); err == nil || !strings.Contains(err.Error(), "publish must be") {
		t.Fatalf("sem.forceunlock@1 with a bad publish = %v, want an error naming it", err)
	}
}
