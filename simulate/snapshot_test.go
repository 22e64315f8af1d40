package simulate_test

import (
	"context"
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
