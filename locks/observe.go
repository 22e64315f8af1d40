package locks

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	EventAcquired    EventKind = iota + 1 // a lease was taken (Wait says how long it took)
	EventContended                        // an attempt found the lock held by another owner
	EventWaitFailed                       // Lock gave up (Err says why: context, backend error)
	EventRenewFailed                      // a watchdog renewal failed; it will retry until the lease would expire
	EventLost                             // a lease was lost (expired or taken) before Unlock
	EventReleased                         // a lease was released by Unlock
)

// String returns the kind's name as logs and metrics show it, such as
// "acquired" or "lost".
func (k EventKind) String() string {
	switch k {
	case EventAcquired:
		return "acquired"
	case EventContended:
		return "contended"
	case EventWaitFailed:
		return "wait-failed"
	case EventRenewFailed:
		return "renew-failed"
	case EventLost:
		return "lost"
	case EventReleased:
		return "released"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing that happened to a lock, for hooks.
type Event struct {
	Kind  EventKind
	Name  string        // the lock's name
	Owner string        // the owner token
	Token int64         // the fencing token, when known
	Wait  time.Duration // for EventAcquired and EventWaitFailed: time spent in Lock
	Err   error         // for failures
	// Position is, for the EventContended of a Mutex Lock that queued, its
	// place in the lock's queue when it queued (1: next in line), as the
	// server counted it; 0 when the attempt did not queue (TryLock, the
	// other kinds, a quorum). Waiters ahead of it whose waiter lease runs
	// out are skipped, so it is an upper bound of the turns it waits for.
	Position int64
	// Context is the context of the call that the event ends: Lock,
	// TryLock, RLock, TryRLock, Acquire or TryAcquire for EventAcquired and
	// EventWaitFailed, Unlock for EventReleased; it carries the caller's
	// trace, so a hook can record the call as a span in it (the otel
	// module's Tracing does). nil for the events no call ends: contention,
	// renewal failures, lost leases.
	Context context.Context
	// Start is when the call that Context belongs to began (zero without
	// Context); Time is when the event happened. A span of the call runs
	// from Start to Time.
	Start, Time time.Time
}

// Stats are a Client's counters since it was created.
type Stats struct {
	Acquired     uint64 // leases taken
	Contended    uint64 // attempts that found the lock held by another owner
	WaitFailures uint64 // Lock calls that gave up
	RenewFailed  uint64 // watchdog renewals that failed
	Lost         uint64 // leases lost before Unlock
	Released     uint64 // leases released by Unlock
}

type counters struct {
	acquired, contended, waitFailures, renewFailed, lost, released atomic.Uint64
}

func (c *Client) emit(s *settings, e Event) {
	e.Owner = ownerToken(e.Owner)
	if s.observer == nil {
		c.count(e.Kind)
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	c.count(e.Kind)
	s.observer(e)
}

// emitCall emits e, the end of the call that began at start under ctx:
// the event carries both, for a hook that records the call as a span.
func (c *Client) emitCall(ctx context.Context, start time.Time, s *settings, e Event) {
	e.Context, e.Start = ctx, start
	c.emit(s, e)
}

// count adds an event of kind k to the Client's Stats.
func (c *Client) count(k EventKind) {
	switch k {
	case EventAcquired:
		c.counts.acquired.Add(1)
	case EventContended:
		c.counts.contended.Add(1)
	case EventWaitFailed:
		c.counts.waitFailures.Add(1)
	case EventRenewFailed:
		c.counts.renewFailed.Add(1)
	case EventLost:
		c.counts.lost.Add(1)
	case EventReleased:
		c.counts.released.Add(1)
	}
}

// WithHook calls fn for every acquisition, wait, contention, renewal
// failure, lost lease and release, for metrics and alerts (for example on a
// lock whose failed attempts keep growing). fn runs on the goroutine that
// saw the event and must be quick and must not block.
//
// Hooks add up: a hook given to a Mutex runs after the Client's, and
// WithLogger is a hook too. (WithObserver, the older name, replaces the
// hooks given before it.) evalsha.WithHook is the same idea for script calls.
func WithHook(fn func(Event)) Option {
	return func(s *settings) {
		s.note("WithHook")
		if fn == nil {
			s.invalid("WithHook(nil): pass a function, or leave the option out")
			return
		}
		if prev := s.observer; prev != nil {
			s.observer = func(e Event) { prev(e); fn(e) }
			return
		}
		s.observer = fn
	}
}

// DefaultSlowWait is how long a Lock may wait before WithLogger reports the
// wait at info level, unless LogSlowWaits says otherwise.
const DefaultSlowWait = time.Second

// LogOption configures WithLogger.
type LogOption func(*logConfig)

type logConfig struct{ slowWait time.Duration }

// LogSlowWaits sets the wait after which an acquisition (or a Lock that gave
// up) is logged at info level instead of debug. 0 logs every wait at info;
// a negative d is treated as 0.
func LogSlowWaits(d time.Duration) LogOption {
	return func(c *logConfig) { c.slowWait = max(d, 0) }
}

// WithLogger logs what happens to locks on l: lost leases and failed
// renewals at warn level, waits longer than DefaultSlowWait (see
// LogSlowWaits) at info, everything else at debug. Each record carries the
// lock's name, the event kind, the fencing token and, where there is one,
// the wait and the error. A nil l means slog.Default(). It is a hook
// (see WithHook), so it adds to other hooks rather than replacing them.
func WithLogger(l *slog.Logger, opts ...LogOption) Option {
	cfg := logConfig{slowWait: DefaultSlowWait}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if l == nil {
		l = slog.Default()
	}
	return WithHook(func(e Event) { logEvent(l, cfg, e) })
}

func logEvent(l *slog.Logger, cfg logConfig, e Event) {
	level, msg := slog.LevelDebug, ""
	switch e.Kind {
	case EventLost:
		level, msg = slog.LevelWarn, "lock lease lost"
	case EventRenewFailed:
		level, msg = slog.LevelWarn, "lock renewal failed; retrying until the lease would run out"
	case EventAcquired:
		msg = "lock acquired"
		if e.Wait > 0 && e.Wait >= cfg.slowWait {
			level, msg = slog.LevelInfo, "lock acquired after a slow wait"
		}
	case EventWaitFailed:
		msg = "lock wait gave up"
		if e.Wait >= cfg.slowWait {
			level = slog.LevelInfo
		}
	case EventContended:
		msg = "lock held by another owner"
	case EventReleased:
		msg = "lock released"
	default:
		msg = "lock event"
	}
	ctx := context.Background()
	if !l.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("lock", e.Name), slog.String("event", e.Kind.String())}
	if e.Token != 0 {
		attrs = append(attrs, slog.Int64("token", e.Token))
	}
	if e.Kind == EventAcquired || e.Kind == EventWaitFailed {
		attrs = append(attrs, slog.Duration("wait", e.Wait))
	}
	if e.Position > 0 {
		attrs = append(attrs, slog.Int64("position", e.Position))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.Any("err", e.Err))
	}
	l.LogAttrs(ctx, level, msg, attrs...)
}

// Stats returns the Client's counters.
func (c *Client) Stats() Stats {
	return Stats{
		Acquired: c.counts.acquired.Load(), Contended: c.counts.contended.Load(),
		WaitFailures: c.counts.waitFailures.Load(), RenewFailed: c.counts.renewFailed.Load(),
		Lost: c.counts.lost.Load(), Released: c.counts.released.Load(),
	}
}
