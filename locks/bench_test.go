package locks_test

import (
	"context"
	"testing"
	"time"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// BenchmarkUncontended compares one Lock+Unlock pair with the raw floor (SET
// NX PX, then a compare-and-delete EVALSHA) on the same server, in one run.
func BenchmarkUncontended(b *testing.B) {
	srv := redistest.Standalone(b)
	rc := srv.Client()
	ctx := context.Background()
	b.Run("raw", func(b *testing.B) {
		const del = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
		sha, err := rc.ScriptLoad(ctx, del).Result()
		if err != nil {
			b.Fatal(err)
		}
		keys := []string{"raw"}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if ok, err := rc.SetNX(ctx, "raw", "token", 30*time.Second).Result(); err != nil || !ok {
				b.Fatal(ok, err)
			}
			if err := rc.EvalSha(ctx, sha, keys, "token").Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []struct {
		name   string
		opts   []locks.Option
		runner []evalsha.Option
	}{
		{"redlua", nil, nil},
		{"redlua-no-autopipeline", nil, []evalsha.Option{evalsha.WithoutAutoPipelining()}},
		{"redlua-fair", []locks.Option{locks.WithFair(0)}, nil},
	} {
		b.Run(mode.name, func(b *testing.B) {
			runner, err := evalsha.New(rc, mode.runner...)
			if err != nil {
				b.Fatal(err)
			}
			c, err := locks.NewWithBackend(runner, mode.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			m, _ := c.Mutex("bench")
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				l, err := m.Lock(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
