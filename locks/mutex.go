package locks

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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
	k, err := keysFor(name)
	if err != nil {
		return nil, err
	}
	s := c.defaults
	for _, o := range opts {
		o(&s)
	}
	if err := s.validate(name); err != nil {
		return nil, err
	}
	if s.reentrant && s.owner == "" {
		s.owner = newToken() // the Mutex value is the reentrancy identity
	}
	return &Mutex{c: c, k: k, s: s, meta: s.meta(c.host)}, nil
}

// Name returns the lock's name.
func (m *Mutex) Name() string { return m.k.name }

// attempt is the outcome of one acquire script call.
type attempt struct {
	acquired bool
	token    int64
	wait     time.Duration // when not acquired: how long the wait may last before retrying
}

func (m *Mutex) owner() string {
	if m.s.owner != "" {
		return m.s.owner
	}
	return newToken()
}

func (m *Mutex) try(ctx context.Context, owner string) (attempt, error) {
	ttl := m.s.ttl.Milliseconds()
	reentrant := "0"
	if m.s.reentrant {
		reentrant = "1"
	}
	var reply []any
	var err error
	if m.s.fair {
		reply, err = m.c.backend.Run(ctx, m.c.scripts.fairAcquire, m.k.fairKeys, owner, ttl, m.s.waiterTTL.Milliseconds(), reentrant, m.meta).Slice()
	} else {
		reply, err = m.c.backend.Run(ctx, m.c.scripts.acquire, m.k.mutexKeys, owner, ttl, reentrant, m.meta).Slice()
	}
	if err != nil {
		return attempt{}, wrapCtx(ctx, "locks: "+m.k.name, err)
	}
	if len(reply) < 2 {
		return attempt{}, fmt.Errorf("locks: %s: unexpected reply %v from the acquire script", m.k.name, reply)
	}
	n, _ := reply[1].(int64)
	if reply[0] == int64(1) {
		return attempt{acquired: true, token: n}, nil
	}
	wait := time.Duration(n) * time.Millisecond
	if wait <= 0 {
		wait = time.Millisecond // the lock just expired or has no TTL: retry soon
	}
	return attempt{wait: wait}, nil
}

// TryLock makes one attempt. It returns ErrNotAcquired when another owner
// holds the lock.
func (m *Mutex) TryLock(ctx context.Context) (*Lease, error) {
	owner := m.owner()
	start := time.Now()
	a, err := m.try(ctx, owner)
	if err != nil {
		return nil, m.failed(owner, start, err)
	}
	if !a.acquired {
		if m.s.fair {
			// A failed fair attempt queued us: leave the queue again.
			_, _ = m.c.backend.Run(context.WithoutCancel(ctx), m.c.scripts.fairRelease, m.k.fairKeys, owner, m.k.channel).Result()
		}
		m.c.emit(&m.s, Event{Kind: EventContended, Name: m.k.name, Owner: owner})
		return nil, fmt.Errorf("locks: %s: %w", m.k.name, ErrNotAcquired)
	}
	return m.granted(owner, a.token, start, start), nil
}

// Lock waits until it holds the lock or ctx ends. It does not poll: it wakes
// on the release message, or when the holder's lease is due to run out.
func (m *Mutex) Lock(ctx context.Context) (*Lease, error) {
	owner := m.owner()
	start := time.Now()
	a, err := m.try(ctx, owner)
	if err == nil && a.acquired {
		return m.granted(owner, a.token, start, start), nil
	}
	if err != nil {
		return nil, m.failed(owner, start, err)
	}
	// In plain mode, a holder in this Client hands the lock straight to its
	// oldest local waiter on Unlock (see localWaiters). Queue before the
	// contention is reported, so the report means "waiting in line".
	var local *localWaiter
	if !m.s.fair {
		local = &localWaiter{owner: owner, m: m, grant: make(chan grant, 1)}
		m.c.local.add(m.k.name, local)
	}
	m.c.emit(&m.s, Event{Kind: EventContended, Name: m.k.name, Owner: owner})

	// Subscribe first, then try again: a release after this attempt cannot
	// be missed.
	wake := make(chan string, 8)
	unsubscribe, err := m.c.backend.Subscribe(ctx, m.k.channel, func(p string) {
		select {
		case wake <- p:
		default: // a wake-up is already pending; the next attempt will see the state
		}
	})
	if err != nil {
		m.dropLocal(local)
		return nil, m.leave(ctx, owner, start, err)
	}
	defer unsubscribe()

	for {
		sent := time.Now()
		a, err = m.try(ctx, owner)
		if err != nil {
			m.dropLocal(local)
			return nil, m.leave(ctx, owner, start, err)
		}
		if a.acquired {
			m.dropLocal(local)
			return m.granted(owner, a.token, start, sent), nil
		}
		res, err := m.wait(ctx, owner, wake, a.wait, local)
		if err != nil {
			m.dropLocal(local)
			return nil, m.leave(ctx, owner, start, err)
		}
		switch {
		case res.local:
			return m.granted(owner, res.token, start, res.sent), nil
		case res.handedOver:
			return m.handedOver(owner, res.token, start), nil
		}
	}
}

// dropLocal takes a waiter that stops waiting out of the local queue. If an
// Unlock already claimed it, the handoff is in flight: wait for it, and give
// back a lock it brought.
func (m *Mutex) dropLocal(w *localWaiter) {
	if w == nil || m.c.local.remove(m.k.name, w) {
		return
	}
	g := <-w.grant
	if g.ok {
		l := newLease(m.c, m.k, m.s, kindMutex, w.owner, g.token, g.sent, m.s.ttl)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = l.Unlock(ctx) // passes it on to the next waiter, local or not
		cancel()
	}
}

// waitResult says how a wait ended without error.
type waitResult struct {
	local      bool // a local holder handed the lock over (mutex.handoff)
	handedOver bool // fair.release granted the lock to us
	token      int64
	sent       time.Time
}

// wait blocks until a wake-up worth a new attempt, a grant to owner (fair
// mode, or a local handoff), the end of d, or the end of ctx.
func (m *Mutex) wait(ctx context.Context, owner string, wake <-chan string, d time.Duration, local *localWaiter) (waitResult, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var handed <-chan grant
	if local != nil {
		handed = local.grant
	}
	for {
		select {
		case g := <-handed:
			if g.ok {
				return waitResult{local: true, token: g.token, sent: g.sent}, nil
			}
			// The handoff found nothing to hand over: queue again and retry.
			m.c.local.add(m.k.name, local)
			return waitResult{}, nil
		case p := <-wake:
			if token, ok := grantedTo(p, owner); ok {
				return waitResult{handedOver: true, token: token}, nil
			}
			if !strings.HasPrefix(p, "granted ") {
				return waitResult{}, nil // released, or the subscription reconnected
			}
			// Handed to another waiter: our turn has not come, keep waiting.
		case <-timer.C:
			return waitResult{}, nil
		case <-ctx.Done():
			return waitResult{}, ctx.Err()
		}
	}
}

// grantedTo parses fair.release's "granted <fence> <owner>" message.
func grantedTo(payload, owner string) (int64, bool) {
	rest, ok := strings.CutPrefix(payload, "granted ")
	if !ok {
		return 0, false
	}
	token, who, ok := strings.Cut(rest, " ")
	if !ok || who != owner {
		return 0, false
	}
	n, err := strconv.ParseInt(token, 10, 64)
	return n, err == nil
}

// leave ends a failed Lock: in fair mode it leaves the queue (and passes on
// the lock if it was handed over meanwhile).
func (m *Mutex) leave(ctx context.Context, owner string, start time.Time, err error) error {
	if m.s.fair {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, _ = m.c.backend.Run(cleanup, m.c.scripts.fairRelease, m.k.fairKeys, owner, m.k.channel).Result()
		cancel()
	}
	return m.failed(owner, start, wrapCtx(ctx, "locks: "+m.k.name+": waiting", err))
}

func (m *Mutex) failed(owner string, start time.Time, err error) error {
	m.c.emit(&m.s, Event{Kind: EventWaitFailed, Name: m.k.name, Owner: owner, Wait: time.Since(start), Err: err})
	return err
}

// handedOver builds the lease of a fair-mode grant. fair.release gave it
// only the waiter lease, so that a waiter that died meanwhile cannot hold the
// lock long; the full lease is confirmed in the background, off the path of
// the new owner, which starts work at once.
func (m *Mutex) handedOver(owner string, token int64, start time.Time) *Lease {
	first := min(m.s.ttl, m.s.waiterTTL)
	// The grant happened before its message arrived; counting the lease from
	// the arrival errs by one message delivery, far below the drift margin.
	l := newLease(m.c, m.k, m.s, kindMutex, owner, token, time.Now(), first)
	m.c.emit(&m.s, Event{Kind: EventAcquired, Name: m.k.name, Owner: owner, Token: token, Wait: time.Since(start)})
	if m.s.ttl > first {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), first)
			defer cancel()
			_ = l.extend(ctx, m.s.ttl) // a failure shows as a lost lease at the short deadline
		}()
	}
	return l
}

// granted builds the lease; sent is when the acquisition can have happened
// at the earliest, from which the lease's local deadline counts.
func (m *Mutex) granted(owner string, token int64, start, sent time.Time) *Lease {
	l := newLease(m.c, m.k, m.s, kindMutex, owner, token, sent, m.s.ttl)
	m.c.emit(&m.s, Event{Kind: EventAcquired, Name: m.k.name, Owner: owner, Token: token, Wait: time.Since(start)})
	return l
}
