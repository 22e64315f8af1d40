package locks

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// goneTTL is how long the server remembers an attempt whose caller gave up
// (its g:<attempt> field in the lock hash): longer than any such attempt can wait in a server's
// buffers and still find a lease or a waiter lease to take.
func (s *settings) goneTTL() time.Duration { return 2 * max(s.ttl, s.waiterTTL) }

// undo runs do, which undoes an acquisition whose outcome the caller does
// not know (it gave up on a timeout, or its reply was lost): do records the
// attempt as given up, so that the server refuses it if it runs later, and
// releases what it may have taken. When the server cannot be reached (it is
// frozen, or the network is), do is retried in the background until it gets
// through or the server's record would have expired: an attempt stuck in a
// frozen server's buffers runs when the server resumes, and the undo must
// reach the server then too, or the lock would sit with no one to release it.
func (c *Client) undo(ctx context.Context, s *settings, do func(context.Context) error) {
	began := time.Now()
	cleanup, cancel := cleanupContext(ctx)
	err := do(cleanup)
	cancel()
	if err == nil || closedClient(err) {
		return
	}
	go retryUndo(ctx, began.Add(s.goneTTL()), began, do)
}

// cleanupContext is for undoing work after the caller's context ended: it
// keeps the caller's values but not its cancellation.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// undoTriesInFlight bounds retryUndo's tries on their way at once.
const undoTriesInFlight = 3

// retryUndo retries an undo that could not reach the server until one gets
// through, until passes, or the go-redis client is closed. It keeps up to
// undoTriesInFlight tries on their way, started at least a period apart:
// against a frozen server each waits out its timeout, and one that times
// out is replaced at once, so whenever the server resumes an undo is
// already waiting in its buffers and runs right behind the late attempt it
// undoes (a single try left a gap between its timeout and the next send,
// which a busy machine stretches). Against a server that refuses at once,
// tries go one per period. An undo is idempotent: the extra ones find
// nothing to do.
func retryUndo(ctx context.Context, until, began time.Time, do func(context.Context) error) {
	const period = 50 * time.Millisecond
	done := make(chan struct{})
	var once sync.Once
	slots := make(chan struct{}, undoTriesInFlight)
	for next := began.Add(period); next.Before(until); next = time.Now().Add(period) {
		select {
		case <-done:
			return
		case <-time.After(time.Until(next)):
		}
		select {
		case <-done:
			return
		case slots <- struct{}{}:
		}
		go func() {
			defer func() { <-slots }()
			retry, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			err := do(retry)
			cancel()
			if err == nil || closedClient(err) {
				once.Do(func() { close(done) })
			}
		}()
	}
}

// closedClient reports an error of a go-redis client that its owner
// closed: no later try gets through it, so an undo stops retrying instead
// of failing every period until the server's record expires (2×TTL).
func closedClient(err error) bool { return errors.Is(err, redis.ErrClosed) }
