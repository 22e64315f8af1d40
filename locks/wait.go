package locks

import (
	"context"
	"time"
)

// await retries try until it acquires, fails or ctx ends. It subscribes to
// channel before its first attempt, so a release between a failed attempt
// and the wait cannot be missed, and sleeps between attempts until the
// release message or the attempt's wait hint (bounded by the holder's lease).
// sent is when the successful attempt was sent: the lease counts from there.
// Mutex.Lock has its own loop, for local handoffs and fair-mode grants.
func (c *Client) await(ctx context.Context, channel string, try func(context.Context) (attempt, error)) (a attempt, sent time.Time, err error) {
	wake := make(chan struct{}, 1)
	unsubscribe, err := c.backend.Subscribe(ctx, channel, func(string) {
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
		sent = time.Now()
		if a, err = try(ctx); err != nil || a.acquired {
			return a, sent, err
		}
		timer := time.NewTimer(a.wait)
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return attempt{}, sent, ctx.Err()
		}
		timer.Stop()
	}
}
