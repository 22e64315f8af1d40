package locks

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// An undo through a go-redis client its owner closed can never get
// through: retryUndo stops at the first such error instead of trying
// every 50 ms until the server's record would have expired.
func TestRetryUndoStopsOnAClosedClient(t *testing.T) {
	var tries atomic.Int64
	began := time.Now()
	retryUndo(context.Background(), began.Add(time.Second), began, func(context.Context) error {
		tries.Add(1)
		return fmt.Errorf("locks: undo: %w", redis.ErrClosed)
	})
	// Retrying, it would have made about 19 tries in that second; tries
	// already on their way when the first one failed may still come in.
	if n := tries.Load(); n > undoTriesInFlight {
		t.Fatalf("%d tries through a closed client, want it to stop after the first", n)
	}
	// Any other error keeps it trying (the server may be frozen).
	tries.Store(0)
	began = time.Now()
	retryUndo(context.Background(), began.Add(time.Second), began, func(context.Context) error {
		tries.Add(1)
		return fmt.Errorf("locks: undo: %w", context.DeadlineExceeded)
	})
	if n := tries.Load(); n < 2 {
		t.Fatalf("%d tries in 1s against a server that timed out, want it to keep trying", n)
	}
}
