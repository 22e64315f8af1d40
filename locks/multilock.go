package locks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/redlua/redlua/internal/keyslot"
)

// MultiLock takes several locks all or nothing: Lock returns holding every
// one of them, or none. Names whose keys share a cluster slot are taken in
// one script; groups in different slots are taken one after another in a
// fixed order (by slot, then name, the same in every process: Names). A
// Lock blocked by a held lock queues for it and then takes the rest in
// that order, keeping what it took, so that two MultiLocks cannot deadlock
// and Mutex callers that keep a lock busy cannot starve it.
type MultiLock struct {
	c      *Client
	s      settings
	meta   string
	groups [][]keys // by slot, in the fixed order
}

// MultiLease holds every lock of a MultiLock.
type MultiLease struct {
	// Leases are the held locks, one per name, in the MultiLock's order.
	Leases []*Lease
}

// MultiLock returns an all-or-nothing lock over names: at most
// MaxMultiLockNames, each given once (a name given twice is an error: it
// would be one lock, which the caller's count of names would not show).
// The names are Mutex names: a Mutex with one of them excludes the MultiLock,
// and an RWMutex or Semaphore holding one of them makes Lock and TryLock fail
// with ErrWrongKind.
func (c *Client) MultiLock(names []string, opts ...Option) (*MultiLock, error) {
	if len(names) == 0 {
		return nil, invalidf("locks: MultiLock needs at least one lock name")
	}
	if len(names) > MaxMultiLockNames {
		return nil, invalidf("locks: MultiLock %s: %d names; take at most MaxMultiLockNames (%d) together", namesText(names), len(names), MaxMultiLockNames)
	}
	if c.quorum() {
		return nil, errors.New("locks: MultiLock: a quorum Client makes only Mutexes")
	}
	s, err := c.apply(kindMultiK, namesText(names), opts)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(names))
	bySlot := map[int][]keys{}
	for _, n := range names {
		k, err := c.keysFor(n)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, invalidf("locks: MultiLock %s: the name %s is given twice; give each name once", namesText(names), shortQuote(n))
		}
		seen[n] = true
		slot := keyslot.Of(k.lock)
		bySlot[slot] = append(bySlot[slot], k)
	}
	ml := &MultiLock{c: c, s: s, meta: c.meta(&s)}
	slots := make([]int, 0, len(bySlot))
	for slot := range bySlot {
		slots = append(slots, slot)
	}
	sort.Ints(slots)
	for _, slot := range slots {
		g := bySlot[slot]
		sort.Slice(g, func(i, j int) bool { return g[i].name < g[j].name })
		ml.groups = append(ml.groups, g)
	}
	return ml, nil
}

// Lock waits until it holds every lock. On any error it holds none.
//
// Uncontended, it takes each group of names in one script, all or nothing.
// Blocked by a held lock, it queues for that lock as a Mutex does, and from
// then on takes the remaining names one at a time in Names' order, keeping
// the ones before the lock it waits for: a release hands a lock to the
// oldest live waiter while anyone is queued, so a MultiLock that only
// waited for a lock to be free would wait as long as Mutex callers kept
// its queue busy. Taking locks in one fixed order keeps MultiLocks from
// deadlocking each other; code that nests Mutexes over some of these names
// should take them in the same order. When a lease it keeps ends while it
// waits (its TTL ran out without WithWatchdog), Lock gives back what it
// holds and starts again, so the MultiLease it returns is held in full.
func (ml *MultiLock) Lock(ctx context.Context) (*MultiLease, error) {
	if err := checkCtx(ctx, "multilock", "Lock"); err != nil {
		return nil, err
	}
	owner := newToken()
	for {
		held, blocked, err := ml.attempt(ctx, owner)
		if err == nil && blocked == nil {
			return &MultiLease{Leases: held}, nil
		}
		if err != nil {
			if rerr := ml.rollback(ctx, held); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return nil, err
		}
		// attempt took whole groups up to the blocked one: a prefix of the
		// order, which the locks after it may be waited for behind.
		leases, lost, err := ml.inOrder(ctx, owner, held)
		switch {
		case err != nil:
			return nil, err
		case !lost:
			return &MultiLease{Leases: leases}, nil
		case ctx.Err() != nil:
			return nil, wrapCtx(ctx, "locks: multilock: waiting", ctx.Err())
		}
		// A kept lease ended while Lock waited (its EventLost was emitted):
		// start again with nothing held.
	}
}

// inOrder takes the locks after held, one at a time in the fixed order,
// each through the Mutex queue. It keeps held while it waits. lost reports
// that a kept lease ended meanwhile: everything was given back, and the
// caller starts again.
func (ml *MultiLock) inOrder(ctx context.Context, owner string, held []*Lease) (leases []*Lease, lost bool, err error) {
	s := ml.s
	s.owner = owner // one holder for the whole set, as attempt takes it
	for _, k := range ml.order()[len(held):] {
		m := newMutex(ml.c, k, s, ml.meta)
		waitCtx, stop := ml.whileHeld(ctx, held)
		l, err := m.Lock(waitCtx)
		stop()
		if err != nil && ctx.Err() == nil && waitCtx.Err() != nil {
			return nil, true, ml.rollback(ctx, live(held))
		}
		if err != nil {
			err = fmt.Errorf("locks: multilock %s: %w", k.text, unprefixed{err, "locks: " + k.text + ": "})
			return nil, false, errors.Join(err, ml.rollback(ctx, held))
		}
		held = append(held, l)
	}
	if len(live(held)) < len(held) { // one ended right after the last lock came
		return nil, true, ml.rollback(ctx, live(held))
	}
	return held, false, nil
}

// live is the leases of held that have not ended.
func live(held []*Lease) []*Lease {
	var out []*Lease
	for _, l := range held {
		if l.Err() == nil {
			out = append(out, l)
		}
	}
	return out
}

// whileHeld is ctx, also cancelled when any of held ends.
func (ml *MultiLock) whileHeld(ctx context.Context, held []*Lease) (context.Context, func()) {
	stops := make([]context.CancelFunc, 0, len(held))
	for _, l := range held {
		var stop context.CancelFunc
		ctx, stop = l.Context(ctx)
		stops = append(stops, stop)
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// order is every lock in the order Lock takes them: by slot, then name.
func (ml *MultiLock) order() []keys {
	var all []keys
	for _, g := range ml.groups {
		all = append(all, g...)
	}
	return all
}

// Names returns the lock names in the order Lock takes them when it has to
// wait (by cluster slot, then name; the same in every process).
func (ml *MultiLock) Names() []string {
	var names []string
	for _, k := range ml.order() {
		names = append(names, k.name)
	}
	return names
}

// TryLock makes one all-or-nothing attempt; ErrNotAcquired when any lock is held.
func (ml *MultiLock) TryLock(ctx context.Context) (*MultiLease, error) {
	if err := checkCtx(ctx, "multilock", "TryLock"); err != nil {
		return nil, err
	}
	held, blocked, err := ml.attempt(ctx, newToken())
	if err == nil && blocked == nil {
		return &MultiLease{Leases: held}, nil
	}
	if rerr := ml.rollback(ctx, held); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("locks: %s: %w", blocked.text, ErrNotAcquired)
}

// attempt takes the groups in order. It returns what it holds, and either
// the lock that blocked it or an error.
func (ml *MultiLock) attempt(ctx context.Context, owner string) (held []*Lease, blocked *keys, err error) {
	for _, g := range ml.groups {
		sent := ml.c.clock.Now()
		ml.c.keepHolderRecord(ctx, ml.c.backend())
		if len(g) == 1 {
			// One name alone: the mutex script, which also refuses a name
			// held by another kind of lock.
			att := mutexAttempt(&ml.s, tryOnce)
			a, replicated, runErr := ml.c.mutexAcquire(ctx, ml.c.backend(), &ml.s, g[0], owner, att, ml.meta)
			switch {
			case runErr != nil:
				ml.undo(ctx, g, owner, att)
				return held, nil, wrapCtx(ctx, "locks: multilock "+g[0].text, runErr)
			case a.wrongKind != "":
				return held, nil, fmt.Errorf("locks: multilock %s: %w", g[0].text, wrongKind(a.wrongKind))
			case a.acquired && !replicated:
				ml.undo(ctx, g, owner, att)
				return held, nil, fmt.Errorf("locks: multilock %s: %w", g[0].text, notReplicated(&ml.s))
			case !a.acquired:
				return held, &g[0], nil
			}
			held = append(held, newLease(ml.c, &g[0], &ml.s, mutexHold{attempt: att}, owner, a.token, 0, sent, ml.s.ttl))
			continue
		}
		att := newAttempt()
		out, replicated, runErr := ml.c.multiAcquire(ctx, &ml.s, g, owner, att, ml.meta)
		switch {
		case runErr != nil:
			ml.undo(ctx, g, owner, att)
			return held, nil, wrapCtx(ctx, "locks: multilock "+g[0].text, runErr)
		case out.wrongKind != "":
			return held, nil, fmt.Errorf("locks: multilock %s: %w", g[out.blocked].text, wrongKind(out.wrongKind))
		case out.blocked >= 0:
			return held, &g[out.blocked], nil
		case !replicated:
			ml.undo(ctx, g, owner, att)
			return held, nil, fmt.Errorf("locks: multilock %s: %w", g[0].text, notReplicated(&ml.s))
		}
		for i := range g {
			held = append(held, newLease(ml.c, &g[i], &ml.s, mutexHold{attempt: att}, owner, out.tokens[i], 0, sent, ml.s.ttl))
		}
	}
	return held, nil, nil
}

// undo ends the attempt att on group g whose outcome is unknown (a timeout):
// mutex.undo, on each lock of the group, records att as given up and drops
// the lock's hold only if att took it. The first lock goes first: its
// record is the one multi.acquire looks at, so from then
// on the attempt is refused, and the other locks are released together, in
// one round trip rather than one each. See Client.undo for the retries when
// the server cannot be reached.
func (ml *MultiLock) undo(ctx context.Context, g []keys, owner, att string) {
	ml.c.undo(ctx, &ml.s, func(ctx context.Context) error {
		release := func(k keys) error {
			_, err := ml.c.mutexRelease(ctx, ml.c.backend(), &ml.s, k, owner, att, "")
			return err
		}
		if err := release(g[0]); err != nil {
			return err
		}
		errs := make([]error, len(g)-1)
		var wg sync.WaitGroup
		for i, k := range g[1:] {
			wg.Go(func() { errs[i] = release(k) })
		}
		wg.Wait()
		return errors.Join(errs...)
	})
}

// rollback gives back what a failed attempt took, all at once: a Lock
// whose context ended returns after one round trip, not one per lock.
func (ml *MultiLock) rollback(ctx context.Context, held []*Lease) error {
	errs := make([]error, len(held))
	var wg sync.WaitGroup
	for i, l := range held {
		wg.Go(func() {
			cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := l.Unlock(cleanup); err != nil {
				errs[i] = fmt.Errorf("locks: multilock: giving back %s (it frees itself when its lease ends): %w", l.k.text, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Unlock releases every lock, all at once, and reports every failure,
// joined. As Lease.Unlock, it releases even after ctx ended, each release
// within the release timeout (WithReleaseTimeout), so a deferred Unlock
// works in a request handler whose context was cancelled first.
func (ml *MultiLease) Unlock(ctx context.Context) error {
	if err := checkCtx(ctx, "multilock", "Unlock"); err != nil {
		return err
	}
	errs := make([]error, len(ml.Leases))
	var wg sync.WaitGroup
	for i, l := range ml.Leases {
		wg.Go(func() { errs[i] = l.Unlock(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
