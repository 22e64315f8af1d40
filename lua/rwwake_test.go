package lua_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
)

// rwCalls runs the RWMutex scripts on one lock name as the locks package
// calls them (docs/layout.md: the lock's hash and its index).
type rwCalls struct {
	t    *testing.T
	run  func(id string, keys []string, args ...any) []any
	call func(id string, keys []string, args ...any) (any, error)
	key  string
}

const rwMeta = `{"host":"h","pid":1}`

// rlock takes a read hold (writer preference, waiting) for owner's attempt.
func (r rwCalls) rlock(owner, attempt string) []any {
	r.t.Helper()
	return r.run("rw.rlock@7", []string{r.key, r.key + ":rw"}, "r:"+owner, 60000, "g:"+attempt, "wq--c-"+owner+"\t"+attempt+"\t"+rwMeta)
}

// rlockFlags is rlock with its own flags (four characters).
func (r rwCalls) rlockFlags(owner, attempt, flags string) []any {
	r.t.Helper()
	return r.run("rw.rlock@7", []string{r.key, r.key + ":rw"}, "r:"+owner, 60000, "g:"+attempt, flags+"c-"+owner+"\t"+attempt+"\t"+rwMeta)
}

// lock takes the write hold (waiterTTL 0: a single attempt) for owner's
// attempt; the client is client.
func (r rwCalls) lock(owner string, waiterTTL int, client, attempt string) []any {
	r.t.Helper()
	token, _, _ := strings.Cut(owner, "\t")
	return r.run("rw.lock@7", []string{r.key, r.key + ":rw"}, owner, 60000, "g:"+attempt,
		fmt.Sprintf("wq--%08d", waiterTTL)+client+"\t"+attempt+"\t"+token+"\t"+rwMeta)
}

func (r rwCalls) unlock(owner string, record ...string) int64 {
	r.t.Helper()
	args := []any{owner}
	for _, f := range record {
		args = append(args, f)
	}
	return r.run("rw.unlock@4", []string{r.key, r.key + ":rw"}, args...)[0].(int64)
}

func (r rwCalls) runlock(owner string) int64 {
	r.t.Helper()
	return r.run("rw.runlock@8", []string{r.key, r.key + ":rw"}, "r:"+owner)[0].(int64)
}

// leave gives up owner's attempt (hold r or w).
func (r rwCalls) leave(owner, attempt, hold string) int64 {
	r.t.Helper()
	return r.run("rw.leave@6", []string{r.key, r.key + ":rw"}, owner, attempt, 60000, hold, "PUBLISH")[0].(int64)
}

func (r rwCalls) extend(owner string, ttl int, hold string) int64 {
	r.t.Helper()
	return r.run("rw.rextend@4", []string{r.key, r.key + ":rw"}, owner, ttl, hold)[0].(int64)
}

// taken says a reply is a fencing token (an integer).
func taken(reply []any) bool {
	token, ok := reply[0].(int64)
	return ok && len(reply) == 1 && token > 1
}

// waits says a reply is {0, hint} with a positive hint.
func waits(reply []any) bool {
	return len(reply) == 2 && reply[0] == int64(0) && reply[1].(int64) > 0
}

// rw.lock@7, rw.runlock@8, rw.unlock@4 and rw.leave@6 on a real server: a
// waiting writer records its client (W:<owner>) and keeps q; a release
// that frees the lock wakes only the oldest live waiting writer ("wake
// <owner>" on its client's grant channel); the last reader out says
// "released" only when no writer waits, and the writer's release says it
// whenever someone waits (readers that prefer reading may go); releases
// that find no q publish nothing; rw.unlock@4 keeps the reentrancy;
// rw.leave@6 and taking the lock drop the writer's entry; bad arguments
// are errors.
func TestRWWakesOldestWriter(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	runner, call := scriptCaller(t, srv)
	r := rwCalls{t: t, run: mustRun(t, call), call: call, key: "{r}"}

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
	field := func(name string) string { return rc.HGet(ctx, "{r}", name).Val() }

	// Uncontended: no q, no message.
	if got := r.lock("w0", 5000, "c0", "a0"); !taken(got) {
		t.Fatalf("w0 on a free lock = %v, want its token", got)
	}
	if n := r.unlock("w0"); n != 1 {
		t.Fatalf("w0's unlock = %d, want 1", n)
	}
	if got := r.rlock("r", "ra"); !taken(got) {
		t.Fatalf("a reader on a free lock = %v, want its token", got)
	}
	if n := r.runlock("r"); n != 1 {
		t.Fatalf("runlock = %d, want 1", n)
	}
	expect("uncontended releases")

	if got := r.lock("w0", 5000, "c0", "a0"); !taken(got) {
		t.Fatalf("w0 on a free lock = %v, want its token", got)
	}
	// Deadlines now+5s, now+9s: w1 is the oldest waiter.
	if got := r.lock("w1", 5000, "c1", "a1"); !waits(got) {
		t.Fatalf("w1 = %v, want {0, hint}", got)
	}
	if got := r.lock("w2", 9000, "c2", "a2"); !waits(got) {
		t.Fatalf("w2 = %v, want {0, hint}", got)
	}
	if got := r.lock("try", 0, "c3", "at"); !waits(got) {
		t.Fatalf("a single attempt = %v, want {0, hint}", got)
	}
	if e := field("W:try"); e != "" {
		t.Fatalf("a single attempt (waiter TTL 0) was recorded: %q", e)
	}
	if e := field("W:w1"); !strings.HasSuffix(e, "\tc1") {
		t.Fatalf("W:w1 = %q, want deadline \\t c1", e)
	}
	if p := field("P:"); p != "PUBLISH" {
		t.Fatalf("P: = %q, want PUBLISH", p)
	}
	if ttl := rc.PTTL(ctx, "{r}").Val(); ttl < 50*time.Second {
		t.Fatalf("the lock's PTTL %v, want about the lease (60s)", ttl)
	}
	r.lock("quitter", 5000, "c3", "aq")
	if n := r.leave("quitter", "aq", "w"); n != 0 {
		t.Fatalf("a waiting writer's give-up = %d, want 0 (it held nothing)", n)
	}
	expect("quitter left", "{r}:released released")
	if field("W:quitter") != "" {
		t.Fatal("a writer that gave up is still waiting")
	}

	// The writer's release: "released" for readers, and a wake-up for w1 alone.
	if n := r.unlock("w0"); n != 1 {
		t.Fatalf("w0's unlock = %d, want 1", n)
	}
	expect("w0's unlock", "{r}:released released", "{r}:grant:c1 wake w1")
	// Writer preference: a reader waits behind w1 and w2.
	if got := r.rlock("r", "rb"); !waits(got) {
		t.Fatalf("a reader while writers wait = %v, want {0, hint}", got)
	}
	if got := r.rlockFlags("rp", "rpa", "-q--"); !taken(got) {
		t.Fatalf("a reader that prefers reading while writers wait = %v, want its token", got)
	}
	if n := r.runlock("rp"); n != 1 {
		t.Fatalf("runlock = %d, want 1", n)
	}
	expect("the preferring reader's runlock", "{r}:grant:c1 wake w1")
	if got := r.lock("w1", 5000, "c1", "a1"); !taken(got) {
		t.Fatalf("w1 after its wake-up = %v, want its token", got)
	}
	if field("W:w1") != "" {
		t.Fatal("w1 took the lock but still waits")
	}
	// Reentrancy: a second hold stays after one unlock, with no message.
	r.lock("w1", 5000, "c1", "a1b")
	if h := field("h"); !strings.HasPrefix(h, "rwmutex\t") || strings.Split(h, "\t")[3] != "2" {
		t.Fatalf("h = %q, want a count of 2", h)
	}
	if n := r.unlock("w1"); n != 2 {
		t.Fatalf("w1's first of two unlocks = %d, want 2", n)
	}
	expect("a reentrant unlock")
	if n := r.unlock("w1"); n != 1 {
		t.Fatalf("w1's last unlock = %d, want 1", n)
	}
	expect("w1's unlock", "{r}:released released", "{r}:grant:c2 wake w2")

	// A reader gets in first (w2 does not look); its leaving wakes w2
	// alone: no reader can use "released" while a writer waits.
	if got := r.rlockFlags("r2", "r2a", "----"); !taken(got) {
		t.Fatalf("reader = %v, want its token", got)
	}
	if got := r.lock("w2", 9000, "c2", "a2"); !waits(got) {
		t.Fatalf("w2 behind the reader = %v, want {0, hint}", got)
	}
	if n := r.runlock("r2"); n != 1 {
		t.Fatalf("runlock = %d, want 1", n)
	}
	expect("the last reader's runlock", "{r}:grant:c2 wake w2")
	if got := r.lock("w2", 9000, "c2", "a2"); !taken(got) {
		t.Fatalf("w2 after its wake-up = %v", got)
	}
	// Only a reader waits: "released" is its wake-up.
	if got := r.rlock("r3", "r3a"); !waits(got) {
		t.Fatalf("a reader behind w2 = %v, want {0, hint}", got)
	}
	r.unlock("w2")
	expect("w2's unlock", "{r}:released released")
	// Two readers: the first out wakes no one, the last wakes the writer.
	r.rlockFlags("ra", "raa", "----")
	r.rlockFlags("rb", "rba", "----")
	if h := field("h"); !strings.HasSuffix(h, "\tr\t2") {
		t.Fatalf("h with two readers = %q, want a count of 2", h)
	}
	r.lock("w3", 5000, "c3", "a3")
	r.runlock("ra")
	expect("the first of two readers out")
	r.runlock("rb")
	expect("the last reader out", "{r}:grant:c3 wake w3")
	if field("h") != "" {
		t.Fatalf("h after the last reader = %q, want none", field("h"))
	}
	r.leave("w3", "a3", "w")
	expect("w3 gave up", "{r}:released released")

	// Undo: only the attempt that took the hold drops it, and a given-up
	// attempt is refused later.
	r.lock("u", 5000, "c3", "took")
	if n := r.leave("u", "other", "w"); n != 0 {
		t.Fatalf("undoing another attempt of u = %d, want 0 (not its hold)", n)
	}
	if got := r.lock("u", 5000, "c3", "other"); len(got) != 2 || got[0] != int64(0) || got[1] != int64(0) {
		t.Fatalf("the undone attempt arriving late = %v, want {0, 0}", got)
	}
	if h := strings.Split(field("h"), "\t"); len(h) < 7 || h[6] != "u" {
		t.Fatal("undoing another attempt dropped u's hold")
	}
	r.lock("v", 5000, "c1", "va")
	if n := r.leave("u", "took", "w"); n != 1 {
		t.Fatalf("undoing the attempt that took the hold = %d, want 1", n)
	}
	expect("u's undo", "{r}:released released", "{r}:grant:c1 wake v")
	if n := r.unlock("u"); n != -1 {
		t.Fatalf("unlock of a free lock = %d, want -1", n)
	}
	r.lock("v", 5000, "c1", "va")
	if n := r.unlock("u"); n != 0 {
		t.Fatalf("unlock of v's hold by u = %d, want 0", n)
	}

	for _, tc := range []struct {
		id   string
		args []any
		want string
	}{
		{"rw.rlock@7", []any{"r:o", 5, "g:x", "----c\tx\t"}, "ttl_ms must be"},
		{"rw.rlock@7", []any{"r:o", 604800001, "g:x", "----c\tx\t"}, "ttl_ms must be"},
		{"rw.rlock@7", []any{"r:o", "soon", "g:x", "----c\tx\t"}, "ttl_ms must be"},
		{"rw.rlock@7", []any{"r:o", 1000, "g:x", "--"}, "spec must"},
		{"rw.lock@7", []any{"o", 1000.5, "g:x", "wq--00001000c\tx\to\t"}, "ttl_ms must be"},
		{"rw.lock@7", []any{"o", 1000, "g:x", "wq--00000005c\tx\to\t"}, "waiter_ttl_ms"},
		{"rw.lock@7", []any{"o", 1000, "g:x", "wq--90000000c\tx\to\t"}, "waiter_ttl_ms"},
		{"rw.rextend@4", []any{"o", 0, "r"}, "ttl_ms must be"},
		{"rw.rextend@4", []any{"o", 1000, "x"}, "hold must be"},
		{"rw.leave@6", []any{"o", "a", 60000, "w", "PUB"}, "publish must be"},
		{"rw.leave@6", []any{"o", "a", 0, "w", "PUBLISH"}, "gone_ttl_ms must be"},
		{"rw.leave@6", []any{"o", "a", 60000, "z", "PUBLISH"}, "hold must be"},
	} {
		if tc.id == "rw.lock@7" {
			rc.Del(ctx, "{r}") // the waiter TTL is checked when the writer must wait
			r.lock("holder", 0, "c9", "h1")
		}
		if _, err := call(tc.id, []string{"{r}", "{r}:rw"}, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s%q = %v, want an error containing %q", tc.id, tc.args, err, tc.want)
		}
	}
}

// The layout of docs/layout.md on a real server: h and r:<owner> hold what the
// contract says (the reader's metadata among it), every grant takes its
// token from TIME or f + 1 and writes f, an owner's read hold survives its
// write hold (a downgrade), calls that share a token hold apart, revoked
// holds are not extended (-2) but released like held ones, another kind's
// live h refuses with its kind and a lapsed one is taken.
func TestRWLayout(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	_, call := scriptCaller(t, srv)
	r := rwCalls{t: t, run: mustRun(t, call), call: call, key: "{l}"}
	hash := func() map[string]string { return rc.HGetAll(ctx, "{l}").Val() }

	before := time.Now().UnixMicro()
	got := r.rlock("alice", "a1")
	if !taken(got) || got[0].(int64) < before-int64(time.Minute/time.Microsecond) {
		t.Fatalf("rlock = %v, want a token from the server's clock", got)
	}
	token := got[0].(int64)
	m := hash()
	if f := m["f"]; f != fmt.Sprint(token) {
		t.Fatalf("f = %q, want the token %d", f, token)
	}
	h := strings.Split(m["h"], "\t")
	rec := strings.Split(m["r:alice"], "\t")
	if len(h) != 4 || h[0] != "rwmutex" || h[2] != "r" || h[3] != "1" {
		t.Fatalf("h = %q, want rwmutex \\t until \\t r \\t 1", m["h"])
	}
	if len(rec) != 6 || rec[0] != h[1] || rec[1] != "h" || rec[2] != "1" || rec[3] != "c-alice" || rec[4] != "a1" || rec[5] != rwMeta {
		t.Fatalf("r:alice = %q, want expiry (h's until) \\t h \\t 1 \\t client \\t attempt \\t meta", m["r:alice"])
	}
	// A token at or past the clock continues from f.
	future := time.Now().Add(time.Hour).UnixMicro()
	rc.HSet(ctx, "{l}", "f", future)
	if got := r.rlock("bob", "b1"); !taken(got) || got[0].(int64) != future+1 {
		t.Fatalf("rlock after f = %d: %v, want %d", future, got, future+1)
	}
	if h := hash()["h"]; !strings.HasSuffix(h, "\tr\t2") {
		t.Fatalf("h with two readers = %q", h)
	}
	// Reentrant read holds count in the record.
	if got := r.rlockFlags("alice", "a2", "wqr-"); !taken(got) {
		t.Fatalf("alice again = %v", got)
	}
	if rec := strings.Split(hash()["r:alice"], "\t"); rec[2] != "2" || rec[4] != "a1" {
		t.Fatalf("r:alice after a re-entry = %q, want count 2 and the first attempt", hash()["r:alice"])
	}
	if n := r.runlock("alice"); n != 2 {
		t.Fatalf("alice's first runlock = %d, want 2", n)
	}
	// Revoked: not extended, released like a held one.
	rec = strings.Split(hash()["r:alice"], "\t")
	rec[1] = "x"
	rc.HSet(ctx, "{l}", "r:alice", strings.Join(rec, "\t"))
	if n := r.extend("alice", 60000, "r"); n != -2 {
		t.Fatalf("extend of a revoked read hold = %d, want -2", n)
	}
	if n := r.runlock("alice"); n != 1 {
		t.Fatalf("runlock of a revoked read hold = %d, want 1", n)
	}
	if n := r.extend("alice", 60000, "r"); n != -1 {
		t.Fatalf("extend of a released read hold = %d, want -1", n)
	}
	if n := r.extend("bob", 120000, "r"); n != 1 {
		t.Fatalf("bob's extend = %d, want 1", n)
	}
	if ttl := rc.PTTL(ctx, "{l}").Val(); ttl < 110*time.Second {
		t.Fatalf("PTTL after a 120s extend = %v", ttl)
	}
	r.runlock("bob")
	if m := hash(); m["h"] != "" || len(m) != 1 {
		t.Fatalf("after the last reader: %v, want f alone", m)
	}

	// A reentrant writer that reads too downgrades on its Unlock.
	if got := r.lock("carol", 0, "c-carol", "c1"); !taken(got) {
		t.Fatalf("carol's lock = %v", got)
	}
	h = strings.Split(hash()["h"], "\t")
	if len(h) != 8 || h[2] != "h" || h[3] != "1" || h[4] != "c-carol" || h[5] != "c1" || h[6] != "carol" || h[7] != rwMeta {
		t.Fatalf("writer's h = %q, want rwmutex \\t until \\t h \\t 1 \\t client \\t attempt \\t owner \\t meta", hash()["h"])
	}
	if got := r.rlockFlags("dave", "d1", "wq--"); !waits(got) {
		t.Fatalf("another reader while carol writes = %v, want {0, hint}", got)
	}
	if got := r.rlockFlags("carol", "c2", "wqr-"); !taken(got) {
		t.Fatalf("carol's own read while writing = %v, want its token", got)
	}
	if n := r.extend("carol", 30000, "w"); n != 1 {
		t.Fatalf("carol's write extend = %d", n)
	}
	if h := strings.Split(hash()["h"], "\t"); h[1] != strings.Split(hash()["r:carol"], "\t")[0] {
		t.Fatalf("after a shorter write extend h's until %s is not the read hold's expiry", h[1])
	}
	if n := r.unlock("carol", "r:carol"); n != 1 {
		t.Fatalf("carol's unlock = %d", n)
	}
	if h := hash()["h"]; !strings.HasSuffix(h, "\tr\t1") {
		t.Fatalf("after the downgrade h = %q, want the readers' h with one record", h)
	}
	if got := r.rlockFlags("dave", "d2", "wq--"); !taken(got) {
		t.Fatalf("another reader after the downgrade = %v", got)
	}
	r.runlock("dave")
	r.runlock("carol")

	// Calls that share a token hold apart: h records the token and the attempt.
	if got := r.lock("tok\tx1", 0, "c", "x1"); !taken(got) {
		t.Fatalf("a call of tok = %v", got)
	}
	if h := strings.Split(hash()["h"], "\t"); h[5] != "x1" || h[6] != "tok" {
		t.Fatalf("h = %q, want attempt x1 and owner tok", hash()["h"])
	}
	if got := r.lock("tok\tx2", 0, "c", "x2"); !waits(got) {
		t.Fatalf("another call of tok = %v, want {0, hint}", got)
	}
	if n := r.unlock("tok\tx2"); n != 0 {
		t.Fatalf("another call's unlock = %d, want 0", n)
	}
	// Revoked write hold: -2 on extend, released by its owner.
	h = strings.Split(hash()["h"], "\t")
	h[2] = "x"
	rc.HSet(ctx, "{l}", "h", strings.Join(h, "\t"))
	if n := r.extend("tok\tx1", 60000, "w"); n != -2 {
		t.Fatalf("extend of a revoked write hold = %d, want -2", n)
	}
	if got := r.lock("eve", 0, "c", "e1"); !waits(got) {
		t.Fatalf("a writer while a revoked hold lasts = %v, want {0, hint}", got)
	}
	if n := r.unlock("tok\tx1"); n != 1 {
		t.Fatalf("unlock of the revoked hold = %d, want 1", n)
	}

	// Another kind: refused while its h lasts, taken once it lapsed.
	now := time.Now().UnixMilli()
	rc.HSet(ctx, "{l}", "h", fmt.Sprintf("mutex\t%d\th\t1\tc\ta\tother\t{}", now+60000))
	if got := r.rlock("frank", "f1"); len(got) != 2 || got[0] != int64(-1) || got[1] != "mutex" {
		t.Fatalf("rlock on a mutex's name = %v, want {-1, mutex}", got)
	}
	if got := r.lock("frank", 5000, "c", "f2"); len(got) != 2 || got[0] != int64(-1) || got[1] != "mutex" {
		t.Fatalf("lock on a mutex's name = %v, want {-1, mutex}", got)
	}
	if n := r.unlock("frank"); n != 0 {
		t.Fatalf("unlock on a mutex's name = %d, want 0", n)
	}
	rc.HSet(ctx, "{l}", "h", fmt.Sprintf("semaphore\t%d\tp\t1", now-1000))
	if got := r.lock("frank", 5000, "c", "f3"); !taken(got) {
		t.Fatalf("lock on a lapsed semaphore's name = %v, want its token", got)
	}
	// A lapsed reader's records go when a writer takes the lock after it:
	// the writer sweeps the index's members whose time passed.
	r.unlock("frank")
	rc.HSet(ctx, "{l}", "h", fmt.Sprintf("rwmutex\t%d\tr\t2", now-1000),
		"r:gone1", fmt.Sprintf("%d\th\t1\tc\ta\t{}", now-1000), "r:gone2", fmt.Sprintf("%d\th\t1\tc\ta\t{}", now-2000))
	rc.ZAdd(ctx, "{l}:rw", redis.Z{Score: float64(now - 1000), Member: "r:gone1"}, redis.Z{Score: float64(now - 2000), Member: "r:gone2"})
	if got := r.lock("grace", 0, "c", "g1"); !taken(got) {
		t.Fatalf("lock after lapsed readers = %v", got)
	}
	if m := hash(); m["r:gone1"] != "" || m["r:gone2"] != "" {
		t.Fatalf("lapsed records left: %v", m)
	}
	// A lapsed read record is not released (-1), and counts nothing down.
	r.unlock("grace")
	r.rlockFlags("live", "l1", "----")
	rc.HSet(ctx, "{l}", "r:late", fmt.Sprintf("%d\th\t1\tc\ta\t{}", now-1000))
	if n := r.runlock("late"); n != -1 {
		t.Fatalf("runlock of a lapsed record = %d, want -1", n)
	}
	if h := hash()["h"]; !strings.HasSuffix(h, "\tr\t1") {
		t.Fatalf("h after a lapsed record's runlock = %q, want the live reader still counted", h)
	}
	if got := r.lock("w", 0, "c", "w1"); !waits(got) {
		t.Fatalf("a writer while a reader lives = %v", got)
	}
}
