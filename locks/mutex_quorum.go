package locks

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// quorumWay is a Mutex's way on a quorum of independent primaries
// (NewQuorum, Redlock): each attempt is a round on every server (see
// quorumWay.round), and a Lock retries rounds, woken by a release on any
// server. Use TryLock for one round that fails at once with ErrNoQuorum.
type quorumWay struct{}

func (w quorumWay) tryLock(ctx context.Context, m *Mutex, owner string) (*Lease, error) {
	l, _, err := w.round(ctx, m, owner, tryOnce)
	return l, err // round's errors name the lock already
}

func (w quorumWay) lock(ctx context.Context, m *Mutex, owner string) (*Lease, error) {
	// A round without a majority of answers (servers down or slow) is
	// retried like a contended one until ctx ends; the error then says
	// both that ctx ended and why the last round failed.
	var (
		lease    *Lease
		noQuorum error
		rounds   int
	)
	waiting := func(err error) error {
		if noQuorum != nil {
			prefix := "locks: " + m.k.text + ": "
			return fmt.Errorf("%swaiting: %w; the last round: %w", prefix, ctx.Err(), unprefixed{noQuorum, prefix})
		}
		return wrapCtx(ctx, "locks: "+m.k.text+": waiting", err)
	}
	try := func(ctx context.Context) (bool, string, time.Duration, error) {
		if rounds++; rounds > 2 {
			// Every round but the first two (the first, and the one made
			// right after subscribing) follows a wait, often ended by a
			// release that every server announces: contenders that all
			// retry at once split the votes, so each waits a random bit.
			if _, _, err := sleep(ctx, nil, time.Duration(rand.Int64N(int64(5*time.Millisecond)))); err != nil {
				return true, "", 0, waiting(err)
			}
		}
		l, wait, err := w.round(ctx, m, owner, watchWaiter)
		switch {
		case errors.Is(err, ErrNoQuorum):
			noQuorum = err
			if ctx.Err() != nil {
				// ctx ended during the round: say both, as when it ends
				// asleep.
				return true, "", 0, waiting(ctx.Err())
			}
			err, wait = nil, m.s.retryOnError
		case err == nil && l == nil:
			noQuorum = nil
			m.c.emit(&m.s, Event{Kind: EventContended, Name: m.k.name, Owner: owner})
		}
		lease = l
		return err != nil || l != nil, m.k.channel, wait, err // round's errors name the lock already
	}
	// Uncontended, the first round takes it: no subscriptions to set up.
	if done, _, _, err := try(ctx); done {
		return lease, err
	}
	err := waiter{
		// Every server announces its releases; one that cannot subscribe
		// only costs wake-ups.
		subscribe: func(ctx context.Context, channel string) (<-chan int64, func(), error) {
			wake := make(chan int64, 1)
			var stops []func()
			for _, n := range m.c.nodes {
				if stop, err := n.Subscribe(ctx, channel, func(string) { nudge(wake, 0) }); err == nil {
					stops = append(stops, stop)
				}
			}
			return wake, func() {
				for _, stop := range stops {
					stop()
				}
			}, nil
		},
		try:    try,
		failed: waiting,
	}.wait(ctx, m.k.channel, 0, false)
	if err != nil {
		return nil, err
	}
	return lease, nil
}
