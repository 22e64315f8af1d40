package locks

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultGrace is how long a forced unlock keeps the name from the next
// holder when the revoked holder does not confirm that it stopped
// (ForceUnlock without WithGrace). A holder that is alive learns of the
// revocation within a round trip and confirms with its Unlock, usually
// long before; the grace covers a holder that cannot be told (its
// connection down, its process paused), so that two holders do not run at
// once as long as it notices within the grace (its next renewal does).
const DefaultGrace = 10 * time.Second

// ForceOption configures one ForceUnlock.
type ForceOption func(*forceSettings)

type forceSettings struct {
	grace time.Duration
	errs  []error
}

// WithGrace sets how long the revoked holders keep the name at most when
// they do not confirm that they stopped (0 to MaxTTL; the default is
// DefaultGrace). 0 removes the holds at once and wakes the waiters, as
// ForceUnlock did before revocation existed: for a holder known to be dead,
// or when two holders for a moment are acceptable. A hold whose lease ends
// sooner keeps its own end. The grace is counted in whole milliseconds
// (rounded up).
func WithGrace(d time.Duration) ForceOption {
	return func(f *forceSettings) {
		if d < 0 || d > MaxTTL {
			f.errs = append(f.errs, invalidf("WithGrace(%v): the grace period must be 0 (remove at once) to MaxTTL (%v); the default is %v", d, MaxTTL, DefaultGrace))
			return
		}
		f.grace = d
	}
}

// ForceUnlock revokes every hold of the lock called name, whoever holds it,
// for operators freeing a lock whose holder is stuck or must stop (hung, or
// working on something that must end; a dead holder's lease runs out by
// itself), as `redlua unlock --force` does. It reports whether a live hold
// was revoked.
//
// A forced unlock is a revocation: the holder must stop before anyone else
// gets the lock, or two holders run. So, by kind alike (a Mutex, an
// RWMutex's writer or readers, a Semaphore's permit holders):
//   - each holder's Client is told at once (on its revoke channel, one
//     per Client: "<key prefix>redlua:revoke:<client id>"), and the
//     holder's lease ends within
//     milliseconds: Done is closed and Err matches ErrLockLost and
//     ErrForced. A lease's renewal that finds its hold revoked ends it the
//     same way, should the message have been missed.
//   - the name is given to no one else until the holder confirms that it
//     stopped, with its Unlock (which then hands the lock to the next
//     waiter, as a release does, and returns the lease's error), or until
//     the grace period ends (WithGrace; DefaultGrace without it), whichever
//     comes first. A hold whose lease ends sooner ends then.
//   - WithGrace(0) removes the holds at once and wakes the waiters.
//
// Fencing tokens keep growing, so a resource that checks them rejects a
// revoked holder's writes once the next holder wrote.
//
// An RWMutex's readers and a Semaphore's permit holders are revoked page by
// page, a script call per 500 of them, so that no call stalls the server
// however many there are: every hold live when ForceUnlock began is revoked
// when it returns; one granted meanwhile may not be (as one granted just
// after). With more holders than a few pages and a grace shorter than
// their round trips, the next holder may start before the last pages'
// holders were told, as with WithGrace(0).
//
// On a quorum Client (NewQuorum) it revokes on every server at once and
// succeeds once a majority did; see Client.Inspect for what each server
// then holds. A quorum's leases are not told by message: they end at
// their next renewal (with ErrLockLost), so keep the grace above a third
// of their TTL.
//
// A Client starts listening (one subscription, its revoke channel, for all
// its leases) when its first lease begins, without delaying it: a forced
// unlock within a round trip of that acquisition may miss the message, and
// then ends the lease at its next renewal.
func (c *Client) ForceUnlock(ctx context.Context, name string, opts ...ForceOption) (bool, error) {
	if ctx == nil {
		return false, fmt.Errorf("locks: force unlock %s: nil context; pass context.Background() or a context with a deadline", shortText(name))
	}
	k, err := c.keysFor(name)
	if err != nil {
		return false, err
	}
	fs := forceSettings{grace: DefaultGrace}
	for i, o := range opts {
		if o == nil {
			return false, invalidf("locks: force unlock %s: option %d is nil; pass options such as locks.WithGrace(time.Second)", k.text, i+1)
		}
		o(&fs)
	}
	if len(fs.errs) > 0 {
		return false, fmt.Errorf("locks: force unlock %s: %w", k.text, errors.Join(fs.errs...))
	}
	graceMs := int64((fs.grace + time.Millisecond - 1) / time.Millisecond)
	if c.quorum() {
		return c.forceUnlockQuorum(ctx, k, graceMs)
	}
	n, err := c.forceUnlock(ctx, c.backend(), k, graceMs)
	if err != nil {
		return n > 0, wrapCtx(ctx, "locks: force unlock "+k.text, err)
	}
	return n > 0, nil
}

// forceUnlockQuorum revokes the name's holds on every server of a quorum at
// once (a quorum Client makes only Mutexes). The name is free for the next
// Lock once a majority of the servers freed it (after the holder's Unlock
// or the grace): a server that failed keeps its hold until that lease runs
// out, a minority the next holder does not need. With fewer, the error
// wraps ErrNoQuorum and names every failure.
func (c *Client) forceUnlockQuorum(ctx context.Context, k keys, graceMs int64) (bool, error) {
	removed, errs := fanOut(ctx, c, nodeTimeout(c.defaults.ttl), nil, func(ctx context.Context, _ int, n Backend) (int64, error) {
		return c.forceUnlock(ctx, n, k, graceMs)
	})
	anyRemoved, freed := false, 0
	var failures []error
	for i, err := range errs {
		if err != nil {
			failures = append(failures, fmt.Errorf("server %d: %w", i+1, err))
			continue
		}
		freed++
		anyRemoved = anyRemoved || removed[i] > 0
	}
	if freed < c.majority() {
		return anyRemoved, wrapCtx(ctx, "locks: force unlock "+k.text, fmt.Errorf("freed on %d of %d servers, short of a majority of %d: %w: %w",
			freed, len(c.nodes), c.majority(), ErrNoQuorum, errors.Join(failures...)))
	}
	return anyRemoved, nil
}

// forcePageCount is how many fields of the name's hash each call of
// lock.forceunlock@4 scans: each call's server work is bounded by it,
// whatever the name holds. maxForcePages bounds the loop (HSCAN completes
// in about fields/count calls; a hash being rehashed may take a few more).
const (
	forcePageCount = 500
	maxForcePages  = 1 << 16
)

// forceUnlock runs lock.forceunlock@4 on one server, one page per call until
// its cursor comes back 0: it revokes every live hold of the name (graceMs
// 0: removes them and wakes the waiters) and tells each holder's Client; it
// reports how many holds it revoked. The first call revokes a single holder
// and cuts the end of shared holders' hold to the grace; each call revokes
// the readers or permit holders of one page (forcePageCount fields).
func (c *Client) forceUnlock(ctx context.Context, node Backend, k keys, graceMs int64) (int64, error) {
	cursor, total := "0", int64(0)
	for range maxForcePages {
		reply, err := node.Run(ctx, c.scripts.forceUnlock, []string{k.lock}, graceMs, c.publish, k.channel, c.revokePrefix(), cursor, forcePageCount).Slice()
		if err != nil {
			return total, err
		}
		next, n, ok := forceReply(reply)
		if !ok {
			return total, fmt.Errorf("unexpected reply %v from %s", shortText(fmt.Sprint(reply)), c.scripts.forceUnlock.ID())
		}
		total += n
		if next == "0" {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
		cursor = next
	}
	return total, fmt.Errorf("%s: the scan did not end within %d pages", c.scripts.forceUnlock.ID(), maxForcePages)
}

// forceReply reads lock.forceunlock@4's {next_cursor, revoked}.
func forceReply(reply []any) (next string, n int64, ok bool) {
	if len(reply) != 2 {
		return "", 0, false
	}
	next, ok1 := reply[0].(string)
	n, ok2 := reply[1].(int64)
	return next, n, ok1 && ok2
}
