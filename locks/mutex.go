package locks

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Mutex is a named distributed lock. Create it with Client.Mutex; it is safe
// for concurrent use, and cheap: it holds no connection and no state on the
// server until locked.
type Mutex struct {
	c    *Client
	k    keys
	s    settings
	meta string
}

// Mutex returns the lock called name, with opts on top of the Client's defaults.
func (c *Client) Mutex(name string, opts ...Option) (*Mutex, error) {
	k, err := c.keysFor(name)
	if err != nil {
		return nil, err
	}
	kind := kindMutexK
	if c.quorum() {
		kind = kindQuorumK
	}
	s, err := c.apply(kind, k.text, opts)
	if err != nil {
		return nil, err
	}
	if s.reentrant && s.owner == "" {
		s.owner = newToken() // the Mutex value is the reentrancy identity
	}
	return &Mutex{c: c, k: k, s: s, meta: c.meta(&s)}, nil
}

// Name returns the lock's name.
func (m *Mutex) Name() string { return m.k.name }

func (m *Mutex) owner() string {
	if m.s.owner != "" {
		return m.s.owner
	}
	return newToken()
}

// newAttempt names one Lock or TryLock call on the server, so that an
// acquisition the call gave up on can be undone even if it runs late, and
// so that calls sharing an owner token (WithOwner) are separate holders.
func newAttempt() string { return newShortID() }

// holdAttempt is the attempt a lease taken by call att renews and releases
// its hold as: att, except for a reentrant owner, whose calls are one
// holder (any of its leases may drop any of its holds).
func (m *Mutex) holdAttempt(att string) string {
	if m.s.reentrant {
		return ""
	}
	return att
}

// TryLock makes one attempt. It returns ErrNotAcquired when another owner
// holds the lock.
func (m *Mutex) TryLock(ctx context.Context) (*Lease, error) {
	if err := checkCtx(ctx, m.k.text, "TryLock"); err != nil {
		return nil, err
	}
	if m.c.quorum() {
		return m.quorumTryLock(ctx)
	}
	owner, att, start := m.owner(), mutexAttempt(&m.s, tryOnce), time.Now()
	sent := m.c.clock.Now()
	a, replicated, err := m.c.mutexAcquire(ctx, m.c.backend(), &m.s, m.k, owner, att, m.c.holding(ctx, m.c.backend(), m.meta))
	if l, err, settled := m.settle(ctx, a, replicated, err, owner, att, start, sent); settled {
		return l, err
	}
	m.c.emit(&m.s, Event{Kind: EventContended, Name: m.k.name, Owner: owner})
	return nil, fmt.Errorf("locks: %s: %w", m.k.text, ErrNotAcquired)
}

// Lock waits until it holds the lock or ctx ends. It does not poll: a
// waiter queues in Redis, and the release that frees the lock hands it to
// the oldest live waiter and tells only that waiter's Client. The Client
// refreshes the places of all its waiters of the lock together, every third
// of the waiter TTL, and wakes them when the lock lost its holder without a
// release; the head of the queue also looks again when the holder's lease
// is due to run out.
func (m *Mutex) Lock(ctx context.Context) (*Lease, error) {
	if err := checkCtx(ctx, m.k.text, "Lock"); err != nil {
		return nil, err
	}
	if m.c.quorum() {
		return m.quorumLock(ctx)
	}
	owner, att, start := m.owner(), mutexAttempt(&m.s, queueWaiter), time.Now()
	channel := m.k.grantPrefix + m.c.id
	// The first attempt queues even when grants cannot reach us yet (the
	// first waiter of this lock in this Client), so that the call's place in
	// the queue dates from the call, not from a retry after subscribing:
	// waiters that arrived meanwhile are not put ahead of it. A grant made
	// before the subscription is confirmed is claimed by the attempt the
	// wait makes right after subscribing.
	grants, subscribed := m.c.grants.register(channel, owner, att)
	sent := m.c.clock.Now()
	a, replicated, err := m.c.mutexAcquire(ctx, m.c.backend(), &m.s, m.k, owner, att, m.c.holding(ctx, m.c.backend(), m.meta))
	if l, err, settled := m.settle(ctx, a, replicated, err, owner, att, start, sent); settled {
		if subscribed {
			m.c.grants.leave(channel, owner, grants)
		}
		return l, err
	}
	m.c.emit(&m.s, Event{Kind: EventContended, Name: m.k.name, Owner: owner, Position: a.position})

	// queuedAt is when the last attempt that left us queued was sent: a
	// grant made after that attempt lives at least min(TTL, waiter TTL)
	// from then, on the server.
	queuedAt, queuedServerUs := sent, a.serverUs
	var lease *Lease
	g := &grantWait{c: m.c, node: m.c.backend(), owner: owner, att: att, grants: grants, subscribed: subscribed}
	defer g.done()
	queued := func(a attempt) time.Duration { return g.queued(m.k, false, m.s.waiterTTL, a) }
	hint := queued(a)
	err = waiter{
		subscribe: g.subscribe,
		try: func(ctx context.Context) (bool, string, time.Duration, error) {
			sent := m.c.clock.Now()
			a, replicated, err := m.c.mutexAcquire(ctx, m.c.backend(), &m.s, m.k, owner, att, m.c.holding(ctx, m.c.backend(), m.meta))
			l, err, settled := m.outcome(ctx, a, replicated, err, owner, att, start, sent)
			if settled {
				lease = l
				return true, "", 0, err
			}
			if a.position > 0 {
				queuedAt, queuedServerUs = sent, a.serverUs
			}
			return false, channel, queued(a), nil
		},
		onMessage: func(token int64) bool {
			// A grant made before our last queued attempt ran is stale (that
			// attempt would have claimed it had it still been ours, as after a
			// pause); grants count from the attempt that queued us, and their
			// tokens come from the same server clock as the attempt's time.
			if token <= queuedServerUs {
				return false
			}
			// Granted while this process was stopped, the grant may be gone
			// (ok false): the next attempt claims it if it is still ours.
			l, ok := m.handedOver(ctx, owner, att, token, start, queuedAt)
			lease = l
			return ok
		},
	}.wait(ctx, channel, hint, subscribed)
	if err != nil {
		return nil, m.giveUp(ctx, owner, att, start, err)
	}
	return lease, nil
}

// settle turns an attempt into a lease or an error; settled is false when
// the caller should wait.
func (m *Mutex) settle(ctx context.Context, a attempt, replicated bool, err error, owner, att string, start, sent time.Time) (*Lease, error, bool) {
	l, err, settled := m.outcome(ctx, a, replicated, err, owner, att, start, sent)
	if err != nil {
		return nil, m.giveUp(ctx, owner, att, start, err), true
	}
	return l, nil, settled
}

// outcome is settle without the give-up: Lock's wait gives up once, after
// the loop, whatever ended it.
func (m *Mutex) outcome(ctx context.Context, a attempt, replicated bool, err error, owner, att string, start, sent time.Time) (*Lease, error, bool) {
	if err == nil {
		err = a.refusal(&m.s, replicated)
	}
	switch {
	case err != nil:
		return nil, err, true
	case a.acquired:
		l := newLease(m.c, &m.k, &m.s, mutexHold{attempt: m.holdAttempt(att)}, owner, a.token, 0, sent, m.s.ttl)
		m.c.emitCall(ctx, start, &m.s, Event{Kind: EventAcquired, Name: m.k.name, Owner: owner, Token: a.token, Wait: time.Since(start)})
		return l, nil, true
	}
	return nil, nil, false
}

// giveUp ends a failed Lock or TryLock: it leaves the queue and undoes an
// acquisition this call may have made without learning of it (a timeout
// whose script still ran, or runs later: the server then refuses it).
func (m *Mutex) giveUp(ctx context.Context, owner, att string, start time.Time, cause error) error {
	m.undo(ctx, owner, att)
	err := cause
	if ctx.Err() != nil || !isWrapped(cause) {
		err = wrapCtx(ctx, "locks: "+m.k.text, cause)
	}
	m.c.emitCall(ctx, start, &m.s, Event{Kind: EventWaitFailed, Name: m.k.name, Owner: owner, Wait: time.Since(start), Err: err})
	return err
}

// undo leaves the queue and releases what attempt att may have taken; the
// server refuses att from then on (mutex.release records it as gone). See
// Client.undo for the retries when the server cannot be reached.
func (m *Mutex) undo(ctx context.Context, owner, att string) {
	m.c.undo(ctx, &m.s, func(ctx context.Context) error {
		_, err := m.c.mutexRelease(ctx, m.c.backend(), &m.s, m.k, owner, att, "")
		return err
	})
}

// handedOver builds the lease of a lock a release handed to us (see
// Client.leaseFromGrant); ok is false when the next attempt must claim it
// instead. A reentrant owner always claims it, so that its hold count is
// right.
func (m *Mutex) handedOver(ctx context.Context, owner, att string, token int64, start, queuedAt time.Time) (*Lease, bool) {
	if m.s.reentrant {
		return nil, false // the next attempt claims it, with a round trip
	}
	l := m.c.leaseFromGrant(&m.k, &m.s, mutexHold{attempt: m.holdAttempt(att)}, owner, token, 0, queuedAt)
	if l == nil {
		return nil, false
	}
	m.c.emitCall(ctx, start, &m.s, Event{Kind: EventAcquired, Name: m.k.name, Owner: owner, Token: token, Wait: time.Since(start)})
	return l, true
}

// leaseFromGrant builds the lease of a hold (a Mutex's lock, a Semaphore
// call's count permits) that a release handed over to a waiter queued by
// an attempt sent at queuedAt. The grant gave the hold min(TTL, waiter TTL)
// from the moment it was made, which is after queuedAt: the lease counts
// from queuedAt, so a grant that reached a process stopped for longer than
// that is not returned as held (nil: the next attempt claims the hold if it
// is still ours). With WithReplicas it is nil too: the release that made
// the grant did not wait for replicas; the claim, a write of the waiter's
// own, does (and replicas receive writes in order, so the grant with it).
// A longer lease is confirmed before the short one runs out: by the
// watchdog, or by one extension.
func (c *Client) leaseFromGrant(k *keys, s *settings, hold holdKind, owner string, token int64, count int, queuedAt time.Time) *Lease {
	first := min(s.ttl, s.waiterTTL)
	if s.replicas > 0 || !c.clock.Now().Before(queuedAt.Add(first-driftMargin(first))) {
		return nil
	}
	l := newLease(c, k, s, hold, owner, token, count, queuedAt, first)
	if s.ttl > first && !s.watchdog {
		l.confirmLater(first)
	}
	return l
}

// confirmLater extends a handed-over lease to its full TTL halfway through
// its short first grant, unless it ended before. Short critical sections
// never pay for it.
func (l *Lease) confirmLater(first time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dogTimer = l.c.clock.AfterFunc(first/2, func() {
		l.renewing.Lock() // Unlock waits for it, as for a watchdog renewal
		defer l.renewing.Unlock()
		l.mu.Lock()
		stopped := l.dogStopped
		l.mu.Unlock()
		if stopped || l.Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), first/2)
		defer cancel()
		_ = l.extend(ctx, l.s.ttl) // a failure shows as a lost lease at the short deadline
	})
}

// isWrapped reports whether err already carries a "locks: " prefix.
func isWrapped(err error) bool {
	return len(err.Error()) > 7 && err.Error()[:7] == "locks: "
}

// Do takes the lock (Lock: it waits while ctx lasts), runs fn with the
// lease and a context that ends when ctx does or when the lease is lost
// (its cause is then the lease's error), and releases the lock however fn
// returns, panics included, and even when ctx ended meanwhile (see
// Lease.Unlock). Pass that context to the guarded work, so that it stops
// when the lock is no longer held, and the lease's Token to a resource
// that checks fencing tokens.
//
// It returns Lock's error when the lock was not taken (fn does not run),
// and otherwise fn's error joined with Unlock's: an Unlock error matching
// ErrLockLost says the lease ended before fn returned (or the release
// failed, ErrNotReleased), so fn's work may not have been protected to its
// end.
func (m *Mutex) Do(ctx context.Context, fn func(ctx context.Context, lease *Lease) error) error {
	if fn == nil {
		return invalidf("locks: %s: Do(ctx, nil): pass the function to run under the lock", m.k.text)
	}
	l, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	return l.do(ctx, fn)
}

// do runs fn under the lease's context and unlocks however fn returns.
func (l *Lease) do(ctx context.Context, fn func(ctx context.Context, lease *Lease) error) (err error) {
	lctx, cancel := l.Context(ctx)
	defer func() {
		cancel()
		// Unlock keeps ctx's values, not its cancellation: it releases
		// even when ctx ended while fn ran.
		err = errors.Join(err, l.Unlock(ctx))
	}()
	return fn(lctx, l)
}
