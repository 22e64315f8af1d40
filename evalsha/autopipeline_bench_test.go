package evalsha_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
)

// BenchmarkAutoPipelining runs counter.incr on one real redis-server, with
// auto-pipelining off and on (with 1, 2, 4 and 8 batches in flight): a lone
// caller, and 64 goroutines sharing one Runner. ns/op is per call.
//
//	go test ./evalsha -run '^$' -bench AutoPipelining -benchtime 2s
func BenchmarkAutoPipelining(b *testing.B) {
	srv := redistest.Standalone(b)
	c := srv.Client()
	ctx := context.Background()
	reg := testRegistry(b)
	if err := evalsha.Load(ctx, c, reg); err != nil {
		b.Fatal(err)
	}
	incr := script(b, reg, "counter.incr")
	modes := []struct {
		name string
		opt  evalsha.Option
	}{
		{"off", evalsha.WithoutAutoPipelining()},
		{"on", nil}, // the default
		{"on-max1", evalsha.WithAutoPipelining(1)},
		{"on-max4", evalsha.WithAutoPipelining(4)},
		{"on-max8", evalsha.WithAutoPipelining(8)},
	}
	newBenchRunner := func(b *testing.B, opt evalsha.Option) *evalsha.Runner {
		var opts []evalsha.Option
		if opt != nil {
			opts = append(opts, opt)
		}
		r, err := evalsha.New(c, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	for _, m := range modes[:2] {
		b.Run("lone/"+m.name, func(b *testing.B) {
			r := newBenchRunner(b, m.opt)
			keys := []string{"lone"}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := r.Run(ctx, incr, keys, 1).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	const goroutines = 64
	for _, m := range modes {
		b.Run(fmt.Sprintf("%dgoroutines/%s", goroutines, m.name), func(b *testing.B) {
			r := newBenchRunner(b, m.opt)
			procs := runtime.GOMAXPROCS(0)
			b.SetParallelism((goroutines + procs - 1) / procs)
			var id atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				keys := []string{fmt.Sprintf("g%d", id.Add(1))}
				for pb.Next() {
					if err := r.Run(ctx, incr, keys, 1).Err(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
