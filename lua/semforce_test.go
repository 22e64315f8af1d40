package lua_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	forceKeys := []string{"{f}:permits", "{f}:limit", "{f}:squeue", "{f}:swaiters"}
	// acquire stands for the acquire script of the layout sem.forceunlock@1
	// reads (a sorted set of permits, one member per permit, and the queue
	// entries "deadline waiter_ttl count limit client"), which the client
	// no longer runs: a free semaphore of 2 gives the permits, a full one
	// queues the caller.
	acquire := func(owner string, n int, client string) []any {
		t.Helper()
		now := time.Now().UnixMilli()
		used := rc.ZCount(ctx, "{f}:permits", strconv.FormatInt(now, 10), "+inf").Val()
		if first := rc.ZRange(ctx, "{f}:squeue", 0, 0).Val(); used+int64(n) <= 2 && (len(first) == 0 || first[0] == owner) {
			for k := 1; k <= n; k++ {
				rc.ZAdd(ctx, "{f}:permits", redis.Z{Score: float64(now + 60000), Member: owner + ":" + strconv.Itoa(k)})
			}
			rc.ZRem(ctx, "{f}:squeue", owner)
			rc.HDel(ctx, "{f}:swaiters", owner)
			return []any{int64(1)}
		}
		if rc.ZScore(ctx, "{f}:squeue", owner).Err() != nil {
			rc.ZAdd(ctx, "{f}:squeue", redis.Z{Score: float64(rc.ZCard(ctx, "{f}:squeue").Val() + 1), Member: owner})
		}
		rc.HSet(ctx, "{f}:swaiters", owner, fmt.Sprintf("%d 60000 %d 2 %s", now+60000, n, client))
		return []any{int64(0), int64(1000), int64(2), rc.ZRank(ctx, "{f}:squeue", owner).Val() + 1}
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
