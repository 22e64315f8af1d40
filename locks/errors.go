package locks

import (
	"errors"
	"fmt"
	"strings"
)

// The sentinel errors carry no "locks:" prefix: they are always wrapped with
// the lock's name ("locks: orders:42: lock is held by another owner").
var (
	// ErrNotAcquired is returned by TryLock when another owner holds the lock.
	ErrNotAcquired = errors.New("lock is held by another owner")
	// ErrNotHeld is returned when unlocking or extending a lease that this
	// process does not hold: already unlocked, or a resumed lease whose
	// owner never held the lock.
	ErrNotHeld = errors.New("lock not held")
	// ErrLockLost reports that a lease we held ended without our Unlock: it
	// expired, another owner holds the lock now, its local deadline passed
	// (for example while the process was paused), or Unlock failed.
	ErrLockLost = errors.New("lock lost")
	// ErrNotReleased reports that an Unlock could not release the lock: the
	// release got no answer within WithReleaseTimeout, or its connection
	// failed. It always comes together with ErrLockLost (errors.Is matches
	// both), as ErrLockLost's doc promises for a failed Unlock: the holder
	// can no longer be sure it owns the lock. The lock frees itself when
	// its lease runs out, or at once when a later Unlock of the same lease
	// gets through. Test for it before ErrLockLost to tell a release that
	// failed from a lease that had already ended on the server.
	ErrNotReleased = errors.New("lock not released")
	// ErrForced reports that a forced unlock (Client.ForceUnlock, `redlua
	// unlock --force`) revoked the lease. It always comes together with
	// ErrLockLost (errors.Is matches both): the holder must stop using
	// what the lock guards, and then call Unlock, which tells the server
	// that it stopped, so that the lock goes to the next waiter before the
	// grace period ends.
	ErrForced = errors.New("forced unlock")
	// ErrNotReplicated reports that fewer replicas than WithReplicas asks for
	// acknowledged an acquisition in time; the acquisition was undone.
	ErrNotReplicated = errors.New("not acknowledged by enough replicas")
	// ErrWrongKind reports that another kind of lock (a Mutex, RWMutex or
	// Semaphore) holds the name: kinds must not share a name.
	ErrWrongKind = errors.New("the name is held by another kind of lock")
	// ErrNoQuorum reports that a quorum Mutex could not take a majority of
	// its servers within the lease's validity.
	ErrNoQuorum = errors.New("no quorum")
	// ErrInvalidArgument reports a value the client refuses before any
	// round trip: an empty or over-long name, a count, TTL or size outside
	// its limit (see MaxNameBytes and the other limits), an invalid option,
	// or a string Resume cannot take as a lease. The error's text names the
	// value and the fix.
	ErrInvalidArgument = errors.New("invalid argument")
)

// invalidArg is a refusal of a caller's value: its text is the refusal's
// own, and it matches ErrInvalidArgument.
type invalidArg struct{ err error }

func (e invalidArg) Error() string        { return e.err.Error() }
func (e invalidArg) Unwrap() error        { return e.err }
func (e invalidArg) Is(target error) bool { return target == ErrInvalidArgument }

// invalidf formats a refusal of a caller's value (see invalidArg).
func invalidf(format string, args ...any) error {
	return invalidArg{fmt.Errorf(format, args...)}
}

// unprefixed is err nested in a message that already names the lock: its
// text without the repeated "locks: <name>: ", its chain unchanged.
type unprefixed struct {
	err    error
	prefix string
}

func (u unprefixed) Error() string { return strings.TrimPrefix(u.err.Error(), u.prefix) }
func (u unprefixed) Unwrap() error { return u.err }
