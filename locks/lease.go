package locks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lease is one hold of a lock: the proof of ownership that Unlock and Extend
// need. It is safe for concurrent use.
type Lease struct {
	c     *Client
	k     keys
	s     settings
	kind  leaseKind
	owner string
	token int64
	count int // permits held, for a Semaphore lease

	mu       sync.Mutex
	deadline time.Time // local, conservative: the lease surely lasts until then
	err      error     // why the lease ended; nil while held
	done     chan struct{}
	timer    *time.Timer   // closes done at the deadline when no watchdog runs
	stopDog  chan struct{} // closed to stop the watchdog
	dogExit  chan struct{} // closed when the watchdog has stopped
}

// leaseKind says which scripts release and extend a lease.
type leaseKind int

const (
	kindMutex   leaseKind = iota // mutex.* (fair mode: fair.release)
	kindRead                     // a read hold of an RWMutex: rw.runlock, rw.rextend
	kindWrite                    // the write hold of an RWMutex: mutex.release, mutex.extend
	kindPermits                  // permits of a Semaphore: sem.release, sem.extend
)

// driftMargin is subtracted from every local deadline, as Redlock does: the
// client's and the server's clocks may run at slightly different rates.
func driftMargin(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// newLease starts tracking a hold that the server granted for first (often
// s.ttl) at the earliest at sent.
func newLease(c *Client, k keys, s settings, kind leaseKind, owner string, token int64, sent time.Time, first time.Duration) *Lease {
	return newCountedLease(c, k, s, kind, owner, token, 0, sent, first)
}

// newCountedLease is newLease for a lease on count semaphore permits.
func newCountedLease(c *Client, k keys, s settings, kind leaseKind, owner string, token int64, count int, sent time.Time, first time.Duration) *Lease {
	l := &Lease{c: c, k: k, s: s, kind: kind, owner: owner, token: token, count: count, done: make(chan struct{})}
	l.deadline = sent.Add(first - driftMargin(first))
	if s.watchdog {
		l.stopDog = make(chan struct{})
		l.dogExit = make(chan struct{})
		go l.watchdog()
	} else {
		// Under mu: the timer may fire at once, and its callback takes mu.
		l.mu.Lock()
		l.timer = time.AfterFunc(time.Until(l.deadline), l.expireLocally)
		l.mu.Unlock()
	}
	return l
}

// Name returns the lock's name.
func (l *Lease) Name() string { return l.k.name }

// Owner returns the owner token that identifies this holder on the server.
func (l *Lease) Owner() string { return l.owner }

// Token returns the fencing token of this acquisition: larger than the token
// of every earlier acquisition of the same lock name. Pass it to the guarded
// resource so it can reject writes from a holder whose lease ran out.
func (l *Lease) Token() int64 { return l.token }

// Deadline returns the time until which the lease is surely held (it keeps a
// margin for clock drift), as last confirmed by the server.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Done is closed when the lease ends: released by Unlock, or lost.
func (l *Lease) Done() <-chan struct{} { return l.done }

// Err returns nil while the lease is held, ErrLockLost (wrapped) when it
// ended without Unlock, and ErrNotHeld after Unlock.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Context returns a context derived from parent that is cancelled when the
// lease ends, with the lease's Err as its cause (context.Cause).
func (l *Lease) Context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case <-l.done:
			cancel(l.Err())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// end closes Done with err, once.
func (l *Lease) end(err error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return false
	}
	l.err = err
	if l.timer != nil {
		l.timer.Stop()
	}
	close(l.done)
	return true
}

func (l *Lease) lost(cause string) {
	err := fmt.Errorf("locks: %s: %s: %w", l.k.name, cause, ErrLockLost)
	if l.end(err) {
		l.c.emit(&l.s, Event{Kind: EventLost, Name: l.k.name, Owner: l.owner, Token: l.token, Err: err})
	}
}

func (l *Lease) expireLocally() { l.lost("the lease ran out without being extended") }

// Extend resets the lease to ttl from now (0 means the lock's TTL). It
// returns ErrLockLost when the lease already ended on the server.
func (l *Lease) Extend(ctx context.Context, ttl time.Duration) error {
	if ttl == 0 {
		ttl = l.s.ttl
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("locks: %s: Extend needs a TTL of at least 1ms, got %v", l.k.name, ttl)
	}
	if err := l.Err(); err != nil {
		return err
	}
	return l.extend(ctx, ttl)
}

func (l *Lease) extend(ctx context.Context, ttl time.Duration) error {
	sent := time.Now()
	var cmd *redis.Cmd
	switch l.kind {
	case kindRead:
		cmd = l.c.backend.Run(ctx, l.c.scripts.rextend, l.k.readerKeys, l.owner, ttl.Milliseconds())
	case kindPermits:
		cmd = l.c.backend.Run(ctx, l.c.scripts.semExtend, l.k.permitsKey, l.owner, l.count, ttl.Milliseconds())
	default:
		cmd = l.c.backend.Run(ctx, l.c.scripts.extend, l.k.lockKey, l.owner, ttl.Milliseconds())
	}
	n, err := cmd.Int64()
	if err != nil {
		return wrapCtx(ctx, "locks: "+l.k.name+": extend", err)
	}
	if n != 1 {
		cause := "another owner holds the lock"
		if n == -1 {
			cause = "the lease expired"
		}
		l.lost(cause)
		return l.Err()
	}
	l.mu.Lock()
	l.deadline = sent.Add(ttl - driftMargin(ttl))
	if l.timer != nil {
		l.timer.Reset(time.Until(l.deadline))
	}
	l.mu.Unlock()
	return nil
}

// Unlock releases this hold. The watchdog, if any, has stopped before the
// release is sent, so no renewal can follow it. It returns ErrNotHeld when
// the lease was already unlocked, and ErrLockLost when the lease had ended
// on the server (expired or taken by another owner).
func (l *Lease) Unlock(ctx context.Context) error {
	l.stopWatchdog()
	l.mu.Lock()
	ended := l.err
	l.mu.Unlock()
	if errors.Is(ended, ErrNotHeld) {
		return ended
	}
	var n int64
	var err error
	if w := l.claimLocal(); w != nil {
		n, err = l.handoff(ctx, w)
	} else if l.kind == kindPermits {
		held, runErr := l.c.backend.Run(ctx, l.c.scripts.semRelease, l.k.permitsKey, l.owner, l.count, l.k.channel).Int64()
		n, err = 1, runErr
		if held < int64(l.count) {
			n = -1 // some permits had expired: the lease was lost
		}
	} else {
		release, keys := l.c.scripts.release, l.k.lockKey
		switch {
		case l.kind == kindRead:
			release, keys = l.c.scripts.runlock, l.k.readerKeys
		case l.kind == kindMutex && l.s.fair:
			release, keys = l.c.scripts.fairRelease, l.k.fairKeys
		}
		n, err = l.c.backend.Run(ctx, release, keys, l.owner, l.k.channel).Int64()
	}
	if err != nil {
		return wrapCtx(ctx, "locks: "+l.k.name+": unlock", err)
	}
	switch n {
	case 1, 2, 3:
		l.end(fmt.Errorf("locks: %s: unlocked: %w", l.k.name, ErrNotHeld))
		l.c.emit(&l.s, Event{Kind: EventReleased, Name: l.k.name, Owner: l.owner, Token: l.token})
		return nil
	case 0:
		l.lost("another owner holds the lock")
	default:
		l.lost("the lease expired")
	}
	return l.Err()
}

// claimLocal picks a waiter of this Client to hand the lock to, in plain
// mode; fair mode has its own queue in Redis.
func (l *Lease) claimLocal() *localWaiter {
	if l.s.fair || l.kind != kindMutex {
		return nil
	}
	return l.c.local.claim(l.k.name)
}

func (l *Lease) stopWatchdog() {
	if l.stopDog == nil {
		return
	}
	l.mu.Lock()
	select {
	case <-l.stopDog:
	default:
		close(l.stopDog)
	}
	l.mu.Unlock()
	<-l.dogExit
}

// watchdog renews the lease every renewAt×TTL. A failed renewal is retried
// until the lease would expire; then the lease is lost.
func (l *Lease) watchdog() {
	defer close(l.dogExit)
	every := time.Duration(float64(l.s.ttl) * l.s.renewAt)
	retry := min(l.s.retryOnError, every)
	next := every
	for {
		select {
		case <-l.stopDog:
			return
		case <-l.done:
			return
		case <-time.After(next):
		}
		deadline := l.Deadline()
		if !time.Now().Before(deadline) {
			l.lost("renewals could not reach the server before the lease ran out")
			return
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		// Stop waiting for the server when Unlock asks the watchdog to stop.
		go func() {
			select {
			case <-l.stopDog:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := l.extend(ctx, l.s.ttl)
		cancel()
		switch {
		case err == nil:
			next = every
		case errors.Is(err, ErrLockLost):
			return
		default:
			select {
			case <-l.stopDog:
				return
			default:
			}
			l.c.emit(&l.s, Event{Kind: EventRenewFailed, Name: l.k.name, Owner: l.owner, Token: l.token, Err: err})
			next = min(retry, time.Until(deadline))
			if next < 0 {
				next = 0
			}
		}
	}
}

// marshalled is a Lease's portable form.
type marshalled struct {
	Name      string `json:"name"`
	Owner     string `json:"owner"`
	Token     int64  `json:"token"`
	TTLMillis int64  `json:"ttl_ms"`
	Fair      bool   `json:"fair,omitempty"`
	Kind      string `json:"kind,omitempty"`    // "read", "write" (RWMutex) or "permits" (Semaphore)
	Count     int    `json:"permits,omitempty"` // permits held, for a Semaphore lease
}

var kindNames = map[leaseKind]string{kindRead: "read", kindWrite: "write", kindPermits: "permits"}

// Marshal returns the lease as a string that another process can pass to
// Client.Resume to extend or release the lock.
func (l *Lease) Marshal() (string, error) {
	b, err := json.Marshal(marshalled{Name: l.k.name, Owner: l.owner, Token: l.token, TTLMillis: l.s.ttl.Milliseconds(), Fair: l.s.fair, Kind: kindNames[l.kind], Count: l.count})
	return string(b), err
}

// Resume rebuilds a lease marshalled by Lease.Marshal, possibly in another
// process, so it can be extended or released. The resumed lease has no
// watchdog; its local deadline counts from now, so Done may close late:
// call Extend to confirm ownership.
func (c *Client) Resume(s string) (*Lease, error) {
	var m marshalled
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("locks: Resume: not a marshalled lease (%v); pass the string Lease.Marshal returned: %w", err, ErrNotHeld)
	}
	k, err := keysFor(m.Name)
	if err != nil {
		return nil, fmt.Errorf("locks: Resume: %w", err)
	}
	if m.Owner == "" || m.TTLMillis <= 0 {
		return nil, fmt.Errorf("locks: Resume: the lease has no owner or TTL: %w", ErrNotHeld)
	}
	st := c.defaults
	st.ttl = time.Duration(m.TTLMillis) * time.Millisecond
	st.fair = m.Fair
	st.watchdog = false
	kind := kindMutex
	switch m.Kind {
	case "read":
		kind = kindRead
	case "write":
		kind = kindWrite
	case "permits":
		kind = kindPermits
		if m.Count < 1 {
			return nil, fmt.Errorf("locks: Resume: a semaphore lease without a permit count: %w", ErrNotHeld)
		}
	case "":
	default:
		return nil, fmt.Errorf("locks: Resume: unknown lease kind %q; pass the string Lease.Marshal returned: %w", m.Kind, ErrNotHeld)
	}
	return newCountedLease(c, k, st, kind, m.Owner, m.Token, m.Count, time.Now(), st.ttl), nil
}
