package simulate

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkStreamGroupQueue is a job queue's cycle on a stream with a
// consumer group: add a job, read it, acknowledge it, with a backlog of
// 10000 pending jobs acknowledged oldest first.
func BenchmarkStreamGroupQueue(b *testing.B) {
	ks := NewKeyspace()
	cc := &CallContext{Now: time.UnixMilli(1_700_000_000_000), RESP: 2}
	ks.Exec(cc, []string{"XGROUP", "CREATE", "q", "g", "0", "MKSTREAM"})
	const backlog = 10000
	id := func(n int) string { return strconv.Itoa(n+1) + "-0" }
	for n := 0; n < backlog; n++ {
		ks.Exec(cc, []string{"XADD", "q", "MAXLEN", "~", "20000", id(n), "job", "x"})
	}
	ks.Exec(cc, []string{"XREADGROUP", "GROUP", "g", "w", "STREAMS", "q", ">"})
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		ks.Exec(cc, []string{"XADD", "q", "MAXLEN", "~", "20000", id(backlog + n), "job", "x"})
		ks.Exec(cc, []string{"XREADGROUP", "GROUP", "g", "w", "COUNT", "1", "STREAMS", "q", ">"})
		if r := ks.Exec(cc, []string{"XACK", "q", "g", id(n)}); r.Int != 1 {
			b.Fatalf("XACK %s = %+v", id(n), r)
		}
	}
}
