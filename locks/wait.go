package locks

import (
	"context"
	"time"
)

// await is the wait of the locks that do not queue in Redis (RWMutex,
// Semaphore, MultiLock): it retries try until it acquires, fails or ctx
// ends. It subscribes to channel before its first attempt, so a release
// between a failed attempt and the wait cannot be missed, and sleeps between
// attempts until a message on channel or the attempt's wait hint (bounded
// by the holder's lease). sent is when the successful attempt was sent, on
// the Client's clock: the lease counts from there.
func (c *Client) await(ctx context.Context, channel string, try func(context.Context) (attempt, error)) (a attempt, sent time.Time, err error) {
	wake := make(chan struct{}, 1)
	unsubscribe, err := c.backend().Subscribe(ctx, channel, func(string) {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	})
	if err != nil {
		return attempt{}, time.Time{}, err
	}
	defer unsubscribe()
	for {
		sent = c.clock.Now()
		if a, err = try(ctx); err != nil || a.acquired || a.wrongKind != "" {
			return a, sent, err
		}
		if err = sleep(ctx, wake, a.wait); err != nil {
			return attempt{}, sent, err
		}
	}
}

// sleep waits for a wake-up, d, or the end of ctx.
func sleep(ctx context.Context, wake <-chan struct{}, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-wake:
	case <-timer.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
