package locks

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// forceUnlockID is the pinned version of the force-unlock script.
const forceUnlockID = "mutex.forceunlock@1"

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
	script, err := forceUnlockScript()
	if err != nil {
		return false, err
	}
	n, err := c.backend.Run(ctx, script, k.lockKey, k.channel).Int64()
	if err != nil {
		return false, wrapCtx(ctx, "locks: force unlock "+name, err)
	}
	return n == 1, nil
}

// forceUnlockScript parses the one script file ForceUnlock needs. It is
// parsed per call rather than cached in a package variable (no global
// state); force unlocks are rare operator actions, and one small file parses
// in microseconds.
func forceUnlockScript() (*registry.Script, error) {
	const file = "mutex.forceunlock.v1.lua"
	src, err := fs.ReadFile(lua.FS, file)
	if err != nil {
		return nil, fmt.Errorf("locks: embedded script %s: %w", file, err)
	}
	s, err := registry.ParseScript(file, src)
	if err != nil {
		return nil, fmt.Errorf("locks: embedded script %s: %w", file, err)
	}
	if s.ID() != forceUnlockID {
		return nil, fmt.Errorf("locks: embedded script %s is %s, want %s", file, s.ID(), forceUnlockID)
	}
	return s, nil
}
