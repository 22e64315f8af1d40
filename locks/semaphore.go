package locks

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Semaphore is a named counting semaphore: at most Permits holders at once,
// across processes. Every permit is a lease, so the permits of a holder that
// crashed come back when their TTL passes. The count can change at run time
// (SetPermits). Waiters queue and are served in order (see Acquire).
type Semaphore struct {
	c       *Client
	k       keys
	s       settings
	meta    string       // the holder's metadata, as Inspect shows it
	permits atomic.Int64 // the default count the scripts use until SetPermits stored one
}

// Semaphore returns the semaphore called name with permits permits, at
// most MaxPermits (until SetPermits changes the count for everyone). A Mutex or RWMutex holding the
// same name makes its acquisitions fail with ErrWrongKind.
func (c *Client) Semaphore(name string, permits int, opts ...Option) (*Semaphore, error) {
	k, err := c.keysFor(name)
	if err != nil {
		return nil, err
	}
	if err := checkPermits("Semaphore "+k.text, permits); err != nil {
		return nil, err
	}
	if c.quorum() {
		return nil, fmt.Errorf("locks: Semaphore %s: a quorum Client makes only Mutexes", k.text)
	}
	s, err := c.apply(kindSemK, k.text, opts)
	if err != nil {
		return nil, err
	}
	sem := &Semaphore{c: c, k: k, s: s, meta: c.meta(&s)}
	sem.permits.Store(int64(permits))
	return sem, nil
}

func (sem *Semaphore) check(ctx context.Context, what string, n int) error {
	if ctx == nil { // the label is built only then: Acquire is a hot path
		return checkCtx(ctx, "semaphore "+sem.k.text, what)
	}
	if n < 1 || n > MaxPermits {
		return invalidf("locks: semaphore %s: %s asked for %d permits; ask for at least 1 and at most MaxPermits (%d)", sem.k.text, what, n, MaxPermits)
	}
	return nil
}

// checkPermits refuses a permit count outside 1..MaxPermits.
func checkPermits(what string, permits int) error {
	if permits < 1 || permits > MaxPermits {
		return invalidf("locks: %s: %d permits; give at least 1 and at most MaxPermits (%d)", what, permits, MaxPermits)
	}
	return nil
}

// TryAcquire takes n permits (1 to MaxPermits) if that many are free now
// and no queued Acquire is owed them; ErrNotAcquired otherwise.
func (sem *Semaphore) TryAcquire(ctx context.Context, n int) (*Lease, error) {
	return sem.acquire(ctx, "TryAcquire", n, false)
}

// Acquire waits until n permits (1 to MaxPermits) are free and takes them
// together. The returned Lease's Unlock gives all n back. Asking for more
// permits than the semaphore has is an error at once, not a wait that
// never ends (and so is a count lowered below n by SetPermits while the
// call waits).
//
// Waiters queue in Redis and are served first come, first served, as by
// golang.org/x/sync/semaphore: a call takes its permits only when they fit
// beside those owed to every live waiter queued before it, so a request for
// several permits is not passed over by requests for fewer. A release hands
// the freed permits to the queued calls that now fit, inside its own
// script, and tells only their Clients: such a call returns without another
// round trip (a contended acquisition runs the first attempt, the attempt
// that queues it, and the release), and the others run no script. An
// uncontended acquisition is one script run on one key, and the server's
// work for it and its release does not depend on n. A handed-over
// lease first lasts min(TTL, waiter TTL) from the attempt that queued the
// call, and the watchdog (or one extension) makes it a full lease; with
// WithReplicas the call claims the permits with an attempt that waits for
// the replicas instead. As for a Mutex, the Client refreshes
// the places of all its waiters of the semaphore together, every third of
// the waiter TTL (WithWaiterTTL), and a waiter that died leaves the queue
// when its waiter TTL runs out.
func (sem *Semaphore) Acquire(ctx context.Context, n int) (*Lease, error) {
	return sem.acquire(ctx, "Acquire", n, true)
}

func (sem *Semaphore) acquire(ctx context.Context, what string, n int, wait bool) (*Lease, error) {
	if err := sem.check(ctx, what, n); err != nil {
		return nil, err
	}
	owner, start := newToken(), time.Now()
	waiterTTL := time.Duration(0) // TryAcquire does not queue
	var (
		channel    string
		grants     chan int64
		subscribed bool
	)
	if wait {
		waiterTTL, channel = sem.s.waiterTTL, sem.k.grantPrefix+sem.c.id
		// The first attempt queues even before wake-ups can reach us, so the
		// call's place dates from the call; the wait looks again at once
		// after subscribing (see serverWay.lock).
		grants, subscribed = sem.c.grants.register(channel, owner, owner)
	}
	replicated, first := true, true
	step := func(ctx context.Context) (attempt, error) {
		// The first attempt tries the one-key fast path (sem.take); it
		// leaves anything else (a queue, a claim, a recount) to sem.acquire.
		sem.c.keepHolderRecord(ctx, sem.c.backend())
		a, ok, err := sem.c.semAcquire(ctx, &sem.s, sem.k, owner, sem.meta, n, sem.permits.Load(), waiterTTL, first)
		first = false
		replicated = ok
		if err == nil && !a.acquired && a.limit > 0 && int64(n) > a.limit {
			err = fmt.Errorf("asked for %d permits but it has %d; ask for at most %d, or raise the count with SetPermits", n, a.limit, a.limit)
		}
		return a, err
	}
	sent := sem.c.clock.Now()
	a, err := step(ctx)
	if err == nil && !a.acquired && a.wrongKind == "" {
		sem.c.emit(&sem.s, Event{Kind: EventContended, Name: sem.k.name, Owner: owner, Position: a.position})
		if !wait {
			return nil, fmt.Errorf("locks: semaphore %s: %d permits not free: %w", sem.k.text, n, ErrNotAcquired)
		}
		var handed *Lease
		a, sent, handed, err = sem.wait(ctx, owner, n, channel, grants, subscribed, a, sent, step)
		if handed != nil {
			sem.c.emitCall(ctx, start, &sem.s, Event{Kind: EventAcquired, Name: sem.k.name, Owner: owner, Token: handed.token, Wait: time.Since(start)})
			return handed, nil
		}
	} else if subscribed {
		sem.c.grants.leave(channel, owner, grants)
	}
	if err == nil {
		err = a.refusal(&sem.s, replicated)
	}
	if err != nil {
		sem.undo(ctx, owner)
		err = wrapCtx(ctx, "locks: semaphore "+sem.k.text, err)
		sem.c.emitCall(ctx, start, &sem.s, Event{Kind: EventWaitFailed, Name: sem.k.name, Owner: owner, Wait: time.Since(start), Err: err})
		return nil, err
	}
	l := newLease(sem.c, &sem.k, &sem.s, permitHold{}, owner, a.token, n, sent, sem.s.ttl)
	sem.c.emitCall(ctx, start, &sem.s, Event{Kind: EventAcquired, Name: sem.k.name, Owner: owner, Token: a.token, Wait: time.Since(start)})
	return l, nil
}

// wait retries step, queued, until it takes the permits, fails or ctx ends.
// It sleeps until a release wakes this call (a "wake" on the Client's
// channel of the semaphore) or hands it the permits ("grant"), the Client's
// keeper asks it to look, or the attempt's hint passes: the head of the
// queue watches the first permit's lease, whose holder may die without
// releasing. sent is when the last attempt was sent: the lease counts from
// there; handed is the lease of permits a release handed over.
func (sem *Semaphore) wait(ctx context.Context, owner string, n int, channel string, grants chan int64, subscribed bool,
	a attempt, sent time.Time, step func(context.Context) (attempt, error)) (_ attempt, _ time.Time, handed *Lease, _ error) {
	g := &grantWait{c: sem.c, node: sem.c.backend(), owner: owner, att: owner, grants: grants, subscribed: subscribed}
	defer g.done()
	queued := func(a attempt) time.Duration { return g.queued(sem.k, true, sem.s.waiterTTL, a) }
	// queuedAt is when the last attempt that left this call queued was
	// sent, and queuedServerUs the server's time as it ran: a grant is made
	// after it, and its token is larger.
	queuedAt, queuedServerUs := sent, a.serverUs
	err := waiter{
		subscribe: g.subscribe,
		try: func(ctx context.Context) (bool, string, time.Duration, error) {
			sent = sem.c.clock.Now()
			var err error
			a, err = step(ctx)
			if err != nil || a.acquired || a.wrongKind != "" {
				return true, "", 0, err
			}
			if a.position > 0 {
				queuedAt, queuedServerUs = sent, a.serverUs
			}
			return false, channel, queued(a), nil
		},
		onMessage: func(token int64) bool {
			// A "wake" (0), or a grant older than the last attempt that
			// queued us (it would have claimed it): look again.
			if token == 0 || token <= queuedServerUs {
				return false
			}
			handed = sem.c.leaseFromGrant(&sem.k, &sem.s, permitHold{}, owner, token, n, queuedAt)
			return handed != nil
		},
	}.wait(ctx, channel, queued(a), subscribed)
	return a, sent, handed, err
}

// undo ends an Acquire that failed. In one script the server records its
// attempt as given up (the call's owner token is its attempt id; refused if
// it arrives later) and takes back permits the attempt may have taken
// without the caller learning of it (a timeout). See Client.undo for the
// retries when the server cannot be reached.
func (sem *Semaphore) undo(ctx context.Context, owner string) {
	sem.c.undo(ctx, &sem.s, func(ctx context.Context) error {
		return sem.c.semUndo(ctx, &sem.s, sem.k, owner)
	})
}

// SetPermits changes the permit count for every process using this
// semaphore (at least 1, at most MaxPermits). Holders above a lowered count keep their permits until they
// release them; new acquisitions wait until the count allows them.
func (sem *Semaphore) SetPermits(ctx context.Context, permits int) error {
	if err := checkCtx(ctx, "semaphore "+sem.k.text, "SetPermits"); err != nil {
		return err
	}
	if err := checkPermits("semaphore "+sem.k.text+": SetPermits", permits); err != nil {
		return err
	}
	if err := sem.c.semSetLimit(ctx, &sem.s, sem.k, permits); err != nil {
		return wrapCtx(ctx, "locks: semaphore "+sem.k.text+": set permits", err)
	}
	sem.permits.Store(int64(permits))
	return nil
}
