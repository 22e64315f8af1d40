package locks

import "errors"

var (
	// ErrNotAcquired is returned by TryLock when another owner holds the lock.
	ErrNotAcquired = errors.New("locks: lock is held by another owner")
	// ErrNotHeld is returned when unlocking or extending a lease that this
	// process does not hold: already unlocked, or a resumed lease whose
	// owner never held the lock.
	ErrNotHeld = errors.New("locks: lock not held")
	// ErrLockLost reports that a lease we held ended without our Unlock: it
	// expired, or another owner holds the lock now.
	ErrLockLost = errors.New("locks: lock lost")
)
