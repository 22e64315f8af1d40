package locks_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	scriptsAlone(b, rc)
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

// scriptsAlone splits a Lock+Unlock pair's cost between the client and the
// server: "scripts-alone" runs the Mutex's acquire and release scripts
// (mcMutexIDs) with the keys and arguments a Mutex sends, without the locks
// package; "empty-scripts" sends the same keys and arguments to a script
// that only returns. Measured on 2026-11-25 with mutex.acquire@6 and
// mutex.release@5 (2 cores, redis-server 7.0.15; µs per pair, 4 runs): raw
// 300-356, empty-scripts 260-327, scripts-alone 395-417, redlua 396-419. So
// what a Mutex pays above raw is the two scripts' work in the server, not
// the client or the argument lists.
func scriptsAlone(b *testing.B, rc *redis.Client) {
	ctx := context.Background()
	scripts := mcV2Lookup(b, mcMutexIDs[0], mcMutexIDs[1])
	acquire, release := scripts[0], scripts[1]
	acquireKeys := []string{"{alone}", "{alone}:queue"}
	releaseKeys := acquireKeys
	const owner, client, attempt = "owner-0123456789abcdef", "client-012345678", "0123456789abcdef/5000/-"
	acquireArgs := []any{30000, "g:" + attempt, client + "\t" + attempt + "\t" + owner + "\t{}"}
	releaseArgs := []any{"\t" + attempt + "\t" + owner + "\t"}
	runner, err := evalsha.New(rc)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scripts-alone", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := runner.Run(ctx, acquire, acquireKeys, acquireArgs...).Err(); err != nil {
				b.Fatal(err)
			}
			if n, err := runner.Run(ctx, release, releaseKeys, releaseArgs...).Int64(); err != nil || n != 1 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("empty-scripts", func(b *testing.B) {
		sha, err := rc.ScriptLoad(ctx, "return 1").Result()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := rc.EvalSha(ctx, sha, acquireKeys, acquireArgs...).Err(); err != nil {
				b.Fatal(err)
			}
			if err := rc.EvalSha(ctx, sha, releaseKeys, releaseArgs...).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSemaphoreContended: clients separate Clients (each with its own
// go-redis client, as separate processes would have; measured in one
// process) contend for a semaphore of 2 permits, each holding its permits
// 1 ms per acquisition and asking again at once; in "mixed" every second
// Client asks for both permits. ns/op is wall time per acquisition;
// script-runs/acq comes from INFO commandstats; two-permit-share is the
// share of acquisitions that were for both permits (0.5 when neither size
// is passed over).
func BenchmarkSemaphoreContended(b *testing.B) {
	for _, clients := range []int{8, 32} {
		for _, mixed := range []bool{false, true} {
			name := fmt.Sprintf("clients=%d/one-permit", clients)
			if mixed {
				name = fmt.Sprintf("clients=%d/mixed", clients)
			}
			b.Run(name, func(b *testing.B) {
				srv := redistest.Standalone(b)
				ctx := context.Background()
				sems := make([]*locks.Semaphore, clients)
				for i := range sems {
					rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
					runner, err := evalsha.New(rc)
					if err != nil {
						b.Fatal(err)
					}
					c, err := locks.NewWithBackend(runner, locks.WithTTL(10*time.Second))
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { c.Close(); runner.Close(); rc.Close() })
					if sems[i], err = c.Semaphore("bench", 2); err != nil {
						b.Fatal(err)
					}
					warm, _ := c.Semaphore("warm", 2) // loads the scripts, subscribes nothing
					l, err := warm.Acquire(ctx, 1)
					if err != nil {
						b.Fatal(err)
					}
					l.Unlock(ctx)
				}
				before := scriptRuns(b, srv.Client())
				var acquired, twoPermits atomic.Int64
				left := new(atomic.Int64)
				left.Store(int64(b.N))
				errs := make(chan error, clients)
				b.ResetTimer()
				var wg sync.WaitGroup
				for i, sem := range sems {
					n := 1
					if mixed && i%2 == 1 {
						n = 2
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						for left.Add(-1) >= 0 {
							l, err := sem.Acquire(ctx, n)
							if err != nil {
								errs <- err
								return
							}
							acquired.Add(1)
							if n == 2 {
								twoPermits.Add(1)
							}
							time.Sleep(time.Millisecond)
							if err := l.Unlock(ctx); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				runs := scriptRuns(b, srv.Client()) - before
				b.ReportMetric(float64(runs)/float64(acquired.Load()), "script-runs/acq")
				b.ReportMetric(float64(twoPermits.Load())/float64(acquired.Load()), "two-permit-share")
			})
		}
	}
}

// scriptRuns is the server's count of EVAL and EVALSHA calls so far.
func scriptRuns(b *testing.B, rc *redis.Client) int64 {
	info, err := rc.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var runs int64
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			b.Fatalf("INFO commandstats line %q: %v", line, err)
		}
		runs += n
	}
	return runs
}
