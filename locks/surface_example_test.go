package locks_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

// WithLogger reports lost leases and failed renewals at warn level and
// slow waits at info; everything else goes to debug.
func ExampleWithLogger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		// Drop the time, the error's text and the token (it comes from the
		// server's clock) so the output is stable.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "err" || a.Key == "token" {
				return slog.Attr{}
			}
			return a
		},
	}))
	c, done := newExampleClient(locks.WithLogger(logger, locks.LogSlowWaits(5*time.Second)))
	defer done()
	ctx := context.Background()

	m, _ := c.Mutex("report:daily", locks.WithTTL(time.Minute))
	lease, _ := m.Lock(ctx)
	// An operator frees the lock; the holder's next renewal sees the loss.
	_, _ = c.ForceUnlock(ctx, "report:daily")
	_ = lease.Extend(ctx, 0)
	// Output:
	// level=WARN msg="lock lease lost" lock=report:daily event=lost
}

// ForceUnlock frees a lock whose holder hangs; `redlua unlock --force` runs it.
func ExampleClient_ForceUnlock() {
	c, done := newExampleClient()
	defer done()
	ctx := context.Background()
	m, _ := c.Mutex("import")
	_, _ = m.Lock(ctx)

	// WithGrace(0): the holder is known dead, free the name at once.
	// Without it, the holder is told and the name stays taken until it
	// confirms with its Unlock, or DefaultGrace passed.
	removed, err := c.ForceUnlock(ctx, "import", locks.WithGrace(0))
	fmt.Println(removed, err)
	info, _ := c.Inspect(ctx, "import")
	fmt.Println(info.Held)
	// Output:
	// true <nil>
	// false
}

// On a quorum Client, Inspect tells who holds a majority of the servers
// and reports each server's own view; a server that is down shows its error.
func ExampleClient_Inspect_quorum() {
	var clients []redis.UniversalClient
	var servers []*miniredis.Miniredis
	for range 3 {
		mr, _ := miniredis.Run()
		defer mr.Close()
		rc := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
		defer rc.Close()
		clients, servers = append(clients, rc), append(servers, mr)
	}
	c, _ := locks.NewQuorum(clients, locks.WithTTL(time.Minute))
	defer c.Close()
	ctx := context.Background()
	servers[2].Close() // one of three down: the other two are still a majority

	m, _ := c.Mutex("nightly-report")
	lease, _ := m.TryLock(ctx)
	defer lease.Unlock(ctx)
	info, err := c.Inspect(ctx, "nightly-report")
	fmt.Println("held:", info.Held, "by this lease:", info.Owner == lease.Owner(), "error:", err)
	fmt.Println("server 3 answered:", info.Servers[2].Err == nil)
	// Output:
	// held: true by this lease: true error: <nil>
	// server 3 answered: false
}
