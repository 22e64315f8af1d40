package locks_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

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

	removed, err := c.ForceUnlock(ctx, "import")
	fmt.Println(removed, err)
	info, _ := c.Inspect(ctx, "import")
	fmt.Println(info.Held)
	// Output:
	// true <nil>
	// false
}
