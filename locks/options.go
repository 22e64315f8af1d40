package locks

import (
	"fmt"
	"os"
	"time"
)

// Defaults.
const (
	// DefaultTTL is a lease's length when WithTTL is not given.
	DefaultTTL = 30 * time.Second
	// DefaultWaiterTTL is how long a fair-mode waiter stays queued without
	// refreshing: the longest a crashed waiter can hold up the queue.
	DefaultWaiterTTL = 5 * time.Second
	// DefaultRenewFraction is the share of the TTL after which the watchdog renews.
	DefaultRenewFraction = 1.0 / 3
)

// Option configures a Client (as defaults for its locks) or one Mutex.
type Option func(*settings)

type settings struct {
	ttl          time.Duration
	watchdog     bool
	renewAt      float64
	reentrant    bool
	owner        string
	fair         bool
	waiterTTL    time.Duration
	label        string
	observer     func(Event)
	retryOnError time.Duration
	preferReads  bool
}

func defaults() settings {
	return settings{ttl: DefaultTTL, renewAt: DefaultRenewFraction, waiterTTL: DefaultWaiterTTL, retryOnError: 50 * time.Millisecond}
}

// WithTTL sets the lease length. The lock frees itself this long after the
// last acquisition or extension if its holder dies.
func WithTTL(ttl time.Duration) Option { return func(s *settings) { s.ttl = ttl } }

// WithWatchdog renews each lease in the background while it is held, every
// fraction of its TTL (0 means DefaultRenewFraction). When a renewal cannot
// confirm ownership before the lease would expire, Lease.Done closes with
// ErrLockLost and renewal stops. Unlock stops the watchdog before releasing.
func WithWatchdog(fraction float64) Option {
	return func(s *settings) {
		s.watchdog = true
		if fraction > 0 {
			s.renewAt = fraction
		}
	}
}

// WithReentrant lets the owner take the lock again while holding it, with a
// hold count, as Redisson's RLock does. The owner is the Mutex's token
// (WithOwner sets it; otherwise each Mutex gets a random one), so every
// Lock on the same Mutex re-enters, and each Lease's Unlock drops one hold.
func WithReentrant() Option { return func(s *settings) { s.reentrant = true } }

// WithOwner sets the owner token explicitly, for reentrancy across Mutex
// values or processes that share an identity. It must be unique per owner.
func WithOwner(token string) Option { return func(s *settings) { s.owner = token } }

// WithFair grants the lock in arrival order. waiterTTL bounds how long a
// waiter that died while queued holds up the queue (0 means DefaultWaiterTTL).
func WithFair(waiterTTL time.Duration) Option {
	return func(s *settings) {
		s.fair = true
		if waiterTTL > 0 {
			s.waiterTTL = waiterTTL
		}
	}
}

// WithReaderPreference lets new readers in while a writer waits (RWMutex).
// The default is writer preference: a waiting writer holds new readers
// back, so a steady stream of readers cannot starve it.
func WithReaderPreference() Option { return func(s *settings) { s.preferReads = true } }

// WithLabel adds a label to the holder metadata that Inspect reports, next
// to the host name and process id.
func WithLabel(label string) Option { return func(s *settings) { s.label = label } }

// WithObserver calls fn for every acquisition, wait, contention, renewal
// failure and lost lease, for metrics and alerts (for example on a lock
// whose failed attempts keep growing). fn must be quick and must not block.
func WithObserver(fn func(Event)) Option { return func(s *settings) { s.observer = fn } }

func (s *settings) validate(name string) error {
	switch {
	case s.ttl < time.Millisecond:
		return fmt.Errorf("locks: %s: TTL %v is too short; use WithTTL with at least 1ms (the default is %v)", name, s.ttl, DefaultTTL)
	case s.renewAt <= 0 || s.renewAt >= 1:
		return fmt.Errorf("locks: %s: watchdog fraction %v must be between 0 and 1, such as 1.0/3", name, s.renewAt)
	case s.fair && s.waiterTTL < 10*time.Millisecond:
		return fmt.Errorf("locks: %s: waiter TTL %v is too short; use at least 10ms", name, s.waiterTTL)
	}
	return nil
}

func (s *settings) meta(host string) string {
	return fmt.Sprintf(`{"host":%q,"pid":%d,"label":%q}`, host, os.Getpid(), s.label)
}
