package locks_test

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/internal/redistest"
	"github.com/redlua/redlua/locks"
)

// semPairCommands runs pairs uncontended Acquire(n)+Unlock pairs on a
// Semaphore of MaxPermits on srv and returns the commands the server ran
// per pair, by name (INFO commandstats: EVALSHA and every command a script
// called), after one warm-up pair that loads the scripts and opens the
// connections.
func semPairCommands(tb testing.TB, srv *redistest.Server, name string, n, pairs int) map[string]float64 {
	tb.Helper()
	ctx := context.Background()
	c, err := locks.New(srv.Client(), locks.WithTTL(time.Minute))
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	sem, err := c.Semaphore(name, locks.MaxPermits)
	if err != nil {
		tb.Fatal(err)
	}
	pair := func() {
		l, err := sem.Acquire(ctx, n)
		if err != nil {
			tb.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	pair()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		tb.Fatal(err)
	}
	for range pairs {
		pair()
	}
	stats, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	per := map[string]float64{}
	for _, line := range strings.Split(stats, "\r\n") {
		cmd, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") || cmd == "info" || strings.HasPrefix(cmd, "config") {
			continue
		}
		if strings.Contains(cmd, "subscribe") || cmd == "ping" || strings.HasPrefix(cmd, "script") ||
			cmd == "hello" || strings.HasPrefix(cmd, "client") || cmd == "auth" || cmd == "select" {
			// The Client's subscription to the lock's grant channel and its
			// loading of the other scripts after the first NOSCRIPT (once
			// per name and per server, in the background, so before or
			// after the counters are reset), and the handshake of a
			// connection go-redis opens (HELLO, CLIENT SETINFO: whenever the
			// scheduler lets it) are not the pair's work.
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		v, err := strconv.Atoi(calls)
		if err != nil {
			tb.Fatalf("commandstats line %q: %v", line, err)
		}
		per[cmd] = float64(v) / float64(pairs)
	}
	return per
}

func total(per map[string]float64) float64 {
	sum := 0.0
	for _, v := range per {
		sum += v
	}
	return sum
}

// The server's work for an uncontended Acquire and its release does not
// depend on the number of permits: the same commands, as many of each, for
// 1, 2^40 and MaxPermits (2^53) permits: the scripts keep one record per
// holder, whatever its count.
func TestSemaphorePairCostDoesNotDependOnTheCount(t *testing.T) {
	srv := redistest.Standalone(t)
	const pairs = 50
	one := semPairCommands(t, srv, "cost-1", 1, pairs)
	if total(one) == 0 || one["evalsha"] != 2 {
		t.Fatalf("1 permit: %v commands per pair, want two EVALSHA and the commands they call", one)
	}
	for _, n := range []int{1 << 40, locks.MaxPermits} {
		if many := semPairCommands(t, srv, fmt.Sprintf("cost-%d", n), n, pairs); !maps.Equal(one, many) {
			t.Errorf("%d permits: %v commands per pair; 1 permit: %v", n, many, one)
		}
	}
}

// BenchmarkSemaphorePairCommands reports the commands the server runs per
// uncontended Acquire+Unlock pair (redis.calls inside the scripts and the
// EVALSHAs themselves) for 1 and 2^40 permits, on a real redis-server.
func BenchmarkSemaphorePairCommands(b *testing.B) {
	srv := redistest.Standalone(b)
	for _, n := range []int{1, 1 << 40} {
		b.Run(fmt.Sprintf("permits=%d", n), func(b *testing.B) {
			per := semPairCommands(b, srv, fmt.Sprintf("bench-%d", n), n, b.N)
			b.ReportMetric(total(per), "commands/op")
			b.ReportMetric(total(per)-per["evalsha"], "redis.calls/op")
		})
	}
}
