package simulate

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStreamGroupIdleFollowsVirtualClock: delivery and seen times come
// from the simulator's clock, so a job queue's retry logic (XPENDING's
// idle, XAUTOCLAIM's min-idle-time) can be tested by moving it.
func TestStreamGroupIdleFollowsVirtualClock(t *testing.T) {
	ctx := context.Background()
	start := time.UnixMilli(1_700_000_000_000)
	clock := NewVirtualClock(start)
	sim := New(WithClock(clock))
	do := func(args ...any) any {
		t.Helper()
		v, err := sim.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	do("XADD", "jobs", "1-1", "job", "a")
	do("XADD", "jobs", "2-1", "job", "b")
	do("XGROUP", "CREATE", "jobs", "workers", "0")
	do("XREADGROUP", "GROUP", "workers", "w1", "STREAMS", "jobs", ">")
	clock.Advance(5 * time.Second)

	want := []any{[]any{"1-1", "w1", int64(5000), int64(1)}, []any{"2-1", "w1", int64(5000), int64(1)}}
	if diff := cmp.Diff(want, do("XPENDING", "jobs", "workers", "-", "+", "10")); diff != "" {
		t.Fatalf("XPENDING after 5s (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"0-0", []any{}, []any{}}, do("XAUTOCLAIM", "jobs", "workers", "w2", "6000", "0")); diff != "" {
		t.Fatalf("XAUTOCLAIM before the entries are 6s idle (-want +got):\n%s", diff)
	}
	clock.Advance(time.Second)
	claimed := do("XAUTOCLAIM", "jobs", "workers", "w2", "6000", "0", "COUNT", "1", "JUSTID")
	if diff := cmp.Diff([]any{"2-1", []any{"1-1"}, []any{}}, claimed); diff != "" {
		t.Fatalf("XAUTOCLAIM at 6s (-want +got):\n%s", diff)
	}
	clock.Advance(250 * time.Millisecond)
	consumers := do("XINFO", "CONSUMERS", "jobs", "workers")
	wantConsumers := []any{
		map[any]any{"name": "w1", "pending": int64(1), "idle": int64(6250)},
		map[any]any{"name": "w2", "pending": int64(1), "idle": int64(250)},
	}
	if diff := cmp.Diff(wantConsumers, consumers); diff != "" {
		t.Fatalf("XINFO CONSUMERS (-want +got):\n%s", diff)
	}
	full := do("XINFO", "STREAM", "jobs", "FULL").(map[any]any)
	pel := full["groups"].([]any)[0].(map[any]any)["pending"]
	wantPEL := []any{[]any{"1-1", "w2", int64(1_700_000_006_000), int64(1)}, []any{"2-1", "w1", int64(1_700_000_000_000), int64(1)}}
	if diff := cmp.Diff(wantPEL, pel); diff != "" {
		t.Fatalf("XINFO STREAM FULL's group PEL (-want +got):\n%s", diff)
	}
}

// TestStreamGroupSnapshotKeepsGroups: a snapshot copies the groups, so a
// restored server has the PEL it had.
func TestStreamGroupSnapshotKeepsGroups(t *testing.T) {
	ks := NewKeyspace()
	cc := &CallContext{Now: time.UnixMilli(1000), RESP: 3}
	for _, c := range [][]string{{"XADD", "s", "1-1", "f", "v"}, {"XGROUP", "CREATE", "s", "g", "0"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}} {
		if r := ks.Exec(cc, c); r.Kind == KindError {
			t.Fatal(r.Str)
		}
	}
	cp := ks.keys["s"].stream.clone()
	ks.Exec(cc, []string{"XACK", "s", "g", "1-1"})
	if n := len(cp.groups[0].pel); n != 1 || cp.groups[0].pel[0].consumer != cp.groups[0].consumers[0] {
		t.Fatalf("the copy's PEL changed with the original or lost its owner: %d entries", n)
	}
}
