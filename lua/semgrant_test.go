package lua_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// sem.release@5 hands freed permits to the queued sem.acquire@6 calls that
// now fit, on a real server: the head's permits go into the permits set
// with min(TTL, waiter TTL), it leaves the queue, its offer and its entry,
// and only its client hears "grant <token> <owner> <owner>" with a token
// larger than every earlier one and than the server time the waiter saw.
// Its later attempt claims them for a full lease with a newer token. A
// waiter queued without an offer is only woken; a dead waiter
// is skipped for the next live one; a waiter that does not fit stops the
// line; an undone grantee's permits go to the next in line.
func TestSemaphoreGrant(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	runner, call := scriptCaller(t, srv)
	run := mustRun(t, call)
	keys6 := []string{"{g}:permits", "{g}:limit", "{g}:fence", "{g}", "{g}:readers", "{g}:gone", "{g}:squeue", "{g}:swaiters", "{g}:soffers"}
	releaseKeys := []string{"{g}:permits", "{g}:gone", "{g}:limit", "{g}:squeue", "{g}:swaiters", "{g}:fence", "{g}:soffers"}
	const ttl, waiterTTL = 60000, 5000
	acquire := func(owner string, n int, client string) []any {
		return run("sem.acquire@6", keys6, owner, n, ttl, 2, owner, waiterTTL, client, "{g}:grant:", "PUBLISH")
	}
	release := func(owner string, n int, attempt string) []any {
		return run("sem.release@5", releaseKeys, owner, n, "{g}:released", "PUBLISH", attempt, 60000, "{g}:grant:")
	}
	// granted checks message m and the state of a grant of n permits to
	// owner on client, and returns its token.
	granted := func(m, owner string, n int, client string, after int64) int64 {
		t.Helper()
		prefix := "{g}:grant:" + client + " grant "
		rest, ok := strings.CutPrefix(m, prefix)
		f := strings.Fields(rest)
		if !ok || len(f) != 3 || f[1] != owner || f[2] != owner {
			t.Fatalf("message %q, want %q<token> %s %s", m, prefix, owner, owner)
		}
		token, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || token <= after {
			t.Fatalf("grant token %q, want a number above %d", f[0], after)
		}
		now := time.Now()
		for k := 1; k <= n; k++ {
			score, err := rc.ZScore(ctx, "{g}:permits", owner+":"+strconv.Itoa(k)).Result()
			if err != nil {
				t.Fatalf("%s's permit %d after the grant: %v", owner, k, err)
			}
			if left := time.UnixMilli(int64(score)).Sub(now); left <= 0 || left > waiterTTL*time.Millisecond {
				t.Fatalf("%s's permit %d lives %v, want at most its waiter TTL", owner, k, left)
			}
		}
		if rc.ZScore(ctx, "{g}:squeue", owner).Err() == nil || rc.HExists(ctx, "{g}:swaiters", owner).Val() || rc.HExists(ctx, "{g}:soffers", owner).Val() {
			t.Fatalf("%s is still queued (or has an entry or an offer) after its grant", owner)
		}
		return token
	}

	next, _ := listen(t, runner, "{g}:grant:c1", "{g}:grant:c2", "{g}:grant:c3", "{g}:released")
	// nothingElse checks that no message came before a marker published
	// now: one subscription connection delivers in order.
	nothingElse := func(what string) {
		t.Helper()
		rc.Publish(ctx, "{g}:released", "marker")
		if m := next(); m != "{g}:released marker" {
			t.Fatalf("%s: %q, want no message", what, m)
		}
	}

	first := acquire("alice", 2, "c1")
	if first[0] != int64(1) {
		t.Fatalf("alice takes both permits = %v", first)
	}
	queued := acquire("bob", 1, "c2")
	if queued[0] != int64(0) || queued[3] != int64(1) || len(queued) != 5 {
		t.Fatalf("bob = %v, want {0, hint, 2, 1, server_us}", queued)
	}
	if offer := rc.HGet(ctx, "{g}:soffers", "bob").Val(); offer != strconv.Itoa(ttl) {
		t.Fatalf("bob's offer %q, want his TTL %d", offer, ttl)
	}
	if n := rc.PTTL(ctx, "{g}:soffers").Val(); n <= 0 || n > waiterTTL*time.Millisecond {
		t.Fatalf("offers PTTL %v, want at most the waiter TTL", n)
	}
	// carol is queued without an offer (her offer is removed), so a
	// release only wakes her.
	if got := acquire("carol", 1, "c3"); got[0] != int64(0) || got[3] != int64(2) {
		t.Fatalf("carol = %v, want queued second", got)
	}
	rc.HDel(ctx, "{g}:soffers", "carol")

	release("alice", 2, "")
	bobToken := granted(next(), "bob", 1, "c2", max(first[1].(int64), queued[4].(int64)))
	if m := next(); m != "{g}:grant:c3 wake carol" {
		t.Fatalf("after the grant to bob: %q, want a wake-up for carol (no offer)", m)
	}
	nothingElse("after the wake-up for carol")
	if rc.ZScore(ctx, "{g}:permits", "carol:1").Err() == nil {
		t.Fatal("carol, queued without an offer, was given a permit")
	}

	claim := acquire("bob", 1, "c2")
	if claim[0] != int64(1) || claim[1].(int64) <= bobToken {
		t.Fatalf("bob's claim = %v, want {1, token above %d, left}", claim, bobToken)
	}
	if score := rc.ZScore(ctx, "{g}:permits", "bob:1").Val(); time.Until(time.UnixMilli(int64(score))) < 50*time.Second {
		t.Fatalf("bob's claimed permit lives until %v, want his full TTL", time.UnixMilli(int64(score)))
	}
	if got := acquire("carol", 1, "c3"); got[0] != int64(1) {
		t.Fatalf("carol after her wake-up = %v, want the free permit", got)
	}

	// Both permits held (bob, carol). dave is dead (his deadline passed),
	// erin asks for 2, frank for 1: erin is served first, frank waits.
	for _, w := range []struct {
		owner  string
		n      int
		client string
	}{{"dave", 1, "c1"}, {"erin", 2, "c2"}, {"frank", 1, "c3"}} {
		if got := acquire(w.owner, w.n, w.client); got[0] != int64(0) {
			t.Fatalf("%s = %v, want queued", w.owner, got)
		}
	}
	entry := rc.HGet(ctx, "{g}:swaiters", "dave").Val()
	_, rest, _ := strings.Cut(entry, " ")
	rc.HSet(ctx, "{g}:swaiters", "dave", "1 "+rest) // dave's deadline lies in the past
	release("bob", 1, "")
	nothingElse("one permit free, erin (2) at the live head")
	if rc.HExists(ctx, "{g}:swaiters", "dave").Val() || rc.HExists(ctx, "{g}:soffers", "dave").Val() {
		t.Fatal("the dead waiter dave is still queued")
	}
	release("carol", 1, "")
	erinToken := granted(next(), "erin", 2, "c2", claim[1].(int64))
	nothingElse("after erin's grant (frank does not fit)")

	// erin gives up (her Acquire was cancelled): her permits go to frank.
	release("erin", 2, "erin")
	granted(next(), "frank", 1, "c3", erinToken)
	if rc.ZScore(ctx, "{g}:permits", "erin:1").Err() == nil {
		t.Fatal("erin's permits survived her undo")
	}
	if got := acquire("erin", 2, "c2"); got[0] != int64(0) || len(got) != 3 {
		t.Fatalf("erin's late attempt = %v, want {0, 0, 0}: given up", got)
	}
	release("frank", 1, "")
	if m := next(); m != "{g}:released released" {
		t.Fatalf("the last release: %q, want \"released\"", m)
	}
	if n := rc.Exists(ctx, "{g}:squeue", "{g}:swaiters", "{g}:soffers").Val(); n != 0 {
		t.Fatalf("%d queue keys left with no waiter", n)
	}
}
