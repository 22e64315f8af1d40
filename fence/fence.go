package fence

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Holder is what a fenced write carries: a lock's name, the fencing token of
// one acquisition, and the owner token of its holder. A *locks.Lease
// satisfies it; so does any type a test or another lock service builds.
type Holder interface {
	Name() string
	Token() int64
	Owner() string
}

// lossReporter is what a Holder may add: the lease's own view of whether it
// still holds (locks.Lease.Err). The SQL helpers ask it before COMMIT, so a
// holder that was paused past its lease rolls back instead of committing.
type lossReporter interface{ Err() error }

// ErrStale is wrapped by every refusal of a write whose token is not above
// the highest the resource accepted for the name (nor equal to it from the
// same owner). The error is a *StaleError, which names both tokens.
var ErrStale = errors.New("fence: stale token")

// ErrTokenAhead is wrapped by a refusal of a token further ahead of the
// resource's clock than WithMaxAhead allows: accepting it would leave a
// fence no holder could pass until the clock caught up.
var ErrTokenAhead = errors.New("fence: token ahead of the resource's clock")

// ErrInvalidArgument is wrapped by every error about a caller's argument
// (an empty name, a nil database, a key outside the fence's slot).
var ErrInvalidArgument = errors.New("fence: invalid argument")

// ErrLeaseLost is wrapped when a fenced SQL transaction rolled back
// instead of committing because its Holder reported, right before COMMIT,
// that its lease had ended (a holder with an Err method, as locks.Lease).
var ErrLeaseLost = errors.New("fence: the lease ended before commit")

// ErrBusy is wrapped when a fenced SQL transaction failed with lock
// timeouts, deadlocks or serialization failures on every one of its tries
// (WithRetries): another transaction kept the fence row.
var ErrBusy = errors.New("fence: the fence row stayed busy")

// Mark is the highest token a resource accepted for a name, and the owner
// whose write it was. The zero Mark accepts every token above zero.
type Mark struct {
	Token int64
	Owner string
}

// StaleError is the refusal of a stale write. errors.Is(err, ErrStale)
// holds for it.
type StaleError struct {
	Name    string // the lock name
	Token   int64  // the refused write's token
	Owner   string // the refused write's owner
	Highest Mark   // what the resource had accepted
}

// Error names the lock, the refused token and the highest accepted.
func (e *StaleError) Error() string {
	why := "below the highest accepted"
	if e.Token == e.Highest.Token {
		why = "equal to the highest accepted, which another owner holds"
	}
	return fmt.Sprintf("fence: %q: token %d is %s (%d): a newer holder took the lock; stop writing and lock again",
		e.Name, e.Token, why, e.Highest.Token)
}

// Is reports whether target is ErrStale.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// Admit applies the fencing rule to a write by h against highest, the
// mark the resource holds for h.Name(): nil when h.Token() is above
// highest.Token, or equal to it from the same owner (the same lease
// writing again, a reentrant hold, a resumed lease); otherwise a
// *StaleError. A resource of your own calls it with its stored mark and,
// when it returns nil, stores Mark{h.Token(), h.Owner()} with the write.
func Admit(h Holder, highest Mark) error {
	t := h.Token()
	if t > highest.Token || (t == highest.Token && h.Owner() == highest.Owner) {
		return nil
	}
	return &StaleError{Name: h.Name(), Token: t, Owner: h.Owner(), Highest: highest}
}

// checkHolder refuses a nil holder and one whose name, token or owner the
// fence cannot store.
func checkHolder(h Holder) error {
	if h == nil {
		return fmt.Errorf("%w: the holder is nil; pass the lease (a *locks.Lease) of the lock that guards the write", ErrInvalidArgument)
	}
	if h.Name() == "" {
		return fmt.Errorf("%w: the holder's lock name is empty", ErrInvalidArgument)
	}
	if h.Token() <= 0 {
		return fmt.Errorf("%w: %q: token %d is not positive; pass a lease's Token (server-clock microseconds)", ErrInvalidArgument, h.Name(), h.Token())
	}
	if len(h.Name()) > MaxNameBytes || len(h.Owner()) > MaxOwnerBytes {
		return fmt.Errorf("%w: a lock name and an owner are at most %d bytes each (locks.MaxNameBytes, MaxOwnerBytes)", ErrInvalidArgument, MaxNameBytes)
	}
	return nil
}

// MaxNameBytes and MaxOwnerBytes are the longest name and owner a fence
// stores: the locks package's own limits (locks.MaxNameBytes, MaxOwnerBytes).
const (
	MaxNameBytes  = 1024
	MaxOwnerBytes = 1024
)

// aheadCheck refuses a token more than maxAhead after now (tokens are
// microseconds since the epoch). maxAhead 0 turns the check off.
func aheadCheck(h Holder, maxAhead time.Duration, now time.Time) error {
	if maxAhead <= 0 {
		return nil
	}
	limit := now.UnixMicro() + maxAhead.Microseconds()
	if h.Token() > limit {
		return fmt.Errorf("%w: %q: token %d is %v ahead of this resource's clock, more than the %v allowed (WithMaxAhead); check the lock server's clock",
			ErrTokenAhead, h.Name(), h.Token(), time.Duration(h.Token()-now.UnixMicro())*time.Microsecond, maxAhead)
	}
	return nil
}

// sortedHolders returns hs sorted by name (the order fence rows are
// taken in, so two transactions over overlapping names cannot deadlock),
// refusing a name given twice.
func sortedHolders(hs []Holder) ([]Holder, error) {
	if len(hs) == 0 {
		return nil, fmt.Errorf("%w: no holder; pass at least one lease", ErrInvalidArgument)
	}
	out := make([]Holder, len(hs))
	copy(out, hs)
	for _, h := range out {
		if err := checkHolder(h); err != nil {
			return nil, err
		}
	}
	// Insertion sort: a MultiLock has at most 100 names.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && strings.Compare(out[j-1].Name(), out[j].Name()) > 0; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	for i := 1; i < len(out); i++ {
		if out[i].Name() == out[i-1].Name() {
			return nil, fmt.Errorf("%w: the lock name %q is given twice; pass one holder per name", ErrInvalidArgument, out[i].Name())
		}
	}
	return out, nil
}
