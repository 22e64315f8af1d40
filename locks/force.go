package locks

import (
	"context"
	"errors"
	"fmt"
)

// ForceUnlock removes whatever holds the lock called name, whoever it is,
// and wakes the lock's waiters. It is for operators freeing a lock whose
// holder is stuck (hung, not dead: a dead holder's lease runs out by
// itself), as `redlua unlock --force` does. It reports whether it removed
// anything.
//
// Per kind:
//   - a Mutex (plain or fair) or the write side of an RWMutex: the holder is
//     removed and the waiters are woken; fair waiters stay queued and the
//     next one takes the lock. Of an RWMutex's waiting writers, the oldest
//     is woken, as an Unlock wakes it.
//   - a Semaphore: every holder of live permits is removed, and the queued
//     Acquire calls whose permits now fit are woken in queue order, as a
//     release wakes them.
//   - an RWMutex's readers: every live read hold is removed, and the oldest
//     waiting writer is woken, as the last reader's RUnlock wakes it.
//
// On a quorum Client (NewQuorum) it frees the name on every server at once
// and succeeds once a majority freed it; see Client.Inspect for what each
// server then holds.
//
// The removed holders are not told at once: a holder's next renewal or
// Unlock finds its hold gone and ends its lease with ErrLockLost, and
// fencing tokens keep growing, so a resource that checks them rejects the
// old holders' writes.
func (c *Client) ForceUnlock(ctx context.Context, name string) (bool, error) {
	if ctx == nil {
		return false, fmt.Errorf("locks: force unlock %s: nil context; pass context.Background() or a context with a deadline", shortText(name))
	}
	k, err := keysFor(name)
	if err != nil {
		return false, err
	}
	if c.quorum() {
		return c.forceUnlockQuorum(ctx, k)
	}
	removed, err := c.forceUnlock(ctx, c.backend(), k)
	if err != nil {
		return removed, wrapCtx(ctx, "locks: force unlock "+k.text, err)
	}
	// Kinds do not share a name, so at most one kind's script finds a
	// holder (an RWMutex writer's own read holds aside: both go).
	for _, free := range []func(context.Context, Backend, keys) (int64, error){c.semForceUnlock, c.rwForceUnlock} {
		n, err := free(ctx, c.backend(), k)
		if err != nil {
			return removed, wrapCtx(ctx, "locks: force unlock "+k.text, err)
		}
		removed = removed || n > 0
	}
	return removed, nil
}

// forceUnlockQuorum frees the name on every server of a quorum at once (a
// quorum Client makes only Mutexes). The name is free for the next Lock
// once a majority of the servers freed it: a server that failed keeps its
// hold until that lease runs out, a minority the next holder does not
// need. With fewer, the error wraps ErrNoQuorum and names every failure.
func (c *Client) forceUnlockQuorum(ctx context.Context, k keys) (bool, error) {
	removed, errs := fanOut(ctx, c, nodeTimeout(c.defaults.ttl), nil, func(ctx context.Context, _ int, n Backend) (bool, error) {
		return c.forceUnlock(ctx, n, k)
	})
	anyRemoved, freed := false, 0
	var failures []error
	for i, err := range errs {
		if err != nil {
			failures = append(failures, fmt.Errorf("server %d: %w", i+1, err))
			continue
		}
		freed++
		anyRemoved = anyRemoved || removed[i]
	}
	if freed < c.majority() {
		return anyRemoved, wrapCtx(ctx, "locks: force unlock "+k.text, fmt.Errorf("freed on %d of %d servers, short of a majority of %d: %w: %w",
			freed, len(c.nodes), c.majority(), ErrNoQuorum, errors.Join(failures...)))
	}
	return anyRemoved, nil
}

// rwForceUnlock runs rw.forceunlock@1: it removes every live read hold of
// an RWMutex and wakes the oldest waiting writer; it reports how many
// readers it removed.
func (c *Client) rwForceUnlock(ctx context.Context, node Backend, k keys) (int64, error) {
	return node.Run(ctx, c.scripts.rwForceUnlock, []string{k.readers, k.holds, k.writersWaiting, k.writerClients},
		k.channel, c.publish, k.grantPrefix).Int64()
}

// semForceUnlock runs sem.forceunlock@1: it removes every permit holder
// and wakes the queued Acquire calls that now fit; it reports how many
// holders it removed.
func (c *Client) semForceUnlock(ctx context.Context, node Backend, k keys) (int64, error) {
	return node.Run(ctx, c.scripts.semForceUnlock, []string{k.permits, k.limit, k.semQueue, k.semWaiters},
		k.channel, c.publish, k.grantPrefix).Int64()
}
