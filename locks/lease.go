package locks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Lease is one hold of a lock: the proof of ownership that Unlock and Extend
// need. It is safe for concurrent use.
//
// A lease is a promise with a deadline on this process's clock: the moment
// its acquiring call was sent plus the TTL, minus a margin for clock drift,
// moved only by a renewal the server confirmed. Err, Done and Context check
// that deadline whenever they are called, so after a pause (a stopped
// process, a long GC) the first look already says ErrLockLost, before any
// timer had a chance to run.
type Lease struct {
	c *Client
	// k and s are the lock's own, shared by its leases and never changed:
	// copies made every lease 430 bytes larger, a fifth of what a
	// contended Client allocated.
	k     *keys
	s     *settings
	hold  holdKind
	owner string
	token int64
	count int // permits held, for a Semaphore lease

	mu       sync.Mutex
	deadline time.Time // local, conservative: the lease surely lasts until then
	err      error     // why the lease ended; nil while held
	done     chan struct{}
	contexts map[*leaseContext]struct{}

	// The Client's expiries own these (under their own mutex): the
	// deadline the heap orders by, and the lease's place in it (-1: none).
	expiryAt    time.Time
	expiryIndex int

	// The watchdog: a chain of timers on the Client's clock.
	dogTimer   func() bool
	dogStopped bool
	dogCancel  context.CancelFunc // cancels a renewal in flight
	renewing   sync.Mutex         // held while a renewal runs

	// unconfirmed is set on a resumed lease until a server confirms its
	// hold (see missing); unlockFailed once an Unlock failed after it may
	// have sent its release.
	unconfirmed  bool
	unlockFailed bool

	// watched is set while the Client's revokeHub routes this lease's
	// revocations to it (under the hub's mutex).
	watched bool
}

// holdKind is how one kind of hold is renewed and released: a lease gets its
// behaviour from its lock kind.
type holdKind interface {
	// kind names the hold in a marshalled lease ("" for a Mutex).
	kind() string
	extend(ctx context.Context, l *Lease, ttl time.Duration) (outcome, bool, error)
	release(ctx context.Context, l *Lease) (outcome, error)
}

// driftMargin is subtracted from every local deadline, as Redlock does: the
// client's and the server's clocks may run at slightly different rates.
func driftMargin(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// newLease starts tracking a hold that the server granted for first (often
// s.ttl) at the earliest at sent (on the Client's clock).
func newLease(c *Client, k *keys, s *settings, hold holdKind, owner string, token int64, count int, sent time.Time, first time.Duration) *Lease {
	return startLease(c, k, s, hold, owner, token, count, sent, first, false)
}

// newResumedLease is newLease for Resume: no server has confirmed the
// hold to this process yet.
func newResumedLease(c *Client, k *keys, s *settings, hold holdKind, owner string, token int64, count int, sent time.Time, first time.Duration) *Lease {
	return startLease(c, k, s, hold, owner, token, count, sent, first, true)
}

func startLease(c *Client, k *keys, s *settings, hold holdKind, owner string, token int64, count int, sent time.Time, first time.Duration, unconfirmed bool) *Lease {
	l := &Lease{c: c, k: k, s: s, hold: hold, owner: owner, token: token, count: count, done: make(chan struct{}), expiryIndex: -1, unconfirmed: unconfirmed}
	l.deadline = sent.Add(first - driftMargin(first))
	l.mu.Lock()
	c.expiries.track(l, l.deadline)
	if s.watchdog {
		l.scheduleRenewal(l.renewEvery(first))
	}
	l.mu.Unlock()
	// Listen for a forced unlock while the lease lasts (see Lease.revoke),
	// on the Client's revoke channel, which the Client's first lease
	// subscribes without delaying the caller. A quorum's leases learn of
	// it at their next renewal.
	if !c.quorum() {
		c.watch(l)
	}
	return l
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

// Name returns the lock's name.
func (l *Lease) Name() string { return l.k.name }

// Owner returns the owner token of this holder: the WithOwner token when one
// was set, otherwise the random token the lock made for the holder.
func (l *Lease) Owner() string { return ownerToken(l.owner) }

// callSeparator joins an owner token and a call's attempt id into the
// identity of an RWMutex call that shares its token with other calls (see
// RWMutex.holder); WithOwner refuses tokens that contain it.
const callSeparator = "\t"

// ownerToken is the owner token of a holder identity: the identity without
// the call's id that RWMutex.holder may have joined to it.
func ownerToken(holder string) string {
	token, _, _ := strings.Cut(holder, callSeparator)
	return token
}

// Token returns the fencing token of this acquisition: larger than the token
// of every earlier acquisition of the same lock name. Pass it to the guarded
// resource so it can reject writes from a holder whose lease ran out.
// Tokens are derived from the server's clock (microseconds), so they keep
// growing after a restart that lost data or a failover, as long as the
// server's clock does not step back (docs/failure-model.md).
func (l *Lease) Token() int64 { return l.token }

// Deadline returns the time until which the lease is surely held (it keeps a
// margin for clock drift), as last confirmed by the server.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Done is closed when the lease ends: released by Unlock, or lost (also at
// once when a forced unlock revokes it). Calling it checks the local
// deadline first.
func (l *Lease) Done() <-chan struct{} {
	l.checkDeadline()
	return l.done
}

// Err returns nil while the lease is held, ErrLockLost (wrapped) when it
// ended without Unlock (or its Unlock failed; with ErrForced too when a
// forced unlock revoked it), and ErrNotHeld after Unlock.
// Calling it checks the local deadline first.
func (l *Lease) Err() error {
	l.checkDeadline()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// checkDeadline ends the lease when its local deadline has passed.
func (l *Lease) checkDeadline() {
	l.mu.Lock()
	passed := l.err == nil && !l.c.clock.Now().Before(l.deadline)
	l.mu.Unlock()
	if passed {
		l.expireLocally()
	}
}

// Context returns a context derived from parent that is cancelled when the
// lease ends, with the lease's Err as its cause (context.Cause). Its Done
// and Err check the lease's deadline first.
func (l *Lease) Context(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(fmt.Errorf("locks: %s: Lease.Context: %w", l.k.text, errNilContext))
		return ctx, func() {}
	}
	inner, cancel := context.WithCancelCause(parent)
	lc := &leaseContext{Context: inner, l: l, cancel: cancel}
	l.mu.Lock()
	ended := l.err
	if ended == nil {
		if l.contexts == nil {
			l.contexts = map[*leaseContext]struct{}{}
		}
		l.contexts[lc] = struct{}{}
	}
	l.mu.Unlock()
	if ended != nil {
		cancel(ended)
	}
	return lc, func() {
		l.mu.Lock()
		delete(l.contexts, lc)
		l.mu.Unlock()
		cancel(context.Canceled)
	}
}

// leaseContext checks the lease's deadline whenever it is asked whether it
// is done.
type leaseContext struct {
	context.Context
	l      *Lease
	cancel context.CancelCauseFunc
}

func (c *leaseContext) Done() <-chan struct{} {
	c.l.checkDeadline()
	return c.Context.Done()
}

func (c *leaseContext) Err() error {
	c.l.checkDeadline()
	return c.Context.Err()
}

// end ends the lease with err, once: it records err, cancels the lease's
// contexts, and only then closes Done, so that whoever sees Done closed
// also sees Err and every context of Context cancelled. A context that
// Context makes meanwhile sees err set and is cancelled before it is
// returned.
func (l *Lease) end(err error) bool {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return false
	}
	l.err = err
	l.c.expiries.forget(l)
	ctxs := l.contexts
	l.contexts = nil
	l.mu.Unlock()
	for lc := range ctxs {
		lc.cancel(err)
	}
	close(l.done)
	l.c.revokes.unwatch(l)
	return true
}

func (l *Lease) lost(cause string) {
	err := fmt.Errorf("locks: %s: %s: %w", l.k.text, cause, ErrLockLost)
	if l.end(err) {
		l.c.emit(l.s, Event{Kind: EventLost, Name: l.k.name, Owner: l.owner, Token: l.token, Err: err})
	}
}

// revoke ends the lease because a forced unlock revoked it: its Client got
// a revocation naming its lock and hold on its revoke channel, or an
// extend replied outcomeRevoked. The error matches ErrForced and
// ErrLockLost. The server keeps the name taken until this holder's Unlock
// confirms that it stopped, or the grace period ends.
func (l *Lease) revoke() {
	err := fmt.Errorf("locks: %s: %w: an operator revoked the lease (stop using the resource, then Unlock to hand the lock on): %w",
		l.k.text, ErrForced, ErrLockLost)
	if l.end(err) {
		l.c.emit(l.s, Event{Kind: EventLost, Name: l.k.name, Owner: l.owner, Token: l.token, Err: err})
	}
}

// revokedBy reports whether the message "revoke <attempt> <owner>" is for
// this lease. owner is the holder's identity as the server records it: the
// owner token, or (an RWMutex call that shares its token) the token joined
// to the call's id. An empty attempt (a reentrant owner, whose calls are
// one holder) names every lease of the owner; so does a lease that knows
// no attempt of its own.
func (l *Lease) revokedBy(attempt, owner string) bool {
	token, call, joined := strings.Cut(l.owner, callSeparator)
	if l.owner != owner && token != owner {
		return false
	}
	switch {
	case attempt == "":
		return true
	case joined:
		return l.owner == owner || call == attempt
	}
	own := ""
	if a, ok := l.hold.(interface{ attemptID() string }); ok {
		own = a.attemptID()
	}
	// Attempts compare by their ids: a Mutex's hold records the bare id
	// from mutex.acquire@14 on, the attempt with its mode before.
	return own == "" || attemptID(own) == attemptID(attempt)
}

// missing ends the lease after the server said that its owner does not
// hold the lock (result is outcomeTaken or outcomeExpired), and returns the
// lease's Err. A lease that a server confirmed at least once (every lease
// but a resumed one, until its first Extend) was held and is lost:
// ErrLockLost. A resumed lease that no server confirmed was held only if
// its owner token holds the lock now through another call (its own call's
// hold ran out, and the owner took the lock again), which Inspect shows;
// otherwise nothing says its owner ever held it (a lease made up, or one
// that ended before Resume), and the answer is ErrNotHeld, as for an
// Unlock of a lease that is not held.
func (l *Lease) missing(ctx context.Context, result outcome) error {
	if result == outcomeRevoked {
		// The server still has this holder's hold, revoked: it was held.
		l.revoke()
		return l.Err()
	}
	l.mu.Lock()
	unconfirmed := l.unconfirmed
	l.mu.Unlock()
	if !unconfirmed || (result == outcomeTaken && l.ownerHoldsNow(ctx)) {
		l.lost(result.lostCause())
		return l.Err()
	}
	cause := "another owner holds the lock"
	if result != outcomeTaken {
		cause = "no one holds the lock"
	}
	err := fmt.Errorf("locks: %s: the resumed lease's owner does not hold the lock (%s; it never held it, or its lease ended before Resume): %w", l.k.text, cause, ErrNotHeld)
	l.forceEnd(err)
	return err
}

// ownerHoldsNow reports whether the lease's owner token holds the lock
// now, by Inspect (false when Inspect fails).
func (l *Lease) ownerHoldsNow(ctx context.Context) bool {
	info, err := l.c.Inspect(ctx, l.k.name)
	if err != nil {
		return false
	}
	owner := ownerToken(l.owner)
	if info.Held && info.Owner == owner {
		return true
	}
	for _, r := range info.Readers {
		if r.Owner == owner {
			return true
		}
	}
	for _, p := range info.Permits {
		if p.Owner == owner {
			return true
		}
	}
	return false
}

// confirmed records that a server confirmed the lease's hold.
func (l *Lease) confirmed() {
	l.mu.Lock()
	l.unconfirmed = false
	l.mu.Unlock()
}

func (l *Lease) expireLocally() {
	l.lost("the lease's deadline passed without a confirmed renewal")
}

// Extend resets the lease to ttl from now (0 means the lock's TTL; otherwise
// MinTTL to MaxTTL). It returns ErrLockLost when the lease already ended on
// the server or its local deadline passed.
func (l *Lease) Extend(ctx context.Context, ttl time.Duration) error {
	if err := checkCtx(ctx, l.k.text, "Extend"); err != nil {
		return err
	}
	if ttl == 0 {
		ttl = l.s.ttl
	}
	if ttl < MinTTL || ttl > MaxTTL {
		return invalidf("locks: %s: Extend needs a TTL of at least %v and at most MaxTTL (%v), got %v", l.k.text, MinTTL, MaxTTL, ttl)
	}
	if l.s.maxTTL > 0 && ttl > l.s.maxTTL {
		return fmt.Errorf("locks: %s: Extend(%v) is longer than the Client's longest lease, WithMaxTTL(%v); pass a shorter TTL", l.k.text, ttl, l.s.maxTTL)
	}
	if err := l.Err(); err != nil {
		return err
	}
	return l.extend(ctx, ttl)
}

func (l *Lease) extend(ctx context.Context, ttl time.Duration) error {
	sent := l.c.clock.Now()
	result, replicated, err := l.hold.extend(ctx, l, ttl)
	if err != nil {
		return wrapCtx(ctx, "locks: "+l.k.text+": extend", err)
	}
	if result != outcomeOK {
		return l.missing(ctx, result)
	}
	l.confirmed()
	if !replicated {
		return fmt.Errorf("locks: %s: extend: %w", l.k.text, ErrNotReplicated)
	}
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return l.Err()
	}
	if !l.c.clock.Now().Before(l.deadline) {
		// The lease ran out locally before the confirmation came: a lease
		// once lost stays lost.
		l.mu.Unlock()
		l.expireLocally()
		return l.Err()
	}
	if next := sent.Add(ttl - driftMargin(ttl)); next.After(l.deadline) || ttl < l.s.ttl {
		l.deadline = next
	}
	l.c.expiries.track(l, l.deadline)
	l.mu.Unlock()
	return nil
}

// Unlock releases this hold. The watchdog, if any, has stopped before the
// release is sent, so no renewal can follow it.
//
// Unlock is cleanup, and runs after the caller's context ended more often
// than not (a deferred Unlock in a request handler): it keeps ctx's values
// (trace ids) but not its cancellation or deadline, and waits for the
// release at most WithReleaseTimeout (DefaultReleaseTimeout, 5s). So
//
//	defer lease.Unlock(ctx)
//
// releases the lock even when ctx was cancelled first. (Mutex.Do runs a
// function under the lock and releases it however the function returns.)
//
// It returns ErrNotHeld when the lease was already unlocked, and
// ErrLockLost when the lease had ended on the server (expired or taken by
// another owner); for a resumed lease that no server has confirmed yet,
// see Client.Resume. When the release itself fails (no answer within the
// release timeout, a broken connection), the error matches ErrNotReleased
// and ErrLockLost, and the lease still ends here: the holder can no longer
// be sure it owns the lock, which frees itself when its lease runs out.
// Calling Unlock again retries: it returns nil when the lock is then free
// (the failed call's release landed after all, as a quorum's does once
// started, or the lease ran out: either way no one holds it), and
// ErrLockLost when another owner holds it.
//
// A lease that a forced unlock revoked (Err matches ErrForced) still sends
// its release: that is the holder's confirmation that it stopped, which
// frees the lock (or hands it to the next waiter) before the forced
// unlock's grace period ends. Call it once the guarded work has stopped;
// it returns the lease's error.
func (l *Lease) Unlock(ctx context.Context) error {
	if err := checkCtx(ctx, l.k.text, "Unlock"); err != nil {
		return err
	}
	start := time.Now()
	ctx, cancel := releaseContext(ctx, l.s)
	defer cancel()
	l.stopWatchdog()
	l.mu.Lock()
	ended, retry := l.err, l.unlockFailed
	l.mu.Unlock()
	if errors.Is(ended, ErrNotHeld) {
		return ended
	}
	result, err := l.hold.release(ctx, l)
	if err == nil && errors.Is(ended, ErrForced) {
		// A revoked lease: the release is the holder's confirmation that it
		// stopped, which frees the name (or hands it to the next waiter)
		// before the grace period ends. The lease stays revoked.
		if confirmedAnswer(result, nil) {
			l.c.emitCall(ctx, start, l.s, Event{Kind: EventReleased, Name: l.k.name, Owner: l.owner, Token: l.token})
		}
		return ended
	}
	if err != nil {
		err = notReleased(ctx, l.k.text, l.s, err)
		l.mu.Lock()
		l.unlockFailed = true
		l.mu.Unlock()
		if l.end(err) { // it matches ErrLockLost too
			// EventLost, ended by this Unlock call: with its context.
			l.c.emitCall(ctx, start, l.s, Event{Kind: EventLost, Name: l.k.name, Owner: l.owner, Token: l.token, Err: err})
		}
		return err
	}
	switch {
	case result == outcomeOK, result == outcomeStillHeld, result == outcomeHandedOn,
		// A retry after a failed Unlock that finds no one holding the lock:
		// the failed call's release may well have landed (a quorum's goes
		// on after its caller stopped waiting), or the lease ran out;
		// either way the lock is no longer ours and no one else's. The
		// stored failure (a context that ended, say) no longer says
		// anything about the lock.
		retry && result == outcomeExpired:
		// Also after a failed Unlock or a local expiry: the server says the
		// hold was still ours, and now it is released.
		l.forceEnd(unlockedError{l.k.text})
		l.c.emitCall(ctx, start, l.s, Event{Kind: EventReleased, Name: l.k.name, Owner: l.owner, Token: l.token})
		return nil
	case retry:
		// Another owner holds the lock now: this call's own finding
		// replaces the stored failure.
		err := fmt.Errorf("locks: %s: unlock after a failed Unlock: %s: %w", l.k.text, result.lostCause(), ErrLockLost)
		l.forceEnd(err)
		return err
	}
	return l.missing(ctx, result)
}

// releaseContext is the context of a release: parent's values, not its
// cancellation or deadline, and s's release timeout (see WithReleaseTimeout).
func releaseContext(parent context.Context, s *settings) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(parent), s.releaseTimeout)
}

// notReleased is the error of a release that failed with err under the
// release context ctx: it matches ErrNotReleased, ErrLockLost and err.
func notReleased(ctx context.Context, name string, s *settings, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("no answer within the release timeout, %v (WithReleaseTimeout): %w (%w)", s.releaseTimeout, ctx.Err(), err)
	} else if ctx.Err() != nil {
		err = fmt.Errorf("no answer within the release timeout, %v (WithReleaseTimeout): %w", s.releaseTimeout, err)
	}
	return fmt.Errorf("locks: %s: unlock: %w: %w: %w; the lock frees itself when its lease runs out", name, ErrNotReleased, ErrLockLost, err)
}

// unlockedError is a lease's end after its Unlock: ErrNotHeld, with the
// text built only when someone reads it (every Unlock ends a lease; a
// formatted error there was 3% of a contended client's CPU).
type unlockedError struct{ name string }

func (e unlockedError) Error() string {
	return "locks: " + e.name + ": unlocked: " + ErrNotHeld.Error()
}
func (e unlockedError) Unwrap() error { return ErrNotHeld }

// forceEnd records err as the lease's end even when it had already ended
// (a retried Unlock that succeeded replaces the "unlock failed" error).
func (l *Lease) forceEnd(err error) {
	if l.end(err) {
		return
	}
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
}

// renewEvery is the watchdog's period; a lease whose first grant is short
// (a handed-over lock) is renewed within that grant.
func (l *Lease) renewEvery(first time.Duration) time.Duration {
	every := max(time.Duration(float64(l.s.ttl)*l.s.renewAt), minRenewEvery)
	if first < l.s.ttl {
		every = min(every, max(time.Duration(float64(first)*l.s.renewAt), minRenewEvery))
	}
	return every
}

// scheduleRenewal arms the watchdog's next renewal; l.mu is held.
func (l *Lease) scheduleRenewal(d time.Duration) {
	if l.dogStopped || l.err != nil {
		return
	}
	l.dogTimer = l.c.clock.AfterFunc(max(d, 0), l.renew)
}

// renew is one watchdog round. A failed renewal is retried until the lease
// would expire; then the lease is lost.
func (l *Lease) renew() {
	l.renewing.Lock()
	defer l.renewing.Unlock()
	l.mu.Lock()
	if l.dogStopped || l.err != nil {
		l.mu.Unlock()
		return
	}
	left := l.deadline.Sub(l.c.clock.Now())
	ctx, cancel := context.WithTimeout(context.Background(), max(left, time.Millisecond))
	l.dogCancel = cancel
	l.mu.Unlock()

	err := l.extend(ctx, l.s.ttl)
	cancel()

	l.mu.Lock()
	defer l.mu.Unlock()
	l.dogCancel = nil
	switch {
	case err == nil:
		l.scheduleRenewal(l.renewEvery(l.s.ttl))
	case errors.Is(err, ErrLockLost) || l.dogStopped:
	default:
		l.c.emit(l.s, Event{Kind: EventRenewFailed, Name: l.k.name, Owner: l.owner, Token: l.token, Err: err})
		l.scheduleRenewal(min(l.s.retryOnError, l.deadline.Sub(l.c.clock.Now())))
	}
}

// stopWatchdog stops renewals and waits for one in flight to finish.
func (l *Lease) stopWatchdog() {
	l.mu.Lock()
	l.dogStopped = true
	if l.dogTimer != nil {
		l.dogTimer()
	}
	if l.dogCancel != nil {
		l.dogCancel()
	}
	l.mu.Unlock()
	l.renewing.Lock()
	l.renewing.Unlock() // an empty critical section: it waits for a renewal in flight
}

// mutexHold is the hold of a Mutex (an RWMutex writer's is writeHold).
// attempt is the id of the Lock or TryLock call that took it, so that the
// server tells calls sharing an owner token apart; it is empty for a
// reentrant owner (its calls are one holder).
type mutexHold struct{ attempt string }

func (mutexHold) kind() string { return "" }

// attemptID is the attempt a forced unlock names in its message (see
// Lease.revokedBy).
func (h mutexHold) attemptID() string { return h.attempt }

func (h quorumHold) attemptID() string { return h.attempt }

func (h mutexHold) extend(ctx context.Context, l *Lease, ttl time.Duration) (outcome, bool, error) {
	return l.c.mutexExtend(ctx, l.c.backend(), l.s, *l.k, l.owner, h.attempt, ttl)
}

func (h mutexHold) release(ctx context.Context, l *Lease) (outcome, error) {
	return l.c.mutexRelease(ctx, l.c.backend(), l.s, *l.k, l.owner, "", h.attempt)
}

// readHold is a read hold of an RWMutex.
type readHold struct{}

func (readHold) kind() string { return "read" }

func (readHold) extend(ctx context.Context, l *Lease, ttl time.Duration) (outcome, bool, error) {
	return l.c.rwExtend(ctx, l.s, *l.k, l.owner, false, ttl)
}

func (readHold) release(ctx context.Context, l *Lease) (outcome, error) {
	return l.c.readRelease(ctx, l.s, *l.k, l.owner)
}

// permitHold is a Semaphore lease on l.count permits.
type permitHold struct{}

func (permitHold) kind() string { return "permits" }

func (permitHold) extend(ctx context.Context, l *Lease, ttl time.Duration) (outcome, bool, error) {
	return l.c.semExtend(ctx, l.s, *l.k, l.owner, ttl)
}

func (permitHold) release(ctx context.Context, l *Lease) (outcome, error) {
	held, err := l.c.semRelease(ctx, *l.k, l.owner)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	expired := !l.c.clock.Now().Before(l.deadline)
	l.mu.Unlock()
	if !held || expired {
		// The record was gone, or the lease's deadline, which comes before
		// the record's expiry, had passed: the lease was lost.
		return outcomeExpired, nil
	}
	return outcomeOK, nil
}
