package lua_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

// sem.acquire's queue on a real server: a caller that cannot take its
// permits queues with an entry and a place, TryAcquire (waiter TTL 0) does
// not, a free permit owed to the head is refused to a newcomer, a release
// hands the permits to the head and tells only its client ("grant ..." on
// its grant channel, no "released" while a waiter is queued), sem.keepqueued moves deadlines
// and reports who is queued, the queue keys expire and vanish when empty,
// and bad arguments are errors that name them.
func TestSemaphoreQueue(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	runner, call := scriptCaller(t, srv)
	run := mustRun(t, call)
	keys := []string{"{q}:permits", "{q}:limit", "{q}:fence", "{q}", "{q}:readers", "{q}:gone", "{q}:squeue", "{q}:swaiters", "{q}:soffers"}
	releaseKeys := []string{"{q}:permits", "{q}:gone", "{q}:limit", "{q}:squeue", "{q}:swaiters", "{q}:fence", "{q}:soffers"}
	acquire := func(owner string, n, waiterTTL int, client string) []any {
		return run("sem.acquire@6", keys, owner, n, 60000, 2, owner, waiterTTL, client, "{q}:grant:", "PUBLISH")
	}
	release := func(owner string, n int) []any {
		return run("sem.release@5", releaseKeys, owner, n, "{q}:released", "PUBLISH", "", 60000, "{q}:grant:")
	}

	next, _ := listen(t, runner, "{q}:grant:c2", "{q}:grant:c3", "{q}:released")

	if got := acquire("alice", 1, 5000, "c1"); got[0] != int64(1) || got[2] != int64(1) {
		t.Fatalf("alice on a free semaphore of 2 = %v, want {1, token, 1}", got)
	}
	if got := acquire("bob", 2, 5000, "c2"); got[0] != int64(0) || got[2] != int64(2) || got[3] != int64(1) {
		t.Fatalf("bob asking for 2 with 1 free = %v, want {0, hint, 2, 1}: queued first", got)
	}
	entry := rc.HGet(ctx, "{q}:swaiters", "bob").Val()
	if f := strings.Fields(entry); len(f) != 5 || f[1] != "5000" || f[2] != "2" || f[3] != "2" || f[4] != "c2" {
		t.Fatalf("bob's entry %q, want \"<deadline> 5000 2 2 c2\"", entry)
	}
	if ttl := rc.PTTL(ctx, "{q}:squeue").Val(); ttl <= 0 || ttl > 5*time.Second {
		t.Fatalf("queue PTTL %v, want at most the waiter TTL", ttl)
	}
	if got := acquire("carol", 1, 0, "c3"); got[0] != int64(0) || got[3] != int64(0) {
		t.Fatalf("carol's TryAcquire of the permit owed to bob = %v, want {0, hint, 2, 0}: refused, not queued", got)
	}
	if got := acquire("dave", 1, 5000, "c3"); got[0] != int64(0) || got[3] != int64(2) {
		t.Fatalf("dave = %v, want {0, hint, 2, 2}: queued behind bob", got)
	}
	if got := run("sem.keepqueued@1", []string{"{q}:permits", "{q}:limit", "{q}:squeue", "{q}:swaiters"}, "PUBLISH", "{q}:grant:", "bob", "nobody"); got[0] != int64(1) || got[1] != int64(0) {
		t.Fatalf("keepqueued bob, nobody = %v, want {1, 0}", got)
	}

	if got := release("alice", 1); got[0] != int64(1) {
		t.Fatalf("alice's release = %v, want 1", got)
	}
	// The release hands the freed permits to the head that now fits, in the
	// script, and tells only its client.
	if m := next(); !strings.HasPrefix(m, "{q}:grant:c2 grant ") || !strings.HasSuffix(m, " bob bob") {
		t.Fatalf("after alice's release: %q, want a grant to bob on c2's channel only", m)
	}
	release("bob", 2)
	if m := next(); !strings.HasPrefix(m, "{q}:grant:c3 grant ") || !strings.HasSuffix(m, " dave dave") {
		t.Fatalf("after bob's release: %q, want a grant to dave", m)
	}
	release("dave", 1)
	if m := next(); m != "{q}:released released" {
		t.Fatalf("a release with no one queued: %q, want \"released\" for waiters that do not queue", m)
	}
	if n := rc.Exists(ctx, "{q}:squeue", "{q}:swaiters").Val(); n != 0 {
		t.Fatalf("%d queue keys left with no waiter", n)
	}

	for _, tc := range []struct {
		id   string
		keys []string
		args []any
		want string
	}{
		{"sem.acquire@6", keys, []any{"o", 1, 60000, 2, "o", 5000, "c", "{q}:grant:", "PUB"}, "publish must be"},
		{"sem.acquire@6", keys, []any{"o", 0, 60000, 2, "o", 5000, "c", "{q}:grant:", "PUBLISH"}, "count must be at least 1"},
		{"sem.release@5", releaseKeys, []any{"o", 0, "{q}:released", "PUBLISH", "", 60000, "{q}:grant:"}, "count must be at least 1"},
		{"sem.setlimit@3", []string{"{q}:limit", "{q}:permits", "{q}:squeue", "{q}:swaiters"}, []any{0, "{q}:released", "PUBLISH", "{q}:grant:"}, "permits must be at least 1"},
		{"sem.keepqueued@1", []string{"{q}:permits", "{q}:limit", "{q}:squeue", "{q}:swaiters"}, []any{"PUB", "{q}:grant:"}, "publish must be"},
	} {
		if _, err := call(tc.id, tc.keys, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s%v = %v, want an error containing %q", tc.id, tc.args, err, tc.want)
		}
	}
}

// listen subscribes to channels through runner and returns next, which
// waits up to 10 s for the next message ("<channel> <payload>"), and quiet,
// which fails the test if a message is waiting.
func listen(t *testing.T, runner *evalsha.Runner, channels ...string) (next func() string, quiet func()) {
	t.Helper()
	messages := make(chan string, 16)
	for _, ch := range channels {
		stop, err := runner.Subscribe(context.Background(), ch, func(p string) { messages <- ch + " " + p })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	next = func() string {
		t.Helper()
		select {
		case m := <-messages:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no message in 10s")
			return ""
		}
	}
	quiet = func() {
		t.Helper()
		select {
		case m := <-messages:
			t.Fatalf("unexpected message %q", m)
		default:
		}
	}
	return next, quiet
}
