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
	way  mutexWay
}

// mutexWay is how a Mutex takes its lock: on one server (serverWay) or
// on a majority of a quorum's servers (quorumWay, Redlock). Client.Mutex
// picks it once; Lock and TryLock check their arguments, call it and
// report how the call ended.
type mutexWay interface {
	// tryLock makes one attempt for owner: the lease, nil when another
	// owner holds the lock, or why it failed (undone, and naming the lock).
	tryLock(ctx context.Context, m *Mutex, owner string) (*Lease, error)
	// lock waits until owner holds the lock or ctx ends: the lease, or why
	// it gave up (undone, and naming the lock).
	lock(ctx context.Context, m *Mutex, owner string) (*Lease, error)
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
	return newMutex(c, k, s, c.meta(&s)), nil
}

// newMutex makes the Mutex of k with settings s and hold metadata meta,
// taken the Client's way: on its one server or on its quorum.
func newMutex(c *Client, k keys, s settings, meta string) *Mutex {
	m := &Mutex{c: c, k: k, s: s, meta: meta, way: serverWay{}}
	if c.quorum() {
		m.way = quorumWay{}
	}
	return m
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
	owner, start := m.owner(), time.Now()
	l, err := m.way.tryLock(ctx, m, owner)
	if l == nil && err == nil {
		m.c.emit(&m.s, Event{Kind: EventContended, Name: m.k.name, Owner: owner})
		return nil, fmt.Errorf("locks: %s: %w", m.k.text, ErrNotAcquired)
	}
	return m.ended(ctx, owner, start, l, err)
}

// Lock waits until it holds the lock or ctx ends. It does not poll: a
// waiter queues in Redis, and the release that frees the lock hands it to
// the oldest live waiter and tells only that waiter's Client. The Client
// refreshes the places of all its waiters of the lock together, every third
// of the waiter TTL, and wakes them when the lock lost its holder without a
// release; the head of the queue also looks again when the holder's lease
// is due to run out. On a quorum, Lock retries rounds on every server,
// woken by a release on any of them.
func (m *Mutex) Lock(ctx context.Context) (*Lease, error) {
	if err := checkCtx(ctx, m.k.text, "Lock"); err != nil {
		return nil, err
	}
	owner, start := m.owner(), time.Now()
	l, err := m.way.lock(ctx, m, owner)
	return m.ended(ctx, owner, start, l, err)
}

// ended reports the end of a Lock or TryLock call of owner that began at
// start under ctx: the lease it took, or why it failed.
func (m *Mutex) ended(ctx context.Context, owner string, start time.Time, l *Lease, err error) (*Lease, error) {
	if err != nil {
		m.c.emitCall(ctx, start, &m.s, Event{Kind: EventWaitFailed, Name: m.k.name, Owner: owner, Wait: time.Since(start), Err: err})
		return nil, err
	}
	m.c.emitCall(ctx, start, &m.s, Event{Kind: EventAcquired, Name: m.k.name, Owner: owner, Token: l.token, Wait: time.Since(start)})
	return l, nil
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
