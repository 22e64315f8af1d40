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
// (SetPermits); waiting works as for Mutex, woken by each release.
type Semaphore struct {
	c       *Client
	k       keys
	s       settings
	permits atomic.Int64 // the default count the scripts use until SetPermits stored one
}

// Semaphore returns the semaphore called name with permits permits (until
// SetPermits changes the count for everyone). It must not share its name
// with a Mutex or RWMutex.
func (c *Client) Semaphore(name string, permits int, opts ...Option) (*Semaphore, error) {
	if permits < 1 {
		return nil, fmt.Errorf("locks: semaphore %s: %d permits; give at least 1", name, permits)
	}
	m, err := c.Mutex(name, opts...)
	if err != nil {
		return nil, err
	}
	sem := &Semaphore{c: c, k: m.k, s: m.s}
	sem.permits.Store(int64(permits))
	return sem, nil
}

func (sem *Semaphore) try(ctx context.Context, owner string, n int) (attempt, error) {
	reply, err := sem.c.backend.Run(ctx, sem.c.scripts.semAcquire, sem.k.semKeys, owner, n, sem.s.ttl.Milliseconds(), sem.permits.Load()).Slice()
	if err != nil {
		return attempt{}, wrapCtx(ctx, "locks: semaphore "+sem.k.name, err)
	}
	if len(reply) < 2 {
		return attempt{}, fmt.Errorf("locks: semaphore %s: unexpected reply %v", sem.k.name, reply)
	}
	v, _ := reply[1].(int64)
	if reply[0] == int64(1) {
		return attempt{acquired: true, token: v}, nil
	}
	return attempt{wait: max(time.Duration(v)*time.Millisecond, time.Millisecond)}, nil
}

func (sem *Semaphore) check(n int) error {
	if n < 1 {
		return fmt.Errorf("locks: semaphore %s: asked for %d permits; ask for at least 1", sem.k.name, n)
	}
	return nil
}

// TryAcquire takes n permits if that many are free now; ErrNotAcquired otherwise.
func (sem *Semaphore) TryAcquire(ctx context.Context, n int) (*Lease, error) {
	if err := sem.check(n); err != nil {
		return nil, err
	}
	owner := newToken()
	sent := time.Now()
	a, err := sem.try(ctx, owner, n)
	if err != nil {
		return nil, err
	}
	if !a.acquired {
		sem.c.emit(&sem.s, Event{Kind: EventContended, Name: sem.k.name, Owner: owner})
		return nil, fmt.Errorf("locks: semaphore %s: %d permits not free: %w", sem.k.name, n, ErrNotAcquired)
	}
	return sem.granted(owner, n, a.token, sent, sent), nil
}

// Acquire waits until n permits are free and takes them together. The
// returned Lease's Unlock gives all n back.
func (sem *Semaphore) Acquire(ctx context.Context, n int) (*Lease, error) {
	if err := sem.check(n); err != nil {
		return nil, err
	}
	owner := newToken()
	start := time.Now()
	fail := func(err error) (*Lease, error) {
		err = wrapCtx(ctx, "locks: semaphore "+sem.k.name+": waiting", err)
		sem.c.emit(&sem.s, Event{Kind: EventWaitFailed, Name: sem.k.name, Owner: owner, Wait: time.Since(start), Err: err})
		return nil, err
	}
	a, err := sem.try(ctx, owner, n)
	if err != nil {
		return fail(err)
	}
	if a.acquired {
		return sem.granted(owner, n, a.token, start, start), nil
	}
	sem.c.emit(&sem.s, Event{Kind: EventContended, Name: sem.k.name, Owner: owner})
	a, sent, err := sem.c.await(ctx, sem.k.channel, func(ctx context.Context) (attempt, error) { return sem.try(ctx, owner, n) })
	if err != nil {
		return fail(err)
	}
	return sem.granted(owner, n, a.token, start, sent), nil
}

// SetPermits changes the permit count for every process using this
// semaphore. Holders above a lowered count keep their permits until they
// release them; new acquisitions wait until the count allows them.
func (sem *Semaphore) SetPermits(ctx context.Context, permits int) error {
	if permits < 1 {
		return fmt.Errorf("locks: semaphore %s: %d permits; give at least 1", sem.k.name, permits)
	}
	if err := sem.c.backend.Run(ctx, sem.c.scripts.semLimit, sem.k.limitKey, permits, sem.k.channel).Err(); err != nil && !isNil(err) {
		return wrapCtx(ctx, "locks: semaphore "+sem.k.name+": set permits", err)
	}
	sem.permits.Store(int64(permits))
	return nil
}

func (sem *Semaphore) granted(owner string, n int, token int64, start, sent time.Time) *Lease {
	l := newCountedLease(sem.c, sem.k, sem.s, kindPermits, owner, token, n, sent, sem.s.ttl)
	sem.c.emit(&sem.s, Event{Kind: EventAcquired, Name: sem.k.name, Owner: owner, Token: token, Wait: time.Since(start)})
	return l
}
