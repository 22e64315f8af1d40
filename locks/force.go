package locks

import (
	"context"
	"fmt"
)

// ForceUnlock removes the holder of the lock called name, whoever it is, and
// wakes the lock's waiters. It is for operators freeing a lock whose holder
// is stuck (hung, not dead: a dead holder's lease runs out by itself), as
// `redlua unlock --force` does. It reports whether there was a holder.
//
// The removed holder is not told at once: its next renewal or Unlock finds
// the lock gone and ends its lease with ErrLockLost, and fencing tokens keep
// growing, so a resource that checks them rejects the old holder's writes.
// It frees a Mutex (plain or fair) and the write side of an RWMutex; fair
// waiters stay queued and the next one takes the lock.
func (c *Client) ForceUnlock(ctx context.Context, name string) (bool, error) {
	if ctx == nil {
		return false, fmt.Errorf("locks: force unlock %s: nil context; pass context.Background() or a context with a deadline", name)
	}
	k, err := keysFor(name)
	if err != nil {
		return false, err
	}
	removed := false
	for _, node := range c.nodes { // every server of a quorum
		n, err := c.forceUnlock(ctx, node, k)
		if err != nil {
			return removed, wrapCtx(ctx, "locks: force unlock "+name, err)
		}
		removed = removed || n
	}
	return removed, nil
}
