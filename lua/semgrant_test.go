package lua_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// sem.release@11 hands freed permits to the queued sem.acquire@11 calls that
// now fit, on a real server: the head gets a record p:<owner> in state g
// that lives min(TTL, waiter TTL), it leaves the queue, and only its client
// hears "grant <token> <owner> <owner>" with a token larger than every
// earlier one and than the server time the waiter saw. Its later attempt
// claims the permits for a full lease with a newer token. A dead waiter is
// skipped for the next live one; a waiter that does not fit stops the
// line; an undone grantee's permits go to the next in line; an undone
// attempt is refused when it arrives.
func TestSemaphoreGrant(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	runner, call := scriptCaller(t, srv)
	const ttl, waiterTTL = 60000, 5000
	s := semCalls{t: t, run: mustRun(t, call), call: call, tag: "g", ttl: ttl, limit: 2}
	// record returns owner's record fields, or nil.
	record := func(owner string) []string {
		v, err := rc.HGet(ctx, "{g}", "p:"+owner).Result()
		if err != nil {
			return nil
		}
		return strings.Split(v, "\t")
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
		r := record(owner)
		if len(r) != 6 || r[1] != "g" || r[2] != strconv.Itoa(n) || r[3] != client || r[4] != owner || !strings.Contains(r[5], owner) {
			t.Fatalf("%s's record after the grant: %q, want expiry, g, %d, %s, %s, meta", owner, r, n, client, owner)
		}
		expiry, _ := strconv.ParseInt(r[0], 10, 64)
		if left := time.Until(time.UnixMilli(expiry)); left <= 0 || left > waiterTTL*time.Millisecond {
			t.Fatalf("%s's grant lives %v, want at most its waiter TTL", owner, left)
		}
		if rc.ZScore(ctx, "{g}:squeue", owner).Err() == nil || rc.HExists(ctx, "{g}", "w:"+owner).Val() {
			t.Fatalf("%s is still queued (or has an entry) after its grant", owner)
		}
		if f, _ := rc.HGet(ctx, "{g}", "f").Int64(); f < token {
			t.Fatalf("f = %d after the grant, want at least its token %d", f, token)
		}
		return token
	}

	next, quiet := listen(t, runner, "{g}:grant:c1", "{g}:grant:c2", "{g}:grant:c3", "{g}:marker")
	// nothingElse checks that no message came before a marker published
	// now: one subscription connection delivers in order.
	nothingElse := func(what string) {
		t.Helper()
		rc.Publish(ctx, "{g}:marker", "marker")
		if m := next(); m != "{g}:marker marker" {
			t.Fatalf("%s: %q, want no message", what, m)
		}
	}

	first := s.acquire("alice", 2, waiterTTL, "c1")
	if !taken(first) {
		t.Fatalf("alice takes both permits = %v", first)
	}
	queued := s.acquire("bob", 1, waiterTTL, "c2")
	if queued[0] != int64(0) || queued[3] != int64(1) || len(queued) != 5 {
		t.Fatalf("bob = %v, want {0, hint, 2, 1, server_us}", queued)
	}
	if got := s.acquire("carol", 1, waiterTTL, "c3"); got[0] != int64(0) || got[3] != int64(2) {
		t.Fatalf("carol = %v, want queued second", got)
	}

	s.release("alice")
	bobToken := granted(next(), "bob", 1, "c2", max(first[0].(int64), queued[4].(int64)))
	carolToken := granted(next(), "carol", 1, "c3", bobToken)
	nothingElse("after the grants to bob and carol")

	claim := s.acquire("bob", 1, waiterTTL, "c2")
	if !taken(claim) || claim[0].(int64) <= carolToken {
		t.Fatalf("bob's claim = %v, want a token above %d", claim, carolToken)
	}
	if r := record("bob"); r[1] != "h" {
		t.Fatalf("bob's record after his claim: %q, want state h", r)
	} else if expiry, _ := strconv.ParseInt(r[0], 10, 64); time.Until(time.UnixMilli(expiry)) < 50*time.Second {
		t.Fatalf("bob's claimed permit lives until %v, want his full TTL", time.UnixMilli(expiry))
	}
	// carol confirms her grant by an extension instead.
	if got := s.extend("carol", ttl); got != 1 {
		t.Fatalf("carol's extension of her grant = %d, want 1", got)
	}
	if r := record("carol"); r[1] != "h" {
		t.Fatalf("carol's record after her extension: %q, want state h", r)
	}

	// Both permits held (bob, carol). dave is dead (his deadline passed),
	// erin asks for 2, frank for 1: erin is served first, frank waits.
	for _, w := range []struct {
		owner  string
		n      int64
		client string
	}{{"dave", 1, "c1"}, {"erin", 2, "c2"}, {"frank", 1, "c3"}} {
		if got := s.acquire(w.owner, w.n, waiterTTL, w.client); got[0] != int64(0) {
			t.Fatalf("%s = %v, want queued", w.owner, got)
		}
	}
	entry := rc.HGet(ctx, "{g}", "w:dave").Val()
	_, rest, _ := strings.Cut(entry, " ")
	rc.HSet(ctx, "{g}", "w:dave", "1 "+rest) // dave's deadline lies in the past
	s.release("bob")
	nothingElse("one permit free, erin (2) at the live head")
	if rc.HExists(ctx, "{g}", "w:dave").Val() {
		t.Fatal("the dead waiter dave is still queued")
	}
	s.release("carol")
	erinToken := granted(next(), "erin", 2, "c2", claim[0].(int64))
	nothingElse("after erin's grant (frank does not fit)")

	// erin gives up (her Acquire was cancelled): her permits go to frank.
	if got := s.undo("erin"); got != 1 {
		t.Fatalf("erin's undo = %d, want 1: she held live permits", got)
	}
	granted(next(), "frank", 1, "c3", erinToken)
	if record("erin") != nil {
		t.Fatal("erin's permits survived her undo")
	}
	if got := s.acquire("erin", 2, waiterTTL, "c2"); got[0] != int64(0) || len(got) != 3 {
		t.Fatalf("erin's late attempt = %v, want {0, 0, 0}: given up", got)
	}
	if g := rc.HGet(ctx, "{g}", "g:erin").Val(); g == "" {
		t.Fatal("no g:erin record after her undo")
	}
	s.release("frank")
	nothingElse("the last release, with no one queued")
	quiet()
	if n := rc.Exists(ctx, "{g}:squeue").Val(); n != 0 {
		t.Fatal("the queue is left with no waiter")
	}
	if q, h := rc.HExists(ctx, "{g}", "q").Val(), rc.HExists(ctx, "{g}", "h").Val(); q || h {
		t.Fatalf("q present %v, h present %v after the last release, want neither", q, h)
	}
}

// Counts up to 2^53 stay exact: of a limit of 2^53, 2^53-1 permits leave
// one, which a request for 2 does not get and a request for 1 does; h
// counts them in one record each, and the releases bring it back to none.
func TestSemaphoreCountsStayExact(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	const max = int64(1) << 53
	s := semCalls{t: t, run: mustRun(t, call), call: call, tag: "x", ttl: 60000, limit: max}
	if got := s.acquire("big", max-1, 0, "c1"); !taken(got) {
		t.Fatalf("2^53-1 of 2^53 permits = %v, want a token", got)
	}
	if got := s.acquire("two", 2, 0, "c1"); taken(got) {
		t.Fatalf("2 more permits with 1 free = %v, want a refusal", got)
	}
	if got := s.acquire("one", 1, 0, "c1"); !taken(got) {
		t.Fatalf("the last permit = %v, want a token", got)
	}
	if h := rc.HGet(ctx, "{x}", "h").Val(); !strings.HasSuffix(h, "\t9007199254740992") {
		t.Fatalf("h = %q, want 2^53 permits in use", h)
	}
	if n, _ := rc.HLen(ctx, "{x}").Result(); n != 5 {
		t.Fatalf("the lock hash has %d fields, want h, f, u and one record per holder", n)
	}
	s.release("big")
	if h := rc.HGet(ctx, "{x}", "h").Val(); !strings.HasSuffix(h, "\t1") {
		t.Fatalf("h after the big release = %q, want 1 permit in use", h)
	}
	s.release("one")
	if rc.HExists(ctx, "{x}", "h").Val() || rc.HExists(ctx, "{x}", "u").Val() {
		t.Fatal("h or u is left after the last release")
	}
}
