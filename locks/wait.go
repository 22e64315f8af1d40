package locks

import (
	"context"
	"time"
)

// waiter is one acquisition waiting for a lock: the parts of the wait that
// differ between Mutex (a grant may hand the lock over), Semaphore (a
// wake-up on its Client's channel says: look again), RWMutex (any release
// is a hint to try again) and a quorum Mutex (it listens to every server). A try may name another channel to wait on.
// wait is the loop they share.
type waiter struct {
	// subscribe starts wake-ups about channel: each arrives on wake, a
	// grant's token, or 0 for "something was released, look again". It
	// returns once they can no longer be missed; stop ends them.
	subscribe func(ctx context.Context, channel string) (wake <-chan int64, stop func(), err error)
	// try makes one attempt. done: it acquired, or it failed with err.
	// Otherwise channel announces the release it waits for, and hint bounds
	// the wait before the next attempt.
	try func(ctx context.Context) (done bool, channel string, hint time.Duration, err error)
	// onMessage, when set, reads a wake-up; done when it settled the wait
	// (a grant handed the lock over). Otherwise every wake-up means: try again.
	onMessage func(token int64) (done bool)
	// failed, when set, turns an error of the wait itself (subscribing, or
	// ctx ending while asleep) into the one to return; try's errors are
	// returned as they are.
	failed func(err error) error
}

// wait retries w.try until it is done or ctx ends. The caller's own attempt
// failed, blocked by channel, with hint; subscribed says that attempt was
// made while wake-ups about channel could already reach w (the Mutex's
// grant channel, subscribed by an earlier Lock).
//
// The loop subscribes before the attempt that fails and stays subscribed
// while it sleeps, so a release in between cannot be lost; after any new
// subscription (the first, or one to another channel that try named) it
// tries again at once, since a release between the last attempt and the
// subscription went unseen. Every sleep is bounded by the last attempt's hint
// (at most the holder's remaining lease): a holder that dies without
// releasing publishes nothing, and a message can be lost (a reconnect, a
// failover), so the waiter must look again by itself when the lease may
// have ended.
func (w waiter) wait(ctx context.Context, channel string, hint time.Duration, subscribed bool) error {
	fail := w.failed
	if fail == nil {
		fail = func(err error) error { return err }
	}
	var (
		wake    <-chan int64
		stop    = func() {}
		watched string
	)
	defer func() { stop() }()
	for {
		missed := false
		if channel != watched {
			stop()
			stop = func() {}
			s, end, err := w.subscribe(ctx, channel)
			if err != nil {
				return fail(err)
			}
			wake, stop = s, end
			missed = watched != "" || !subscribed
			watched = channel
		}
		if !missed {
			token, woke, err := sleep(ctx, wake, hint)
			if err != nil {
				return fail(err)
			}
			if woke && w.onMessage != nil && w.onMessage(token) {
				return nil
			}
		}
		done, next, h, err := w.try(ctx)
		if done {
			return err
		}
		channel, hint = next, h
	}
}

// await waits as an RWMutex does: each release on the
// lock's shared channel is a hint to try again. It retries try until it
// acquires, fails or ctx ends; sent is when the last attempt was sent, on
// the Client's clock: the lease counts from there.
func (c *Client) await(ctx context.Context, channel string, try func(context.Context) (attempt, error)) (a attempt, sent time.Time, err error) {
	err = waiter{
		subscribe: c.releases,
		try: func(ctx context.Context) (bool, string, time.Duration, error) {
			sent = c.clock.Now()
			var err error
			a, err = try(ctx)
			return err != nil || a.acquired || a.wrongKind != "", channel, a.wait, err
		},
	}.wait(ctx, channel, 0, false) // the caller's attempt ran unsubscribed: no hint to keep
	return a, sent, err
}

// releases subscribes to a lock's shared channel, where every release is
// announced: the subscribe of the waits that retry on a hint.
func (c *Client) releases(ctx context.Context, channel string) (<-chan int64, func(), error) {
	wake := make(chan int64, 1)
	stop, err := c.backend().Subscribe(ctx, channel, func(string) { nudge(wake, 0) })
	if err != nil {
		return nil, nil, err
	}
	return wake, stop, nil
}

// nudge delivers a wake-up without blocking the backend's receive
// goroutine: one pending wake-up is enough, the attempt looks at the lock.
func nudge(wake chan int64, token int64) {
	select {
	case wake <- token:
	default: // a wake-up is already pending
	}
}

// sleep waits for a wake-up (woke, with its token), d, or the end of ctx.
func sleep(ctx context.Context, wake <-chan int64, d time.Duration) (token int64, woke bool, err error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case token = <-wake:
		return token, true, nil
	case <-timer.C:
		return 0, false, nil
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
}

// grantWait is the part of a queued wait on the Client's grant channel of a
// lock that Mutex, Semaphore and RWMutex writers share: the subscription
// (the call registered before its first attempt, or joins once it waits)
// and, for the kinds that queue, the hand-over of its place to the Client's
// keeper.
type grantWait struct {
	c          *Client
	node       Backend
	owner, att string
	grants     chan int64 // the call's wake-ups, once registered or joined
	subscribed bool       // registered before the first attempt

	keepLeave func() // leaves the keeper, once it keeps this call
}

// subscribe is a waiter's subscribe for the grant channel.
func (g *grantWait) subscribe(ctx context.Context, channel string) (<-chan int64, func(), error) {
	if !g.subscribed {
		var err error
		if g.grants, err = g.c.grants.join(ctx, g.node, channel, g.owner, g.att); err != nil {
			return nil, nil, err
		}
	}
	grants := g.grants
	return grants, func() { g.c.grants.leave(channel, g.owner, grants) }, nil
}

// queued hands the call's place in the queue of k to the Client's keeper
// once it has one and returns how long to sleep before looking again. The
// head watches the holder's lease itself (its attempt's hint); the others
// are refreshed and woken by the keeper. Call done when the wait ends.
func (g *grantWait) queued(k keys, sem bool, waiterTTL time.Duration, a attempt) time.Duration {
	if a.position == 0 || g.grants == nil {
		return a.wait
	}
	if g.keepLeave == nil {
		g.keepLeave = g.c.keeper.keep(g.node, k, sem, g.owner, g.grants, waiterTTL)
	}
	if a.position == 1 {
		return a.wait
	}
	return max(a.wait, keptWait(waiterTTL))
}

// done leaves the keeper, if it kept the call.
func (g *grantWait) done() {
	if g.keepLeave != nil {
		g.keepLeave()
	}
}
