package lua_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/redistest"
)

// rw.lock@4, rw.runlock@4, rw.unlock@1 and rw.leave@3 on a real server: a
// waiting writer records its client; a release that frees the lock wakes
// only the oldest live waiting writer ("wake <owner>" on its client's
// grant channel); the last reader out says "released" only when no writer
// waits or the oldest recorded no client, and the writer's release says it
// every time (readers that prefer reading may go); rw.unlock@1 keeps
// mutex.release's reentrancy and undo; rw.leave@3 and
// taking the lock drop the writer's client; bad arguments are errors.
func TestRWWakesOldestWriter(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	runner, call := scriptCaller(t, srv)
	run := mustRun(t, call)
	keys := []string{"{r}", "{r}:readers", "{r}:rholds", "{r}:wwait", "{r}:fence", "{r}:permits", "{r}:gone", "{r}:wclients"}
	lock := func(owner string, waiterTTL int, client, attempt string) []any {
		return run("rw.lock@4", keys, owner, 60000, waiterTTL, "", attempt, client)
	}
	noClient := func(owner string, waiterTTL int) []any { // a writer that records no client
		return lock(owner, waiterTTL, "", owner+"-attempt")
	}
	unlock := func(owner, attempt string) int64 {
		return run("rw.unlock@1", []string{"{r}", "{r}:gone", "{r}:wwait", "{r}:wclients"},
			owner, "{r}:released", "{r}:grant:", "PUBLISH", attempt, 60000)[0].(int64)
	}
	rlock := func(owner string) []any { // reader preference: waiting writers do not hold it back
		return run("rw.rlock@3", keys[:7], owner, 60000, "0", owner+"-attempt")
	}
	runlock := func(owner string) int64 {
		return run("rw.runlock@4", []string{"{r}:readers", "{r}:rholds", "{r}:gone", "{r}:wwait", "{r}:wclients"},
			owner, "{r}:released", "PUBLISH", "", 60000, "{r}:grant:")[0].(int64)
	}

	messages := make(chan string, 16)
	for _, ch := range []string{"{r}:grant:c1", "{r}:grant:c2", "{r}:grant:c3", "{r}:released"} {
		stop, err := runner.Subscribe(ctx, ch, func(p string) { messages <- ch + " " + p })
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
	}
	// expect takes the messages want (in any order) and then checks that
	// nothing else arrives for a moment.
	expect := func(after string, want ...string) {
		t.Helper()
		var got []string
		for range want {
			select {
			case m := <-messages:
				got = append(got, m)
			case <-time.After(10 * time.Second):
				t.Fatalf("after %s: got %q in 10s, want %q", after, got, want)
			}
		}
		select {
		case m := <-messages:
			got = append(got, m)
		case <-time.After(100 * time.Millisecond):
		}
		slices.Sort(got)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) {
			t.Fatalf("after %s: messages %q, want %q", after, got, want)
		}
	}

	if got := lock("w0", 5000, "c0", "a0"); got[0] != int64(1) {
		t.Fatalf("w0 on a free lock = %v, want {1, token, 1}", got)
	}
	// Deadlines now+5s, now+9s, now+20s: w1 is the oldest waiter.
	if got := lock("w1", 5000, "c1", "a1"); got[0] != int64(0) {
		t.Fatalf("w1 = %v, want {0, hint}", got)
	}
	if got := lock("w2", 9000, "c2", "a2"); got[0] != int64(0) {
		t.Fatalf("w2 = %v, want {0, hint}", got)
	}
	if got := noClient("old", 20000); got[0] != int64(0) {
		t.Fatalf("old (no client) = %v, want {0, hint}", got)
	}
	if got := lock("try", 1000, "", "at"); got[0] != int64(0) {
		t.Fatalf("try with no client = %v, want {0, hint}", got)
	}
	if m := rc.HGetAll(ctx, "{r}:wclients").Val(); len(m) != 2 || m["w1"] != "c1" || m["w2"] != "c2" {
		t.Fatalf("clients %v, want w1 -> c1 and w2 -> c2 only (an empty client is not recorded)", m)
	}
	if ttl := rc.PTTL(ctx, "{r}:wclients").Val(); ttl < 8*time.Second || ttl > 9*time.Second {
		t.Fatalf("clients PTTL %v, want the longest waiter TTL that recorded a client (9s)", ttl)
	}
	run("rw.leave@3", []string{"{r}:wwait", "{r}:wclients"}, "try", "{r}:released", "PUBLISH")
	expect("try left", "{r}:released released")
	lock("quitter", 5000, "c3", "aq")
	run("rw.leave@3", []string{"{r}:wwait", "{r}:wclients"}, "quitter", "{r}:released", "PUBLISH")
	expect("quitter left", "{r}:released released")
	if rc.HExists(ctx, "{r}:wclients", "quitter").Val() {
		t.Fatal("a writer that left is still recorded with its client")
	}

	// The writer's release: "released" for readers, and a wake-up for w1 alone.
	if n := unlock("w0", ""); n != 1 {
		t.Fatalf("w0's unlock = %d, want 1", n)
	}
	expect("w0's unlock", "{r}:released released", "{r}:grant:c1 wake w1")
	if got := lock("w1", 5000, "c1", "a1"); got[0] != int64(1) {
		t.Fatalf("w1 after its wake-up = %v, want {1, token, 1}", got)
	}
	if rc.HExists(ctx, "{r}:wclients", "w1").Val() {
		t.Fatal("w1 took the lock but its client is still recorded")
	}
	// Reentrancy: a second hold stays after one unlock, with no message.
	lock("w1", 5000, "c1", "a1b")
	if n := unlock("w1", ""); n != 2 {
		t.Fatalf("w1's first of two unlocks = %d, want 2", n)
	}
	expect("a reentrant unlock")
	if n := unlock("w1", ""); n != 1 {
		t.Fatalf("w1's last unlock = %d, want 1", n)
	}
	expect("w1's unlock", "{r}:released released", "{r}:grant:c2 wake w2")

	// A reader gets in first; its leaving wakes w2 alone: no reader can use
	// "released" while a writer waits.
	if got := rlock("r"); got[0] != int64(1) {
		t.Fatalf("reader = %v, want {1, token, 1}", got)
	}
	if got := lock("w2", 9000, "c2", "a2"); got[0] != int64(0) {
		t.Fatalf("w2 behind the reader = %v, want {0, hint}", got)
	}
	if n := runlock("r"); n != 1 {
		t.Fatalf("runlock = %d, want 1", n)
	}
	expect("the last reader's runlock", "{r}:grant:c2 wake w2")
	if got := lock("w2", 9000, "c2", "a2"); got[0] != int64(1) {
		t.Fatalf("w2 after its wake-up = %v", got)
	}
	// Only old (no client) waits: "released" is its wake-up.
	unlock("w2", "")
	expect("w2's unlock", "{r}:released released")
	rlock("r")
	noClient("old", 20000)
	runlock("r")
	expect("a runlock with only a writer without a client waiting", "{r}:released released")
	run("rw.leave@3", []string{"{r}:wwait", "{r}:wclients"}, "old", "{r}:released", "PUBLISH")
	expect("old left", "{r}:released released")
	// No writer waits: the last reader out says "released", as before.
	rlock("r")
	runlock("r")
	expect("a runlock with no writer waiting", "{r}:released released")
	if n := rc.Exists(ctx, "{r}:wwait", "{r}:wclients").Val(); n != 0 {
		t.Fatalf("%d waiting keys left with no writer waiting", n)
	}

	// Undo: only the attempt that took the hold drops it, and a given-up
	// attempt is refused later.
	lock("u", 5000, "c3", "took")
	if n := unlock("u", "other"); n != 2 {
		t.Fatalf("undoing another attempt of u = %d, want 2 (not its hold)", n)
	}
	if got := lock("u", 5000, "c3", "other"); got[0] != int64(0) || got[1] != int64(0) {
		t.Fatalf("the undone attempt arriving late = %v, want {0, 0}", got)
	}
	if rc.HGet(ctx, "{r}", "owner").Val() != "u" {
		t.Fatal("undoing another attempt dropped u's hold")
	}
	lock("v", 5000, "c1", "va")
	if n := unlock("u", "took"); n != 1 {
		t.Fatalf("undoing the attempt that took the hold = %d, want 1", n)
	}
	expect("u's undo", "{r}:released released", "{r}:grant:c1 wake v")
	if n := unlock("u", ""); n != -1 {
		t.Fatalf("unlock of a free lock = %d, want -1", n)
	}
	lock("v", 5000, "c1", "va")
	if n := unlock("u", ""); n != 0 {
		t.Fatalf("unlock of v's hold by u = %d, want 0", n)
	}

	for _, tc := range []struct {
		id   string
		keys []string
		args []any
		want string
	}{
		{"rw.unlock@1", []string{"{r}", "{r}:gone", "{r}:wwait", "{r}:wclients"}, []any{"o", "{r}:released", "{r}:grant:", "PUB", "", 60000}, "publish must be"},
		{"rw.unlock@1", []string{"{r}", "{r}:gone", "{r}:wwait", "{r}:wclients"}, []any{"o", "{r}:released", "{r}:grant:", "PUBLISH", "x", 0}, "gone_ttl_ms must be"},
		{"rw.runlock@4", []string{"{r}:readers", "{r}:rholds", "{r}:gone", "{r}:wwait", "{r}:wclients"}, []any{"o", "{r}:released", "PUB", "", 60000, "{r}:grant:"}, "publish must be"},
		{"rw.leave@3", []string{"{r}:wwait", "{r}:wclients"}, []any{"o", "{r}:released", "PUB"}, "publish must be"},
	} {
		if _, err := call(tc.id, tc.keys, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s%v = %v, want an error containing %q", tc.id, tc.args, err, tc.want)
		}
	}
}
