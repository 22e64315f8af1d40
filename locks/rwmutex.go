package locks

import (
	"context"
	"fmt"
	"time"
)

// RWMutex is a named read-write lock: many readers or one writer. Each
// holder, reader or writer, has its own lease, so a crashed reader frees
// only its own share when its lease expires. By default a waiting writer
// holds new readers back (WithReaderPreference turns that off). Read and
// write holds are Leases like a Mutex's: Unlock, Extend, the watchdog,
// Done, fencing tokens and Marshal/Resume work the same.
//
// With WithReentrant the same owner may take read and write holds together:
// take a read hold while writing, then Unlock the write hold, and the owner
// has downgraded to reading without a gap. Without it, every RLock, Lock
// and Try call is a holder of its own, also when calls share a WithOwner
// token: one call's write hold excludes the token's other calls.
type RWMutex struct {
	c    *Client
	k    keys
	s    settings
	meta string
}

// RWMutex returns the read-write lock called name. A Mutex or Semaphore
// holding the same name makes its acquisitions fail with ErrWrongKind.
func (c *Client) RWMutex(name string, opts ...Option) (*RWMutex, error) {
	k, err := c.keysFor(name)
	if err != nil {
		return nil, err
	}
	if c.quorum() {
		return nil, fmt.Errorf("locks: RWMutex %s: a quorum Client makes only Mutexes (readers would need a quorum per reader)", k.text)
	}
	s, err := c.apply(kindRWK, k.text, opts)
	if err != nil {
		return nil, err
	}
	if s.reentrant && s.owner == "" {
		s.owner = newToken()
	}
	return &RWMutex{c: c, k: k, s: s, meta: c.meta(&s)}, nil
}

// holder is the identity under which the call att holds the lock on the
// server. A reentrant owner's calls are one holder: the owner token. Calls
// that share a WithOwner token without WithReentrant are separate holders,
// as they are of a Mutex; the rw scripts know a holder only by its
// identity, so each such call holds under the token joined to its attempt
// id (Lease.Owner, Inspect and events report the token alone). Otherwise
// every call gets a random token.
func (rw *RWMutex) holder(att string) string {
	switch {
	case rw.s.reentrant:
		return rw.s.owner
	case rw.s.owner != "":
		return rw.s.owner + callSeparator + att
	}
	return newToken()
}

// rwTry makes one attempt for owner; att is the id of the calling RLock or
// Lock, which the server refuses once the call gave up (see undo). wait
// says the call waits when refused (a reader keeps the lock's q field, a
// writer joins the waiting writers); a Try call does not.
type rwTry func(ctx context.Context, owner, att string, wait bool) (attempt, bool, error)

func (rw *RWMutex) tryRead(ctx context.Context, owner, att string, wait bool) (attempt, bool, error) {
	rw.c.keepHolderRecord(ctx, rw.c.backend())
	return rw.c.readAcquire(ctx, &rw.s, rw.k, owner, att, rw.meta, wait)
}

func (rw *RWMutex) tryWrite(ctx context.Context, owner, att string, wait bool) (attempt, bool, error) {
	rw.c.keepHolderRecord(ctx, rw.c.backend())
	return rw.c.writeAcquire(ctx, &rw.s, rw.k, owner, att, rw.meta, wait)
}

// TryRLock makes one attempt at a read hold; ErrNotAcquired when a writer
// holds the lock or (writer preference) waits for it.
func (rw *RWMutex) TryRLock(ctx context.Context) (*Lease, error) {
	return rw.acquire(ctx, readHold{}, rw.tryRead, false)
}

// TryLock makes one attempt at the write hold; ErrNotAcquired when anyone
// else holds the lock.
func (rw *RWMutex) TryLock(ctx context.Context) (*Lease, error) {
	return rw.acquire(ctx, writeHold{reads: rw.s.reentrant}, rw.tryWrite, false)
}

// RLock waits for a read hold.
func (rw *RWMutex) RLock(ctx context.Context) (*Lease, error) {
	return rw.acquire(ctx, readHold{}, rw.tryRead, true)
}

// Lock waits for the write hold. While it waits, new readers are held back
// (unless WithReaderPreference). A waiting writer is woken alone: the
// release that frees the lock (the last reader's RUnlock, or the writer's
// Unlock) wakes only the oldest live waiting writer, on its Client's own
// channel, instead of every waiter; the others sleep until their turn or
// until their wait hint (at most a third of the waiter TTL, and at most
// what the blocking lease has left) runs out, when they look again anyway.
func (rw *RWMutex) Lock(ctx context.Context) (*Lease, error) {
	return rw.acquire(ctx, writeHold{reads: rw.s.reentrant}, rw.tryWrite, true)
}

// acquire takes a hold, waiting (await) when wait is set. A writer that gives
// up leaves the waiting set at once instead of holding readers back until
// its waiter lease runs out.
func (rw *RWMutex) acquire(ctx context.Context, hold holdKind, try rwTry, wait bool) (*Lease, error) {
	if ctx == nil {
		call := "RLock"
		if hold.kind() == "write" {
			call = "Lock"
		}
		if !wait {
			call = "Try" + call
		}
		return nil, checkCtx(ctx, rw.k.text, call)
	}
	att, start := newAttempt(), time.Now()
	owner := rw.holder(att)
	replicated := true
	step := func(ctx context.Context) (attempt, error) {
		a, ok, err := try(ctx, owner, att, wait)
		replicated = ok
		return a, err
	}
	var (
		channel    string
		wakes      chan int64
		subscribed bool
	)
	if wait && hold.kind() == "write" {
		// A waiting writer is woken on its Client's grant channel of the
		// lock; registering before the first attempt lets a release right
		// after it reach this call (see Semaphore.acquire).
		channel = rw.k.grantPrefix + rw.c.id
		wakes, subscribed = rw.c.grants.register(channel, owner, att)
	}
	sent := rw.c.clock.Now()
	a, err := step(ctx)
	if err == nil && !a.acquired && a.wrongKind == "" {
		rw.c.emit(&rw.s, Event{Kind: EventContended, Name: rw.k.name, Owner: owner})
		if !wait {
			// A single attempt recorded nothing: nothing to leave.
			return nil, fmt.Errorf("locks: %s: %w", rw.k.text, ErrNotAcquired)
		}
		if channel != "" {
			a, sent, err = rw.awaitWake(ctx, owner, att, channel, wakes, subscribed, a, step)
		} else {
			a, sent, err = rw.c.await(ctx, rw.k.channel, step)
		}
	} else if subscribed {
		rw.c.grants.leave(channel, owner, wakes)
	}
	if err == nil {
		err = a.refusal(&rw.s, replicated)
	}
	if err != nil {
		rw.undo(ctx, hold, owner, att)
		err = wrapCtx(ctx, "locks: "+rw.k.text, err)
		rw.c.emitCall(ctx, start, &rw.s, Event{Kind: EventWaitFailed, Name: rw.k.name, Owner: owner, Wait: time.Since(start), Err: err})
		return nil, err
	}
	l := newLease(rw.c, &rw.k, &rw.s, hold, owner, a.token, 0, sent, rw.s.ttl)
	rw.c.emitCall(ctx, start, &rw.s, Event{Kind: EventAcquired, Name: rw.k.name, Owner: owner, Token: a.token, Wait: time.Since(start)})
	return l, nil
}

// undo ends an acquiring call that failed. In one script (rw.leave) the
// server records its attempt att as given up (refused if it arrives later)
// and drops a hold the attempt may have taken without the caller learning
// of it (a timeout): the write hold, or one read hold of the owner, only if
// att took it; none for a reentrant reader (its holds cannot be told
// apart). A writer also leaves the waiting writers. See Client.undo for the
// retries when the server cannot be reached.
func (rw *RWMutex) undo(ctx context.Context, hold holdKind, owner, att string) {
	write := hold.kind() == "write"
	if !write && rw.s.reentrant {
		owner = ""
	}
	rw.c.undo(ctx, &rw.s, func(ctx context.Context) error {
		return rw.c.rwLeave(ctx, &rw.s, rw.k, owner, att, write)
	})
}

// awaitWake is a waiting writer's loop: it retries step until it takes the
// write hold, fails or ctx ends, sleeping until a release wakes this call
// ("wake <owner>" on the Client's grant channel of the lock, channel) or
// the last attempt's hint runs out. It does not listen to the lock's
// "released" channel: that carries a writer's wake-up only when the head
// of the waiting set recorded no client, so listening would only wake
// every writer again whenever readers are told to look. A lost wake-up
// costs latency, never exclusion. sent is when the last attempt was sent:
// the lease counts from there.
func (rw *RWMutex) awaitWake(ctx context.Context, owner, att, channel string, wakes chan int64, subscribed bool,
	a attempt, step func(context.Context) (attempt, error)) (attempt, time.Time, error) {
	var sent time.Time
	g := &grantWait{c: rw.c, node: rw.c.backend(), owner: owner, att: att, grants: wakes, subscribed: subscribed}
	err := waiter{
		subscribe: g.subscribe,
		try: func(ctx context.Context) (bool, string, time.Duration, error) {
			sent = rw.c.clock.Now()
			var err error
			a, err = step(ctx)
			return err != nil || a.acquired || a.wrongKind != "", channel, a.wait, err
		},
	}.wait(ctx, channel, a.wait, subscribed)
	return a, sent, err
}

// writeHold is the write hold of an RWMutex: the single-holder record of
// the lock's hash (kind rwmutex), renewed by rw.rextend and released by
// rw.unlock, which wakes the oldest waiting writer alone; a write lease
// restored by Client.Resume is one too. reads says its owner may also
// hold reads (a reentrant owner, or a resumed lease, whose owner's mode
// is not known): its release then keeps them.
type writeHold struct{ reads bool }

func (writeHold) kind() string { return "write" }

func (writeHold) extend(ctx context.Context, l *Lease, ttl time.Duration) (outcome, bool, error) {
	return l.c.rwExtend(ctx, l.s, *l.k, l.owner, true, ttl)
}

func (h writeHold) release(ctx context.Context, l *Lease) (outcome, error) {
	return l.c.writeRelease(ctx, *l.k, l.owner, h.reads)
}
