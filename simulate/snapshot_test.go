package simulate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redlua/redlua/simulate"
)

func TestSnapshotRestoreDiffApply(t *testing.T) {
	ctx := context.Background()
	clock := simulate.NewVirtualClock(time.UnixMilli(1_700_000_000_000))
	srv := simulate.New(simulate.WithClock(clock))
	for _, cmd := range [][]any{
		{"SET", "s", "v", "PX", 100}, {"HSET", "h", "f", "1", "g", "2"}, {"ZADD", "z", 1, "a", 2, "b"},
		{"RPUSH", "l", "x", "y"}, {"SADD", "set", "p", "q"}, {"XADD", "st", "1-1", "k", "v"},
	} {
		if err := srv.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(cmd, err)
		}
	}
	before := srv.Snapshot()
	if before.Len() != 6 {
		t.Fatalf("snapshot has %d keys, want 6", before.Len())
	}
	// Changing the server does not change the snapshot.
	srv.Do(ctx, "HSET", "h", "f", "changed")
	srv.Do(ctx, "DEL", "l")
	srv.Do(ctx, "SET", "new", "1")
	after := srv.Snapshot()
	d := simulate.Diff(before, after)
	if d.Empty() {
		t.Fatal("the diff is empty")
	}
	if got, want := string(before.Apply(d).AppendCanonical(nil)), string(after.AppendCanonical(nil)); got != want {
		t.Fatalf("before + diff != after:\n%s\n%s", got, want)
	}
	if !simulate.Diff(after, after).Empty() {
		t.Fatal("a snapshot differs from itself")
	}
	srv.Restore(before)
	if diff := cmp.Diff(before.Dump(clock.Now()), srv.Dump()); diff != "" {
		t.Fatalf("restore did not bring the keyspace back (-snapshot +server):\n%s", diff)
	}
	// The restored values are copies: writing them leaves the snapshot alone.
	srv.Do(ctx, "ZADD", "z", 9, "c")
	if simulate.Diff(before, srv.Snapshot()).Empty() {
		t.Fatal("the write did not show")
	}
	srv.Restore(before)
	if !simulate.Diff(before, srv.Snapshot()).Empty() {
		t.Fatal("the snapshot was changed through the server")
	}
	// Expiry: NextExpiry and Live.
	next, ok := before.NextExpiry(clock.Now())
	if !ok || next.Sub(clock.Now()) != 100*time.Millisecond {
		t.Fatalf("next expiry %v %v", next, ok)
	}
	if got := before.Live(clock.Now().Add(100 * time.Millisecond)).Len(); got != 5 {
		t.Fatalf("%d keys live after the expiry, want 5", got)
	}
	// Raw replies.
	r, err := srv.DoReply(ctx, "GET", "s")
	if err != nil || r.Kind != simulate.KindBulk || r.Str != "v" {
		t.Fatalf("DoReply: %+v %v", r, err)
	}
}

// Restore puts back a value's encoding as well as its content: a hash that
// grew to a hashtable stays one, as in Redis, which never converts back.
func TestRestoreKeepsEncodings(t *testing.T) {
	ctx := context.Background()
	srv := simulate.New()
	args := []any{"HSET", "h"}
	for i := range 600 { // over hash-max-listpack-entries, 512
		args = append(args, fmt.Sprint("f", i), "v")
	}
	srv.Do(ctx, args...)
	for i := range 599 {
		srv.Do(ctx, "HDEL", "h", fmt.Sprint("f", i+1))
	}
	srv.Do(ctx, "SET", "s", "abc")
	srv.Do(ctx, "APPEND", "s", "d")
	enc := func() string {
		h, _ := srv.Do(ctx, "OBJECT", "ENCODING", "h").Text()
		s, _ := srv.Do(ctx, "OBJECT", "ENCODING", "s").Text()
		return h + " " + s
	}
	before := enc()
	if before != "hashtable raw" {
		t.Fatalf("encodings before the snapshot = %q, want \"hashtable raw\"", before)
	}
	sn := srv.Snapshot()
	srv.Do(ctx, "FLUSHALL")
	srv.Restore(sn)
	if after := enc(); after != before {
		t.Fatalf("encodings after Restore = %q, want %q", after, before)
	}
}

// WithSeed seeds the random replies: the same seed picks the same members,
// another seed other ones.
func TestWithSeedSeedsRandomReplies(t *testing.T) {
	ctx := context.Background()
	picks := func(seed int64) string {
		srv := simulate.New(simulate.WithSeed(seed))
		args := []any{"SADD", "s"}
		for i := range 100 {
			args = append(args, fmt.Sprint("m", i))
		}
		srv.Do(ctx, args...)
		var out []string
		for range 20 {
			m, _ := srv.Do(ctx, "SRANDMEMBER", "s").Text()
			out = append(out, m)
		}
		return fmt.Sprint(out)
	}
	if a, b := picks(1), picks(1); a != b {
		t.Fatalf("the same seed picked %s and %s", a, b)
	}
	if a, b := picks(1), picks(2); a == b {
		t.Fatalf("seeds 1 and 2 picked the same members: %s", a)
	}
}
