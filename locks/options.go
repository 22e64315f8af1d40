package locks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Defaults and limits.
const (
	// DefaultTTL is a lease's length when WithTTL is not given.
	DefaultTTL = 30 * time.Second
	// MinTTL is the shortest lease: shorter ones would be born past their
	// local deadline, which keeps a margin for clock drift.
	MinTTL = 10 * time.Millisecond
	// DefaultWaiterTTL is how long a waiter stays queued without refreshing:
	// the longest a crashed waiter can hold up the queue.
	DefaultWaiterTTL = 5 * time.Second
	// DefaultRenewFraction is the share of the TTL after which the watchdog renews.
	DefaultRenewFraction = 1.0 / 3
	// minRenewEvery keeps a tiny watchdog fraction from renewing in a busy loop.
	minRenewEvery = time.Millisecond
	// DefaultReleaseTimeout bounds an Unlock when WithReleaseTimeout is not
	// given: long enough for a release on a loaded network, short enough
	// that a deferred Unlock does not hold up a request's goroutine for long.
	DefaultReleaseTimeout = 5 * time.Second
	// MinReleaseTimeout is the shortest WithReleaseTimeout: a round trip
	// to Redis needs at least about this much on a busy machine.
	MinReleaseTimeout = time.Millisecond
)

// Option configures a Client (as defaults for its locks) or one lock. An
// option that does not apply to a lock kind is an error when that lock is
// made with it; given to the Client, it is a default that applies only to
// the kinds it makes sense for (each option says which).
type Option func(*settings)

type settings struct {
	ttl            time.Duration
	watchdog       bool
	renewAt        float64
	reentrant      bool
	owner          string
	fair           bool
	waiterTTL      time.Duration
	label          string
	observer       func(Event)
	retryOnError   time.Duration
	preferReads    bool
	replicas       int
	replicaTimeout time.Duration
	clock          Clock
	maxTTL         time.Duration // the longest lease or Extend; 0: no bound (see WithMaxTTL)
	releaseTimeout time.Duration // how long an Unlock may take (see WithReleaseTimeout)
	keyPrefix      string        // before every key and channel (see WithKeyPrefix)

	given []string // per-lock options, by name, for the kind check
	errs  []error  // invalid option values, reported by validate
}

func defaults() settings {
	return settings{ttl: DefaultTTL, renewAt: DefaultRenewFraction, waiterTTL: DefaultWaiterTTL, retryOnError: 50 * time.Millisecond, releaseTimeout: DefaultReleaseTimeout}
}

func (s *settings) note(option string) { s.given = append(s.given, option) }

func (s *settings) invalid(format string, args ...any) {
	s.errs = append(s.errs, invalidf(format, args...))
}

// WithTTL sets the lease length (at least MinTTL, at most MaxTTL). The lock frees itself
// this long after the last acquisition or renewal if its holder dies.
// All kinds.
func WithTTL(ttl time.Duration) Option {
	return func(s *settings) {
		s.note("WithTTL")
		if ttl < MinTTL {
			s.invalid("WithTTL(%v): the TTL must be at least %v (the default is %v)", ttl, MinTTL, DefaultTTL)
			return
		}
		if ttl > MaxTTL {
			s.invalid("WithTTL(%v): the TTL must be at most MaxTTL (%v); renew a longer hold with WithWatchdog", ttl, MaxTTL)
			return
		}
		s.ttl = ttl
	}
}

// WithMaxTTL bounds every lease the Client's locks take or extend: a lock
// with a longer WithTTL, or an Extend for longer, is refused. On a quorum
// Client (NewQuorum) it is also the promise on which a restarted server is
// judged: the server counts towards a majority only once it has been up
// for longer than d, when every lease it granted before it restarted has
// ended (docs/failure-model.md), so every client of the same servers must
// be given the same bound or a smaller one. A quorum Client without it uses
// DefaultQuorumMaxTTL; other Clients have no bound. At least MinTTL.
// Client only.
func WithMaxTTL(d time.Duration) Option {
	return func(s *settings) {
		s.note("WithMaxTTL")
		if d < MinTTL {
			s.invalid("WithMaxTTL(%v): the bound must be at least %v, such as WithMaxTTL(time.Minute)", d, MinTTL)
			return
		}
		s.maxTTL = d
	}
}

// WithWatchdog renews each lease in the background while it is held, every
// fraction of its TTL: 0 means DefaultRenewFraction; otherwise it must be
// above 0 and leave a renewal time before the lease's local deadline (the
// TTL less a drift margin of 1% + 2ms): fraction × TTL plus TTL/20 (at
// least 5ms, the time a renewal may take) must not pass that deadline,
// which bounds the fraction by about 0.94 for TTLs of a second or more and
// by less for the shortest ones; a larger fraction is refused with the
// bound in the error. When a renewal cannot confirm ownership before the
// lease would expire, Lease.Done closes with ErrLockLost and renewal stops.
// Unlock stops the watchdog before releasing. All kinds.
func WithWatchdog(fraction float64) Option {
	return func(s *settings) {
		s.note("WithWatchdog")
		switch {
		case fraction == 0:
			s.renewAt = DefaultRenewFraction
		case fraction < 0 || fraction >= 1 || fraction != fraction:
			s.invalid("WithWatchdog(%v): the fraction must be above 0 and below 1, such as 1.0/3 (0 means the default)", fraction)
			return
		default:
			s.renewAt = fraction
		}
		s.watchdog = true
	}
}

// WithReleaseTimeout bounds how long an Unlock waits for its release (at
// least MinReleaseTimeout, at most MaxTTL; DefaultReleaseTimeout, 5s,
// without it). Unlock is cleanup: it runs after the caller's context ended
// more often than not (a deferred Unlock in a request handler), so it keeps
// that context's values (trace ids) but not its cancellation or deadline,
// and this timeout is its only bound. A release that gets no answer in time
// fails with ErrNotReleased (and ErrLockLost); the lock then frees itself
// when its lease runs out. A quorum's release sends to every server at once,
// each within its own per-server timeout, and a MultiLease releases its
// locks at once, so one timeout bounds those too. All kinds.
func WithReleaseTimeout(d time.Duration) Option {
	return func(s *settings) {
		s.note("WithReleaseTimeout")
		if d < MinReleaseTimeout || d > MaxTTL {
			s.invalid("WithReleaseTimeout(%v): the timeout must be at least %v and at most MaxTTL (%v), such as the default %v", d, MinReleaseTimeout, MaxTTL, DefaultReleaseTimeout)
			return
		}
		s.releaseTimeout = d
	}
}

// MaxKeyPrefixBytes is the longest WithKeyPrefix.
const MaxKeyPrefixBytes = 64

// WithKeyPrefix puts prefix before every key and channel of the Client's
// locks: the lock "orders:42" lives at "app:{orders:42}" (and
// "app:{orders:42}:queue" and so on), so a Redis ACL user limited to the
// key pattern ~app:* (and the channel pattern &app:*, for wake-ups) can
// use them. The hash tag is unchanged: a lock's keys still share one
// cluster slot, chosen by its name alone. Every Client of the same locks
// (and Resume of their leases, Inspect and ForceUnlock, redlua
// --key-prefix) must use the same prefix. The prefix is at most
// MaxKeyPrefixBytes, has no '{' or '}', and counts towards MaxNameBytes
// together with each name. Client only.
func WithKeyPrefix(prefix string) Option {
	return func(s *settings) {
		s.note("WithKeyPrefix")
		switch {
		case prefix == "":
			s.invalid("WithKeyPrefix(\"\"): the prefix is empty; pass one such as \"app:\", or leave the option out")
			return
		case len(prefix) > MaxKeyPrefixBytes:
			s.invalid("WithKeyPrefix(%s): the prefix is longer than MaxKeyPrefixBytes (%d); use a shorter one, such as \"app:\"", shortQuote(prefix), MaxKeyPrefixBytes)
			return
		case strings.ContainsAny(prefix, "{}"):
			s.invalid("WithKeyPrefix(%s): the prefix contains '{' or '}', which would change the keys' hash tag (each lock's keys share the slot of {name}); drop the braces", shortQuote(prefix))
			return
		}
		s.keyPrefix = prefix
	}
}

// WithReentrant lets the owner take the lock again while holding it, with a
// hold count, as Redisson's RLock does. The owner is the lock value's token
// (WithOwner sets it; otherwise each Mutex gets a random one), so every
// Lock on the same Mutex re-enters, and each Lease's Unlock drops one hold.
// Mutex and RWMutex.
func WithReentrant() Option {
	return func(s *settings) { s.note("WithReentrant"); s.reentrant = true }
}

// WithOwner sets the owner token explicitly, for reentrancy across Mutex
// values or processes that share an identity. It must be unique per owner,
// not empty, and without a tab. Without WithReentrant, the calls that share
// the token are still separate holders (of a Mutex, one at a time; of an
// RWMutex, one writer or many readers), each renewing and releasing only
// its own hold; the token is what Inspect and Lease.Owner report. At most
// MaxOwnerBytes. Mutex and RWMutex.
func WithOwner(token string) Option {
	return func(s *settings) {
		s.note("WithOwner")
		if token == "" {
			s.invalid("WithOwner(\"\"): the owner token is empty; pass a token unique to the owner, or leave WithOwner out for a random one")
			return
		}
		if len(token) > MaxOwnerBytes {
			s.invalid("WithOwner(%s): the owner token is longer than MaxOwnerBytes (%d); use a shorter token", shortQuote(token), MaxOwnerBytes)
			return
		}
		if strings.Contains(token, callSeparator) {
			s.invalid("WithOwner(%s): the owner token contains a tab, which separates the fields of the lock's record on the server (and a token from a call's id); use a token without tabs, such as one with spaces in their place", shortQuote(token))
			return
		}
		s.owner = token
	}
}

// WithFair grants the lock strictly in arrival order: a newcomer never takes
// a free lock ahead of a live waiter. waiterTTL bounds how long a waiter
// that died while queued holds up the queue (0 means DefaultWaiterTTL; at
// least 10ms and at most MaxWaiterTTL otherwise). Without WithFair, waiters queue the same way and a
// release hands the lock to the oldest one, but a newcomer may take a lock
// that happens to be free. Mutex only.
func WithFair(waiterTTL time.Duration) Option {
	return func(s *settings) {
		s.note("WithFair")
		switch {
		case waiterTTL == 0:
		case waiterTTL < 10*time.Millisecond:
			s.invalid("WithFair(%v): the waiter TTL must be at least 10ms (0 means the default, %v)", waiterTTL, DefaultWaiterTTL)
			return
		case waiterTTL > MaxWaiterTTL:
			s.invalid("WithFair(%v): the waiter TTL must be at most MaxWaiterTTL (%v)", waiterTTL, MaxWaiterTTL)
			return
		default:
			s.waiterTTL = waiterTTL
		}
		s.fair = true
	}
}

// WithWaiterTTL sets how long a waiter stays queued without refreshing, in
// every mode (at least 10ms, at most MaxWaiterTTL; default DefaultWaiterTTL). Mutex, RWMutex (a
// waiting writer), Semaphore and MultiLock (it queues for a lock it waits
// for); not a quorum Mutex, whose waiters do not queue.
func WithWaiterTTL(waiterTTL time.Duration) Option {
	return func(s *settings) {
		s.note("WithWaiterTTL")
		if waiterTTL < 10*time.Millisecond {
			s.invalid("WithWaiterTTL(%v): the waiter TTL must be at least 10ms", waiterTTL)
			return
		}
		if waiterTTL > MaxWaiterTTL {
			s.invalid("WithWaiterTTL(%v): the waiter TTL must be at most MaxWaiterTTL (%v)", waiterTTL, MaxWaiterTTL)
			return
		}
		s.waiterTTL = waiterTTL
	}
}

// WithReaderPreference lets new readers in while a writer waits. The
// default is writer preference: a waiting writer holds new readers back, so
// a steady stream of readers cannot starve it. RWMutex only.
func WithReaderPreference() Option {
	return func(s *settings) { s.note("WithReaderPreference"); s.preferReads = true }
}

// WithLabel adds a label to the holder metadata that Inspect reports, next
// to the host name and process id; at most MaxLabelBytes. All kinds.
func WithLabel(label string) Option {
	return func(s *settings) {
		s.note("WithLabel")
		if len(label) > MaxLabelBytes {
			s.invalid("WithLabel(%s): the label is longer than MaxLabelBytes (%d); use a shorter label", shortQuote(label), MaxLabelBytes)
			return
		}
		s.label = label
	}
}

// WithObserver calls fn for every acquisition, wait, contention, renewal
// failure and lost lease, for metrics and alerts (for example on a lock
// whose failed attempts keep growing). fn must be quick and must not block.
// All kinds.
//
// Deprecated: use WithHook, which adds to other hooks instead of replacing them.
func WithObserver(fn func(Event)) Option {
	return func(s *settings) {
		s.note("WithObserver")
		if fn == nil {
			s.invalid("WithObserver(nil): pass a function, or leave the option out")
			return
		}
		s.observer = fn
	}
}

// WithReplicas makes every acquisition and every renewal wait until n
// replicas acknowledged its write (WAIT n timeout, sent in the same
// pipeline as the script, on the same connection), so a failover to one of
// them keeps the lock. When fewer replicas confirm within timeout, an
// acquisition is undone and fails with ErrNotReplicated, and a renewal
// counts as failed (the watchdog retries until the lease would end). It
// narrows the failover window; it is not consensus (docs/failure-model.md).
// Needs a go-redis backend (locks.New). Mutex, RWMutex, Semaphore and
// MultiLock.
func WithReplicas(n int, timeout time.Duration) Option {
	return func(s *settings) {
		s.note("WithReplicas")
		if n < 1 || timeout <= 0 {
			s.invalid("WithReplicas(%d, %v): give at least 1 replica and a positive timeout, such as WithReplicas(1, 50*time.Millisecond)", n, timeout)
			return
		}
		s.replicas, s.replicaTimeout = n, timeout
	}
}

// WithClock makes leases measure their deadlines and run their watchdog on
// clock instead of the wall clock: pass a simulate.VirtualClock with a
// simulate.Server backend, and lease expiry and renewal follow virtual
// time. Client only.
func WithClock(clock Clock) Option {
	return func(s *settings) {
		s.note("WithClock")
		if clock == nil {
			s.invalid("WithClock(nil): pass a clock, or leave the option out for the wall clock")
			return
		}
		s.clock = clock
	}
}

// lockKind names what a set of options is for, in errors.
type lockKind string

const (
	kindClient  lockKind = "Client"
	kindMutexK  lockKind = "Mutex"
	kindRWK     lockKind = "RWMutex"
	kindSemK    lockKind = "Semaphore"
	kindMultiK  lockKind = "MultiLock"
	kindQuorumK lockKind = "quorum Mutex"
)

// notFor lists, per kind, the options that make no sense for it.
var notFor = map[lockKind][]string{
	kindMutexK:  {"WithReaderPreference", "WithClock", "WithMaxTTL", "WithKeyPrefix"},
	kindRWK:     {"WithFair", "WithClock", "WithMaxTTL", "WithKeyPrefix"},
	kindSemK:    {"WithFair", "WithReentrant", "WithOwner", "WithReaderPreference", "WithClock", "WithMaxTTL", "WithKeyPrefix"},
	kindMultiK:  {"WithFair", "WithReentrant", "WithOwner", "WithReaderPreference", "WithClock", "WithMaxTTL", "WithKeyPrefix"},
	kindQuorumK: {"WithFair", "WithReaderPreference", "WithWaiterTTL", "WithReplicas", "WithClock", "WithMaxTTL", "WithKeyPrefix"},
}

// apply builds the settings of one lock of kind from the Client's defaults
// and the lock's own options, and validates them.
func (c *Client) apply(kind lockKind, name string, opts []Option) (settings, error) {
	s := c.defaults
	s.given, s.errs = nil, nil
	for i, o := range opts {
		if o == nil {
			return s, fmt.Errorf("locks: %s %s: option %d is nil; pass options such as locks.WithTTL(time.Minute)", kind, name, i+1)
		}
		o(&s)
	}
	if err := s.validate(kind, name); err != nil {
		return s, err
	}
	if s.replicas > 0 {
		if err := c.canReplicate(); err != nil {
			return s, fmt.Errorf("locks: %s %s: %w", kind, name, err)
		}
	}
	// Client-wide defaults that do not apply to this kind are dropped here,
	// where the kind is known.
	switch kind {
	case kindRWK, kindSemK, kindMultiK, kindQuorumK:
		s.fair = false
	}
	switch kind {
	case kindSemK, kindMultiK:
		s.reentrant, s.owner = false, ""
	}
	return s, nil
}

func (s *settings) validate(kind lockKind, name string) error {
	if len(s.errs) == 0 && len(s.given) == 0 && !s.watchdog {
		return nil // the common case, kept free of work: a Mutex per request
	}
	what := string(kind)
	if name != "" {
		what += " " + name
	}
	if len(s.errs) > 0 {
		return fmt.Errorf("locks: %s: %w", what, errors.Join(s.errs...))
	}
	for _, bad := range notFor[kind] {
		for _, g := range s.given {
			if g == bad {
				return fmt.Errorf("locks: %s: %s does not apply to a %s; leave it out%s", what, bad, kind, hint(bad, kind))
			}
		}
	}
	if every := time.Duration(float64(s.ttl) * s.renewAt); s.watchdog && every < minRenewEvery {
		return fmt.Errorf("locks: %s: the watchdog would renew every %v (TTL %v × %v); use a larger fraction or TTL", what, every, s.ttl, s.renewAt)
	}
	if bound := maxRenewFraction(s.ttl); s.watchdog && s.renewAt > bound {
		return fmt.Errorf("locks: %s: WithWatchdog(%v) leaves no time to renew: with TTL %v the lease ends locally after %v (the TTL less a drift margin of %v) and a renewal needs up to %v, so the fraction must be at most %.4f; use a smaller fraction, such as the default %.4f, or a longer TTL",
			what, s.renewAt, s.ttl, s.ttl-driftMargin(s.ttl), driftMargin(s.ttl), renewalBudget(s.ttl), bound, DefaultRenewFraction)
	}
	if s.maxTTL > 0 && s.ttl > s.maxTTL {
		return fmt.Errorf("locks: %s: the TTL %v is longer than the Client's longest lease, WithMaxTTL(%v); use a shorter TTL or give the Client a larger WithMaxTTL", what, s.ttl, s.maxTTL)
	}
	return nil
}

// renewalBudget is the time the watchdog leaves one renewal: the per-server
// timeout of a quorum's calls (nodeTimeout), which is also ample for a
// round trip to one server.
func renewalBudget(ttl time.Duration) time.Duration { return nodeTimeout(ttl) }

// maxRenewFraction is the largest WithWatchdog fraction that leaves a
// renewal its budget before the lease's local deadline. The watchdog
// renews fraction × TTL after the lease was granted (or last renewed),
// and the lease ends locally TTL − driftMargin(TTL) after that moment, so
// fraction × TTL + renewalBudget(TTL) ≤ TTL − driftMargin(TTL). For a TTL
// of a second or more that is about 0.94 (0.9399 at the default TTL); for
// the shortest TTLs it is lower (0.35 at 11ms).
func maxRenewFraction(ttl time.Duration) float64 {
	return float64(ttl-driftMargin(ttl)-renewalBudget(ttl)) / float64(ttl)
}

func hint(option string, kind lockKind) string {
	switch {
	case option == "WithFair" && kind == kindRWK:
		return " (an RWMutex has writer preference instead)"
	case option == "WithClock":
		return " (give it to locks.New or NewWithBackend)"
	case option == "WithMaxTTL", option == "WithKeyPrefix":
		return " (give it to the Client: locks.New, NewQuorum)"
	case option == "WithReplicas" && kind == kindQuorumK:
		return " (a quorum of independent primaries replaces replicas)"
	case option == "WithWaiterTTL" && kind == kindQuorumK:
		return " (waiters on a quorum do not queue)"
	}
	return ""
}

// meta is the holder metadata that Inspect reports. JSON escaping keeps
// labels with quotes, control bytes or invalid UTF-8 readable.
func (s *settings) meta(host string) string {
	b, _ := json.Marshal(struct {
		Host  string `json:"host"`
		PID   int    `json:"pid"`
		Label string `json:"label"`
	}{host, os.Getpid(), s.label}) // cannot fail: strings and an int
	return string(b)
}
