package locks

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RWMutex is a named read-write lock: many readers or one writer. Each
// holder, reader or writer, has its own lease, so a crashed reader frees
// only its own share when its lease expires. By default a waiting writer
// holds new readers back (WithReaderPreference turns that off). Read and
// write holds are Leases like a Mutex's: Unlock, Extend, the watchdog,
// Done, fencing tokens and Marshal/Resume work the same.
//
// With WithReentrant (or WithOwner) the same owner may take read and write
// holds together: take a read hold while writing, then Unlock the write
// hold, and the owner has downgraded to reading without a gap.
type RWMutex struct {
	c    *Client
	k    keys
	s    settings
	meta string
}

// RWMutex returns the read-write lock called name. It must not share its
// name with a Mutex.
func (c *Client) RWMutex(name string, opts ...Option) (*RWMutex, error) {
	m, err := c.Mutex(name, opts...)
	if err != nil {
		return nil, err
	}
	if m.s.fair {
		return nil, fmt.Errorf("locks: %s: WithFair does not apply to RWMutex; it has writer preference instead", name)
	}
	return &RWMutex{c: c, k: m.k, s: m.s, meta: m.meta}, nil
}

func (rw *RWMutex) owner() string {
	if rw.s.owner != "" {
		return rw.s.owner
	}
	return newToken()
}

func (rw *RWMutex) tryRead(ctx context.Context, owner string) (attempt, error) {
	prefer := "1"
	if rw.s.preferReads {
		prefer = "0"
	}
	return rw.parse(ctx, rw.c.backend.Run(ctx, rw.c.scripts.rlock, rw.k.rwKeys, owner, rw.s.ttl.Milliseconds(), prefer))
}

func (rw *RWMutex) tryWrite(ctx context.Context, owner string) (attempt, error) {
	return rw.parse(ctx, rw.c.backend.Run(ctx, rw.c.scripts.wlock, rw.k.rwKeys, owner, rw.s.ttl.Milliseconds(), rw.s.waiterTTL.Milliseconds(), rw.meta))
}

func (rw *RWMutex) parse(ctx context.Context, cmd *redis.Cmd) (attempt, error) {
	reply, err := cmd.Slice()
	if err != nil {
		return attempt{}, wrapCtx(ctx, "locks: "+rw.k.name, err)
	}
	if len(reply) < 2 {
		return attempt{}, fmt.Errorf("locks: %s: unexpected reply %v", rw.k.name, reply)
	}
	n, _ := reply[1].(int64)
	if reply[0] == int64(1) {
		return attempt{acquired: true, token: n}, nil
	}
	return attempt{wait: max(time.Duration(n)*time.Millisecond, time.Millisecond)}, nil
}

// TryRLock makes one attempt at a read hold; ErrNotAcquired when a writer
// holds the lock or (writer preference) waits for it.
func (rw *RWMutex) TryRLock(ctx context.Context) (*Lease, error) {
	return rw.once(ctx, kindRead, rw.tryRead)
}

// TryLock makes one attempt at the write hold; ErrNotAcquired when anyone
// else holds the lock.
func (rw *RWMutex) TryLock(ctx context.Context) (*Lease, error) {
	return rw.once(ctx, kindWrite, rw.tryWrite)
}

// RLock waits for a read hold.
func (rw *RWMutex) RLock(ctx context.Context) (*Lease, error) {
	return rw.acquire(ctx, kindRead, rw.tryRead)
}

// Lock waits for the write hold. While it waits, new readers are held back
// (unless WithReaderPreference).
func (rw *RWMutex) Lock(ctx context.Context) (*Lease, error) {
	return rw.acquire(ctx, kindWrite, rw.tryWrite)
}

func (rw *RWMutex) once(ctx context.Context, kind leaseKind, try func(context.Context, string) (attempt, error)) (*Lease, error) {
	owner := rw.owner()
	sent := time.Now()
	a, err := try(ctx, owner)
	if err != nil {
		return nil, err
	}
	if !a.acquired {
		if kind == kindWrite {
			rw.leave(ctx, owner)
		}
		rw.c.emit(&rw.s, Event{Kind: EventContended, Name: rw.k.name, Owner: owner})
		return nil, fmt.Errorf("locks: %s: %w", rw.k.name, ErrNotAcquired)
	}
	return rw.granted(kind, owner, a.token, sent, sent), nil
}

// acquire waits like Mutex.Lock: subscribe before the attempt that may fail,
// then sleep until the release message or the wait hint, which is bounded by
// the holder's lease (and, for a queued writer, by its waiter-lease refresh).
func (rw *RWMutex) acquire(ctx context.Context, kind leaseKind, try func(context.Context, string) (attempt, error)) (*Lease, error) {
	owner := rw.owner()
	start := time.Now()
	a, err := try(ctx, owner)
	if err == nil && a.acquired {
		return rw.granted(kind, owner, a.token, start, start), nil
	}
	fail := func(err error) (*Lease, error) {
		if kind == kindWrite {
			rw.leave(ctx, owner)
		}
		err = wrapCtx(ctx, "locks: "+rw.k.name+": waiting", err)
		rw.c.emit(&rw.s, Event{Kind: EventWaitFailed, Name: rw.k.name, Owner: owner, Wait: time.Since(start), Err: err})
		return nil, err
	}
	if err != nil {
		return fail(err)
	}
	rw.c.emit(&rw.s, Event{Kind: EventContended, Name: rw.k.name, Owner: owner})
	a, sent, err := rw.c.await(ctx, rw.k.channel, func(ctx context.Context) (attempt, error) { return try(ctx, owner) })
	if err != nil {
		return fail(err)
	}
	return rw.granted(kind, owner, a.token, start, sent), nil
}

// leave takes a writer that gave up out of the waiting set at once, instead
// of letting it hold readers back until its waiter lease runs out.
func (rw *RWMutex) leave(ctx context.Context, owner string) {
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = rw.c.backend.Run(cleanup, rw.c.scripts.rleave, rw.k.waitingKey, owner, rw.k.channel).Err()
}

func (rw *RWMutex) granted(kind leaseKind, owner string, token int64, start, sent time.Time) *Lease {
	l := newLease(rw.c, rw.k, rw.s, kind, owner, token, sent, rw.s.ttl)
	rw.c.emit(&rw.s, Event{Kind: EventAcquired, Name: rw.k.name, Owner: owner, Token: token, Wait: time.Since(start)})
	return l
}
