package lua_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

// semKeys are the KEYS of every sem script for the semaphore tagged tag:
// the lock hash, the queue and the index (sem.take and sem.extend: the
// first and the last).
func semKeys(tag string) []string {
	return []string{"{" + tag + "}", "{" + tag + "}:squeue", "{" + tag + "}:sem"}
}

// semCalls runs the semaphore scripts the client runs on the semaphore
// tagged tag, with a TTL of ttl ms and a default limit of limit.
type semCalls struct {
	t          *testing.T
	run        func(id string, keys []string, args ...any) []any
	call       func(id string, keys []string, args ...any) (any, error)
	tag        string
	ttl, limit int64
}

func (s semCalls) keys() []string { return semKeys(s.tag) }

// acquire asks for n permits as owner on client, queueing for waiterTTL
// ms (0: TryAcquire).
func (s semCalls) acquire(owner string, n int64, waiterTTL int, client string) []any {
	s.t.Helper()
	return s.run("sem.acquire@11", s.keys(), owner, n, s.ttl, s.limit, client+"\t"+owner+"\t{\"label\":\""+owner+"\"}",
		fmt.Sprintf("%d PUBLISH", waiterTTL))
}

func (s semCalls) release(owner string) int64 {
	s.t.Helper()
	return s.run("sem.release@11", s.keys(), owner)[0].(int64)
}

func (s semCalls) undo(owner string) int64 {
	s.t.Helper()
	return s.run("sem.undo@5", s.keys(), owner, 60000)[0].(int64)
}

func (s semCalls) extend(owner string, ttl int64) int64 {
	s.t.Helper()
	return s.run("sem.extend@4", []string{s.keys()[0], s.keys()[2]}, owner, ttl)[0].(int64)
}

// sem.take and sem.acquire's queue on a real server: a caller that cannot take its
// permits queues with an entry and a place, TryAcquire (waiter TTL 0) does
// not, a free permit owed to the head is refused to a newcomer, a release
// hands the permits to the head and tells only its client ("grant ..." on
// its grant channel), sem.keepqueued moves deadlines and reports who is
// queued, the queue keys and q expire and vanish when empty, and bad
// arguments are errors that name them.
func TestSemaphoreQueue(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	rc := srv.Client()
	runner, call := scriptCaller(t, srv)
	s := semCalls{t: t, run: mustRun(t, call), call: call, tag: "q", ttl: 60000, limit: 2}
	keys := s.keys()

	next, quiet := listen(t, runner, "{q}:grant:c2", "{q}:grant:c3")

	// sem.take, the first attempt of a call, takes free permits in one key
	// and leaves anything else to sem.acquire (0).
	take := func(owner string, n int64) []any {
		t.Helper()
		return s.run("sem.take@5", []string{keys[0], keys[2]}, owner, fmt.Sprintf("%d %d %d", n, s.ttl, s.limit), "c1\t"+owner+"\t{}")
	}
	if got := take("alice", 1); len(got) != 1 || got[0].(int64) <= 0 {
		t.Fatalf("alice's sem.take on a free semaphore of 2 = %v, want a token", got)
	}
	if got := take("amy", 2); len(got) != 1 || got[0] != int64(0) {
		t.Fatalf("amy's sem.take of 2 with 1 free = %v, want 0 (sem.acquire decides)", got)
	}
	if got := s.acquire("bob", 2, 5000, "c2"); got[0] != int64(0) || got[2] != int64(2) || got[3] != int64(1) {
		t.Fatalf("bob asking for 2 with 1 free = %v, want {0, hint, 2, 1, now}: queued first", got)
	}
	entry := rc.HGet(ctx, "{q}", "w:bob").Val()
	if head, tail, _ := strings.Cut(entry, "\t"); len(strings.Fields(head)) != 6 || strings.Fields(head)[1] != "5000" ||
		strings.Fields(head)[2] != "2" || strings.Fields(head)[3] != "60000" || strings.Fields(head)[4] != "2" ||
		strings.Fields(head)[5] != "PUBLISH" || tail != "c2\tbob\t{\"label\":\"bob\"}" {
		t.Fatalf("bob's entry %q, want \"<deadline> 5000 2 60000 2 PUBLISH\\tc2\\tbob\\t<meta>\"", entry)
	}
	if ttl := rc.PTTL(ctx, "{q}:squeue").Val(); ttl <= 0 || ttl > 5*time.Second {
		t.Fatalf("queue PTTL %v, want at most the waiter TTL", ttl)
	}
	if q := rc.HGet(ctx, "{q}", "q").Val(); q == "" {
		t.Fatal("no q in the lock hash with a waiter queued")
	}
	if got := s.acquire("carol", 1, 0, "c3"); got[0] != int64(0) || got[3] != int64(0) {
		t.Fatalf("carol's TryAcquire of the permit owed to bob = %v, want {0, hint, 2, 0}: refused, not queued", got)
	}
	if got := s.acquire("dave", 1, 5000, "c3"); got[0] != int64(0) || got[3] != int64(2) {
		t.Fatalf("dave = %v, want {0, hint, 2, 2}: queued behind bob", got)
	}
	if got := s.run("sem.keepqueued@6", keys, "bob", "nobody"); got[0] != int64(1) || got[1] != int64(0) {
		t.Fatalf("keepqueued bob, nobody = %v, want {1, 0}", got)
	}
	quiet()

	if got := s.release("alice"); got != 1 {
		t.Fatalf("alice's release = %v, want 1", got)
	}
	// The release hands the freed permits to the head that now fits, in the
	// script, and tells only its client.
	if m := next(); !strings.HasPrefix(m, "{q}:grant:c2 grant ") || !strings.HasSuffix(m, " bob bob") {
		t.Fatalf("after alice's release: %q, want a grant to bob on c2's channel only", m)
	}
	s.release("bob")
	if m := next(); !strings.HasPrefix(m, "{q}:grant:c3 grant ") || !strings.HasSuffix(m, " dave dave") {
		t.Fatalf("after bob's release: %q, want a grant to dave", m)
	}
	s.release("dave")
	quiet()
	if n := rc.Exists(ctx, keys[1]).Val(); n != 0 {
		t.Fatal("the queue is left with no waiter")
	}
	if fields := rc.HKeys(ctx, "{q}").Val(); len(fields) != 1 || fields[0] != "f" {
		t.Fatalf("the lock hash after the last release has %v, want only f (the last token)", fields)
	}

	for _, tc := range []struct {
		id   string
		keys []string
		args []any
		want string
	}{
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "0 60000 2", "c\to\t{}"}, "count must be"},
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "9007199254740993 60000 2", "c\to\t{}"}, "count and default_limit must be"},
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "1 60000 90071992547409920", "c\to\t{}"}, "count and default_limit must be"},
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "1 0 2", "c\to\t{}"}, "ttl_ms must be"},
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "1 604800001 2", "c\to\t{}"}, "ttl_ms must be"},
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "1 60000 0", "c\to\t{}"}, "default_limit must be"},
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "1 -1 2", "c\to\t{}"}, "counts must be"},
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "1.5 60000 2", "c\to\t{}"}, "counts must be"},
		{"sem.take@5", []string{keys[0], keys[2]}, []any{"o", "1 60000", "c\to\t{}"}, "counts must be"},
		{"sem.acquire@11", keys, []any{"o", 0, 60000, 2, "c\to\t{}", "5000 PUBLISH"}, "count must be"},
		{"sem.acquire@11", keys, []any{"o", int64(1)<<53 + 2, 60000, 2, "c\to\t{}", "5000 PUBLISH"}, "count must be"},
		{"sem.acquire@11", keys, []any{"o", 1.5, 60000, 2, "c\to\t{}", "5000 PUBLISH"}, "count must be"},
		{"sem.acquire@11", keys, []any{"o", 1, 0, 2, "c\to\t{}", "5000 PUBLISH"}, "ttl_ms must be"},
		{"sem.acquire@11", keys, []any{"o", 1, 604800001, 2, "c\to\t{}", "5000 PUBLISH"}, "ttl_ms must be"},
		{"sem.acquire@11", keys, []any{"o", 1, 60000, 0, "c\to\t{}", "5000 PUBLISH"}, "default_limit must be"},
		{"sem.acquire@11", keys, []any{"o", 1, 60000, int64(1) << 54, "c\to\t{}", "5000 PUBLISH"}, "default_limit must be"},
		{"sem.extend@4", []string{keys[0], keys[2]}, []any{"o", 604800001}, "ttl_ms must be"},
		{"sem.undo@5", keys, []any{"o", 0}, "gone_ttl_ms must be"},
		{"sem.setlimit@8", keys, []any{0}, "limit must be"},
		{"sem.setlimit@8", keys, []any{int64(1)<<53 + 2}, "limit must be"},
	} {
		if _, err := s.call(tc.id, tc.keys, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s%v = %v, want an error containing %q", tc.id, tc.args, err, tc.want)
		}
	}
	// The waiter TTL and how to publish are refused where they are read: by
	// a call that does not take its permits at once.
	s.acquire("erin", 2, 5000, "c1")
	for _, tc := range []struct{ wait, want string }{
		{"86400001 PUBLISH", "waiter_ttl_ms must be"},
		{"-1 PUBLISH", "waiter_ttl_ms must be"},
		{"5000 PUB", "publish must be"},
	} {
		if _, err := s.call("sem.acquire@11", keys, "o", 1, 60000, 2, "c\to\t{}", tc.wait); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sem.acquire@11 with wait %q = %v, want an error containing %q", tc.wait, err, tc.want)
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
