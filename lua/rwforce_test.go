package lua_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// rw.forceunlock@1 on a real server: it removes every live read hold and
// counts the owners, wakes the oldest live waiting writer alone ("wake
// <owner>" on its client's grant channel), says "released" when no writer
// waits, and when no read hold is live it writes nothing and wakes no one.
func TestRWForceUnlock(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	runner, call := scriptCaller(t, srv)
	run := mustRun(t, call)
	keysOf := func(n string) []string {
		return []string{n, n + ":readers", n + ":rholds", n + ":wwait", n + ":fence", n + ":permits", n + ":gone", n + ":wclients"}
	}
	rlock := func(n, owner string, ttl int) {
		t.Helper()
		if got := run("rw.rlock@3", keysOf(n)[:7], owner, ttl, "0", owner+"-attempt"); got[0] != int64(1) {
			t.Fatalf("%s's RLock on %s = %v, want {1, ...}", owner, n, got)
		}
	}
	force := func(n string) int64 {
		t.Helper()
		return run("rw.forceunlock@1", []string{n + ":readers", n + ":rholds", n + ":wwait", n + ":wclients"},
			n+":released", "PUBLISH", n+":grant:")[0].(int64)
	}
	next, quiet := listen(t, runner, "{r}:grant:c1", "{r}:grant:c2", "{r}:released", "{q}:released")
	// expect takes the messages want, in order, and then checks that no
	// other arrives for a moment.
	expect := func(after string, want ...string) {
		t.Helper()
		for _, w := range want {
			if m := next(); m != w {
				t.Fatalf("after %s: message %q, want %q", after, m, w)
			}
		}
		time.Sleep(100 * time.Millisecond)
		quiet()
	}

	rlock("{r}", "r1", 60000)
	rlock("{r}", "r2", 60000)
	rlock("{r}", "r2", 60000) // reentrant: two holds, one owner
	// Waiting writers: w1 (deadline now+5s) is older than w2 (now+9s).
	if got := run("rw.lock@4", keysOf("{r}"), "w2", 60000, 9000, "", "a2", "c2"); got[0] != int64(0) {
		t.Fatalf("w2 = %v, want {0, hint}", got)
	}
	if got := run("rw.lock@4", keysOf("{r}"), "w1", 60000, 5000, "", "a1", "c1"); got[0] != int64(0) {
		t.Fatalf("w1 = %v, want {0, hint}", got)
	}
	if n := force("{r}"); n != 2 {
		t.Fatalf("force unlock of 2 readers = %d, want 2", n)
	}
	expect("removing the readers", "{r}:grant:c1 wake w1")
	if n := rc.Exists(ctx, "{r}:readers", "{r}:rholds").Val(); n != 0 {
		t.Fatalf("%d reader keys left after a force unlock", n)
	}
	if got := run("rw.rextend@1", []string{"{r}:readers", "{r}:rholds"}, "r1", 60000); got[0] != int64(-1) {
		t.Fatalf("a removed reader's renewal = %v, want -1", got)
	}
	if got := run("rw.lock@4", keysOf("{r}"), "w1", 60000, 5000, "", "a1", "c1"); got[0] != int64(1) {
		t.Fatalf("the woken writer = %v, want {1, ...}: the lock is free of readers", got)
	}
	if n := force("{r}"); n != 0 {
		t.Fatalf("force unlock with no reader = %d, want 0", n)
	}
	expect("a force unlock with no reader")

	// A reader whose lease ran out holds nothing: not counted. With no
	// writer waiting, "released" goes out, for readers and for writers that
	// recorded no client.
	rlock("{q}", "late", 1)
	rlock("{q}", "r3", 60000)
	time.Sleep(5 * time.Millisecond)
	if n := force("{q}"); n != 1 {
		t.Fatalf("force unlock of 1 live and 1 expired reader = %d, want 1", n)
	}
	expect("removing a reader no writer waits behind", "{q}:released released")
	if _, err := call("rw.forceunlock@1", []string{"{q}:readers", "{q}:rholds", "{q}:wwait", "{q}:wclients"}, "{q}:released", "PUB", "{q}:grant:"); err == nil || !strings.Contains(err.Error(), "publish must be PUBLISH or SPUBLISH") {
		t.Fatalf("bad publish = %v, want an error naming it", err)
	}
}
