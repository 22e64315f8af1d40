package locks

import (
	"context"
	"time"
)

// serverWay is a Mutex's way on one server (a cluster's slot counts as
// one): an attempt runs mutex.acquire, which queues a Lock's call when the
// lock is held, and the release that frees the lock hands it to the oldest
// live waiter and tells that waiter's Client alone.
type serverWay struct{}

func (w serverWay) tryLock(ctx context.Context, m *Mutex, owner string) (*Lease, error) {
	att := mutexAttempt(&m.s, tryOnce)
	l, _, _, err := w.attempt(ctx, m, owner, att)
	if err != nil {
		return nil, w.giveUp(ctx, m, owner, att, err)
	}
	return l, nil
}

func (w serverWay) lock(ctx context.Context, m *Mutex, owner string) (*Lease, error) {
	att := mutexAttempt(&m.s, queueWaiter)
	channel := m.k.grantPrefix + m.c.id
	// The first attempt queues even when grants cannot reach us yet (the
	// first waiter of this lock in this Client), so that the call's place in
	// the queue dates from the call, not from a retry after subscribing:
	// waiters that arrived meanwhile are not put ahead of it. A grant made
	// before the subscription is confirmed is claimed by the attempt the
	// wait makes right after subscribing.
	grants, subscribed := m.c.grants.register(channel, owner, att)
	g := &grantWait{c: m.c, node: m.c.backend(), owner: owner, att: att, grants: grants, subscribed: subscribed}
	defer g.done()

	// queuedAt is when the last attempt that left us queued was sent (the
	// first attempt's, in any case): a grant made after that attempt lives
	// at least min(TTL, waiter TTL) from then, on the server.
	var (
		lease          *Lease
		position       int64
		queuedAt       time.Time
		queuedServerUs int64
	)
	try := func(ctx context.Context) (bool, string, time.Duration, error) {
		l, a, sent, err := w.attempt(ctx, m, owner, att)
		if l != nil || err != nil {
			lease = l
			return true, "", 0, err
		}
		if a.position > 0 || queuedAt.IsZero() {
			queuedAt, queuedServerUs = sent, a.serverUs
		}
		position = a.position
		return false, channel, g.queued(m.k, false, m.s.waiterTTL, a), nil
	}
	done, _, hint, err := try(ctx)
	switch {
	case done && subscribed:
		// Settled at once: no wait takes over the registration.
		m.c.grants.leave(channel, owner, grants)
	case !done:
		m.c.emit(&m.s, Event{Kind: EventContended, Name: m.k.name, Owner: owner, Position: position})
		err = waiter{
			subscribe: g.subscribe,
			try:       try,
			onMessage: func(token int64) bool {
				// A grant made before our last queued attempt ran is stale
				// (that attempt would have claimed it had it still been
				// ours, as after a pause); grants count from the attempt
				// that queued us, and their tokens come from the same
				// server clock as the attempt's time.
				if token <= queuedServerUs {
					return false
				}
				// Granted while this process was stopped, the grant may be
				// gone (nil): the next attempt claims it if it is still ours.
				lease = w.handedOver(m, owner, att, token, queuedAt)
				return lease != nil
			},
		}.wait(ctx, channel, hint, subscribed)
	}
	if err != nil {
		return nil, w.giveUp(ctx, m, owner, att, err)
	}
	return lease, nil
}

// attempt runs mutex.acquire once for the call att of owner: the lease
// when it took the lock; otherwise the attempt (queued or not) and when it
// was sent, on the Client's clock; or why it gives no lease (an error, or
// a refusal: the caller gives up).
func (serverWay) attempt(ctx context.Context, m *Mutex, owner, att string) (*Lease, attempt, time.Time, error) {
	sent := m.c.clock.Now()
	m.c.keepHolderRecord(ctx, m.c.backend())
	a, replicated, err := m.c.mutexAcquire(ctx, m.c.backend(), &m.s, m.k, owner, att, m.meta)
	if err == nil {
		err = a.refusal(&m.s, replicated)
	}
	if err != nil || !a.acquired {
		return nil, a, sent, err
	}
	return newLease(m.c, &m.k, &m.s, mutexHold{attempt: m.holdAttempt(att)}, owner, a.token, 0, sent, m.s.ttl), a, sent, nil
}

// handedOver builds the lease of a lock a release handed to us (see
// Client.leaseFromGrant); nil when the next attempt must claim it instead.
// A reentrant owner always claims it, so that its hold count is right.
func (serverWay) handedOver(m *Mutex, owner, att string, token int64, queuedAt time.Time) *Lease {
	if m.s.reentrant {
		return nil // the next attempt claims it, with a round trip
	}
	return m.c.leaseFromGrant(&m.k, &m.s, mutexHold{attempt: m.holdAttempt(att)}, owner, token, 0, queuedAt)
}

// giveUp ends a failed Lock or TryLock: it leaves the queue and undoes an
// acquisition the call may have made without learning of it (a timeout
// whose script still ran, or runs later: the server then refuses it),
// and returns cause naming the lock (and ctx's end, when it ended).
func (serverWay) giveUp(ctx context.Context, m *Mutex, owner, att string, cause error) error {
	// The server refuses att from then on (mutex.release records it as
	// gone). See Client.undo for the retries when the server cannot be
	// reached.
	m.c.undo(ctx, &m.s, func(ctx context.Context) error {
		_, err := m.c.mutexRelease(ctx, m.c.backend(), &m.s, m.k, owner, att, "")
		return err
	})
	if ctx.Err() != nil || !isWrapped(cause) {
		return wrapCtx(ctx, "locks: "+m.k.text, cause)
	}
	return cause
}

// isWrapped reports whether err already carries a "locks: " prefix.
func isWrapped(err error) bool {
	return len(err.Error()) > 7 && err.Error()[:7] == "locks: "
}
