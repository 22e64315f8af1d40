package simulate

import (
	"testing"
	"time"
)

// BenchmarkExecSetNXPXGet is the engine under a lock's hot path: SET NX PX on
// a free key, then GET, then DEL so every iteration acquires.
func BenchmarkExecSetNXPXGet(b *testing.B) {
	ks := NewKeyspace()
	cc := &CallContext{Now: time.Unix(1_700_000_000, 0), RESP: 3}
	set := []string{"SET", "lock", "owner", "NX", "PX", "30000"}
	get := []string{"GET", "lock"}
	del := []string{"DEL", "lock"}
	b.ReportAllocs()
	for b.Loop() {
		if r := ks.Exec(cc, set); r.Kind != KindStatus {
			b.Fatalf("SET NX PX = %+v", r)
		}
		if r := ks.Exec(cc, get); r.Str != "owner" {
			b.Fatalf("GET = %+v", r)
		}
		ks.Exec(cc, del)
	}
}

// BenchmarkExecXAddMaxLen appends to a capped stream, the shape of an event log.
func BenchmarkExecXAddMaxLen(b *testing.B) {
	ks := NewKeyspace()
	cc := &CallContext{Now: time.Unix(1_700_000_000, 0), RESP: 3}
	add := []string{"XADD", "events", "MAXLEN", "1000", "*", "kind", "acquired"}
	b.ReportAllocs()
	for b.Loop() {
		if r := ks.Exec(cc, add); r.Kind != KindBulk {
			b.Fatalf("XADD = %+v", r)
		}
	}
}
